/**
 * The ingest function's logic, behind the Lambda `ingest` that the ingest queue triggers: an S3
 * event of an upload under `inbox/` (see shared/ingest/inbox.ts) starts or feeds a batch; a
 * continuation message `{kind: "continue", batchId}` carries it on. Each invocation works on one
 * batch as its only driver (a lease on the batch record): reads the manifest from its committed
 * position until a minute before the function's time is up, releases items up to the batch's
 * in-flight limit, refreshes the outputs when due, and, unless the batch is settled, hands over to a
 * continuation (at once while reading, else after a few seconds). Killed at any point, the message
 * comes back and the batch goes on from its last commit.
 *
 * Each continuation carries its place in the chain (`hop`). The function runs with Lambda's
 * recursive loop detection off (RecursiveLoop: Allow, a batch being one long chain), so a batch that
 * would continue past its budget (OPFLOW_INGEST_CONTINUATION_BUDGET, default 8,640: a day of
 * 10-second polls) is stopped loudly instead: an error naming the batch, the
 * `IngestContinuationBudgetExhausted` metric, and the message failed, so it ends in the ingest
 * dead-letter queue, whose alarm fires. `opflow batch redrive` (a new chain) takes it on again.
 */
import { setFlagsFromString } from 'node:v8';
import type { Logger } from '@aws-lambda-powertools/logger';
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import {
  type AwsClients,
  DynamoDbBatchStore,
  inboxMetadata,
  openS3Object,
  readS3Object,
  sendIngestMessage,
} from '../../backends/aws';
import type { Batch, BatchSource } from '../../engine/batch-store';
import { errorMessage } from '../../errors/error-message';
import { admitBatch } from '../../ingest/admission';
import { maxDocumentBytes } from '../../ingest/documents';
import { batchSettled } from '../../ingest/drive-batch';
import { classifyInboxKey, inboxOptions } from '../../ingest/inbox';
import {
  addDocument,
  checkIngestRequest,
  type IngestDeps,
  IngestRefused,
  type IngestSource,
  ingest,
  openBatch,
} from '../../ingest/ingest';
import { writeBatchOutputs } from '../../ingest/outputs';
import { decodeS3Key, readIngestMessage, type S3EventRecord } from './ingest-message';
import type { JobsRuntime } from './jobs-runtime';
import { engineLogger } from './observability';

/** Continuations one batch's chain may send before it is stopped (a day of 10-second polls). */
export const DEFAULT_CONTINUATION_BUDGET = 8_640;

/** A batch whose chain of continuations went past its budget: the message fails into the DLQ. */
export class ContinuationBudgetExhaustedError extends Error {
  override readonly name = 'ContinuationBudgetExhaustedError';
}

export interface IngestFunctionOptions {
  runtime: Pick<JobsRuntime, 'deps' | 'aws' | 'config' | 'observability'>;
  /** The S3 client the inbox is read with (the function's handler builds it; the runtime's report store shares it). */
  s3: AwsClients['s3'];
  /** The ingest queue (continuations go there). Default: OPFLOW_INGEST_QUEUE_URL. */
  queueUrl?: string | undefined;
  /** Stop reading this long before the function's deadline (default 60 s). */
  reserveMs?: number | undefined;
  /** Delay of a continuation once the source is read (default 10 s). */
  pollSeconds?: number | undefined;
  /** Continuations a batch's chain may send (default OPFLOW_INGEST_CONTINUATION_BUDGET, else 8,640). */
  continuationBudget?: number | undefined;
}

/** What every part of an invocation reads: the runtime, the inbox's S3 client, the batch store and the settings. */
interface IngestSetup {
  runtime: IngestFunctionOptions['runtime'];
  logger: Logger;
  s3: AwsClients['s3'];
  batches: DynamoDbBatchStore;
  queueUrl: string | undefined;
  reserveMs: number;
  pollSeconds: number;
  continuationBudget: number;
}

export function createIngestFunction(options: IngestFunctionOptions) {
  // Flat memory over a long manifest (as `opflow ingest` does, see shared/cli/commands/ingest.ts):
  // V8, sized for the function's 1 GB, lets short-lived garbage pile up before it collects.
  setFlagsFromString('--optimize-for-size');
  const setup = ingestSetup(options);
  const { runtime, logger } = setup;

  async function handle(event: SQSEvent, context: Context): Promise<SQSBatchResponse> {
    logger.addContext(context);
    const deps: IngestDeps = {
      engine: { ...runtime.deps, log: engineLogger(logger) },
      batches: setup.batches,
    };
    const failures: { itemIdentifier: string }[] = [];
    for (const record of event.Records) {
      try {
        const deadline = Date.now() + context.getRemainingTimeInMillis() - setup.reserveMs;
        await handleMessage(setup, deps, record.body, deadline);
      } catch (error) {
        logger.error(
          error instanceof ContinuationBudgetExhaustedError
            ? 'ingest continuation budget exhausted; the message goes to the dead-letter queue'
            : 'ingest failed; the message comes back',
          { error: errorMessage(error) },
        );
        failures.push({ itemIdentifier: record.messageId });
      }
    }
    return { batchItemFailures: failures };
  }

  return { handle, logger: logger as Logger };
}

/** The function's settings: given, else from its environment, else the defaults. */
function ingestSetup(options: IngestFunctionOptions): IngestSetup {
  const { runtime } = options;
  const budgetVariable = Number(process.env.OPFLOW_INGEST_CONTINUATION_BUDGET);
  return {
    runtime,
    logger: runtime.observability.logger,
    s3: options.s3,
    batches: new DynamoDbBatchStore({
      client: runtime.aws.clients.documents,
      tableName: runtime.config.tableName,
    }),
    queueUrl: options.queueUrl ?? process.env.OPFLOW_INGEST_QUEUE_URL,
    reserveMs: options.reserveMs ?? 60_000,
    pollSeconds: options.pollSeconds ?? 10,
    continuationBudget:
      options.continuationBudget ??
      (Number.isInteger(budgetVariable) && budgetVariable > 0 ? budgetVariable : DEFAULT_CONTINUATION_BUDGET),
  };
}

/** One ingest queue message: a continuation drives its batch on, an S3 event's uploads are taken, a malformed one dropped. */
async function handleMessage(
  setup: IngestSetup,
  deps: IngestDeps,
  body: unknown,
  deadline: number,
): Promise<void> {
  const { logger, continuationBudget } = setup;
  const message = readIngestMessage(body);
  if (message.kind === 'continue') {
    const hop = (message.hop ?? 0) + 1;
    if (hop > continuationBudget) {
      const { metrics } = setup.runtime.observability;
      metrics.addMetric('IngestContinuationBudgetExhausted', MetricUnit.Count, 1);
      metrics.publishStoredMetrics();
      throw new ContinuationBudgetExhaustedError(
        `batch ${message.batchId} sent ${continuationBudget} continuations without settling ` +
          '(OPFLOW_INGEST_CONTINUATION_BUDGET): stopped; look at its jobs, then `opflow batch redrive` it',
      );
    }
    await drive(setup, deps, message.batchId, deadline, hop);
  } else if (message.kind === 'uploads') {
    for (const entry of message.records) {
      const batchId = await uploaded(setup, deps, entry);
      if (batchId) await drive(setup, deps, batchId, deadline, 0);
    }
  } else if (message.kind === 'malformed') {
    // No retry can help it: dropped, with what is wrong.
    logger.error('not an ingest message; dropped', {
      reason: message.reason,
      body: typeof body === 'string' ? body.slice(0, 500) : undefined,
    });
  }
}

/** A batch's source as ingestion reads it: the manifest's bytes, or the documents of its folder. */
function sourceOf(s3: AwsClients['s3'], source: BatchSource): IngestSource {
  const match = /^s3:\/\/([^/]+)\/(.+)$/.exec(source.uri);
  if (!match) throw new Error(`not an S3 source: ${source.uri}`);
  const [, bucket, key] = match as unknown as [string, string, string];
  const folder = source.kind === 'document' ? key : key.slice(0, key.lastIndexOf('/') + 1);
  return {
    source,
    openBytes:
      source.kind === 'jsonl' || source.kind === 'csv' ? openS3Object(s3, { bucket, key }) : undefined,
    readDocument: (relative) => readS3Object(s3, { bucket, key: `${folder}${relative}` }, maxDocumentBytes),
  };
}

/**
 * One record of an S3 event: the upload it names is taken (see `arrived`), or left alone with a
 * line saying why when no retry could help (not an object of the report bucket, a key not encoded
 * right, an object gone since, metadata or names the inbox refuses).
 */
async function uploaded(
  setup: IngestSetup,
  deps: IngestDeps,
  entry: S3EventRecord,
): Promise<string | undefined> {
  const { logger, runtime } = setup;
  if (!entry.eventName.startsWith('ObjectCreated')) return undefined;
  const key = decodeS3Key(entry.s3.object.key);
  const bucket = entry.s3.bucket.name;
  const leftAlone = (reason: string, shownKey = key) =>
    logger.error('inbox object left alone', { bucket, key: (shownKey ?? '').slice(0, 1100), reason });
  if (key === undefined)
    return void leftAlone('the S3 event key is not a URL-encoded S3 key', entry.s3.object.key);
  if (bucket !== runtime.config.bucketName)
    return void leftAlone(`bucket ${bucket} is not the report bucket (${runtime.config.bucketName})`);
  try {
    return await arrived(setup, deps, bucket, key, entry.s3.object.eTag);
  } catch (error) {
    if (!(error instanceof IngestRefused)) throw error;
    return void leftAlone(error.message);
  }
}

/** An upload: a manifest opens (or reopens) its batch; a document joins its batch. */
async function arrived(
  setup: IngestSetup,
  deps: IngestDeps,
  bucket: string,
  key: string,
  etag: string | undefined,
): Promise<string | undefined> {
  const { logger, s3 } = setup;
  const metadata = await inboxMetadata(s3, { bucket, key });
  if (!metadata) {
    logger.info('inbox object no longer in the bucket; nothing to ingest', { key: key.slice(0, 1100) });
    return undefined;
  }
  const entry = classifyInboxKey(key, metadata);
  if (entry.kind === 'ignored') {
    logger.info('inbox object left alone', { key, reason: entry.reason });
    return undefined;
  }
  if (!deps.engine.workflows.has(entry.workflow)) {
    logger.error('inbox object names an unknown workflow', { key, workflow: entry.workflow });
    return undefined;
  }
  let inbox: ReturnType<typeof inboxOptions>;
  try {
    inbox = inboxOptions(metadata, entry);
    checkIngestRequest(
      { tenant: inbox.tenant, batchName: entry.batchName },
      { tenant: 'the tenant prefix', batchName: 'opflow-batch metadata (or the batch folder)' },
    );
  } catch (error) {
    // The upload's metadata or names, wrong for good: said, not retried.
    throw error instanceof IngestRefused ? error : new IngestRefused(errorMessage(error));
  }
  const { tenant, options } = inbox;
  if (entry.kind === 'manifest') {
    const source: BatchSource = { kind: entry.sourceKind, uri: `s3://${bucket}/${key}`, revision: etag };
    const { batch, state } = await openBatch(deps, source, {
      tenant,
      workflow: entry.workflow,
      options,
      batchName: entry.batchName,
    });
    logger.info('manifest arrived', { key, batchId: batch.id, state });
    return batch.id;
  }
  const source: BatchSource = { kind: 'document', uri: `s3://${bucket}/${entry.folder}` };
  const batch = await addDocument(
    deps,
    sourceOf(s3, source),
    { tenant, workflow: entry.workflow, options, batchName: entry.batchName },
    entry.documentId,
  );
  return batch.id;
}

/** Works on the batch as its only driver until the deadline, then hands over. */
async function drive(
  setup: IngestSetup,
  deps: IngestDeps,
  batchId: string,
  deadline: number,
  hop: number,
): Promise<void> {
  const { batches, queueUrl, pollSeconds } = setup;
  const claimed = await lease(batches, batchId, deadline + setup.reserveMs);
  if (!claimed) return; // Another invocation drives it, and hands over itself.
  let outputs = { at: claimed.outputsAt, cost: claimed.outputsCostMs };
  try {
    let batch: Batch = claimed;
    if (!batch.cursor.done && batch.source.kind !== 'document') {
      // Items start while reading goes on, but admission (which reads every in-flight job) runs
      // at most once a second, not after each chunk of 49.
      let admittedAt = 0;
      batch = await ingest(deps, sourceOf(setup.s3, batch.source), batchId, {
        deadline,
        onChunk: async () => {
          if (Date.now() - admittedAt < 1_000) return;
          await admitBatch(deps, batchId);
          admittedAt = Date.now();
        },
      });
    }
    batch = (await admitBatch(deps, batchId))?.batch ?? batch;
    const due =
      outputs.at === undefined || Date.now() - outputs.at > Math.max(5_000, (outputs.cost ?? 0) * 10);
    if (due || batchSettled(batch)) {
      // Its cost on the monotonic clock: what the outputs took, whatever the wall clock did.
      const started = performance.now();
      await writeBatchOutputs(deps, batch);
      outputs = { at: Date.now(), cost: Math.round(performance.now() - started) };
    }
  } finally {
    const released = await release(batches, batchId, outputs);
    if (released && !batchSettled(released) && queueUrl) {
      await sendIngestMessage(
        setup.runtime.aws.clients.sqs,
        queueUrl,
        { kind: 'continue', batchId, hop },
        released.cursor.done ? pollSeconds : 0,
      );
    }
  }
}

async function lease(
  batches: DynamoDbBatchStore,
  batchId: string,
  until: number,
): Promise<Batch | undefined> {
  for (let tries = 0; tries < 10; tries++) {
    const batch = await batches.get(batchId);
    if (!batch) return undefined;
    if (batch.driverUntil !== undefined && batch.driverUntil > Date.now()) return undefined;
    const next = { ...batch, version: batch.version + 1, driverUntil: until };
    if (await batches.commit(next, batch.version)) return next;
  }
  return undefined;
}

async function release(
  batches: DynamoDbBatchStore,
  batchId: string,
  outputs: { at?: number | undefined; cost?: number | undefined },
): Promise<Batch | undefined> {
  for (let tries = 0; tries < 20; tries++) {
    const batch = await batches.get(batchId);
    if (!batch) return undefined;
    const next = {
      ...batch,
      version: batch.version + 1,
      driverUntil: undefined,
      outputsAt: outputs.at,
      outputsCostMs: outputs.cost,
    };
    if (await batches.commit(next, batch.version)) return next;
  }
  return batches.get(batchId);
}
