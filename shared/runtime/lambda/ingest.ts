/**
 * The ingest function's logic, behind the Lambda `ingest`. The report bucket's event notification
 * invokes it asynchronously for each upload under `inbox/` (see shared/ingest/inbox.ts); it invokes
 * itself, and the sweeper's minute pass invokes it, with a continuation `{kind: "continue"}`. No SQS
 * queue and no poll: what there is to do lives in the job table (the ingest schedule,
 * shared/backends/aws/dynamodb-ingest-schedule.ts), each upload and running batch an entry with the
 * time it is due.
 *
 * An invocation first records the uploads its event names (idempotent per object version), then
 * works only if it holds one of the driver slots (OPFLOW_INGEST_DRIVERS, default 2: what the SQS
 * event source's maximum concurrency gave); otherwise it ends, and a driver or the next minute's
 * pass takes the uploads. A driver takes due entries one at a time (a conditional write, so two
 * deliveries of one event meet one entry) until a minute before its time is up: an upload opens or
 * feeds its batch; a batch is read from its committed position, its items released up to its
 * in-flight limit, its outputs refreshed when due. A batch still reading is due again at once; one
 * whose jobs run is woken as they end (the step worker marks it due and invokes the function,
 * ./ingest-wake.ts), else due `pollSeconds` later and taken by the next pass (the sweeper's, each
 * minute, or a driver still at work). When entries are due as it stops, it invokes itself. Killed at
 * any point, its entries come due again when its lease ends, and the batch goes on from its last
 * commit.
 *
 * Each batch counts its rounds that changed nothing (no line read, no item released, no job seen
 * ended). The function runs with Lambda's recursive loop detection off (RecursiveLoop: Allow, a
 * large upload being one long chain), so a batch that would go past its budget
 * (OPFLOW_INGEST_CONTINUATION_BUDGET, default 8,640) is stopped loudly instead: an error naming the
 * batch, the `IngestContinuationBudgetExhausted` metric, and a notice in the ingest dead-letter
 * queue, whose alarm fires. `opflow batch redrive` takes it on again.
 */
import { randomUUID } from 'node:crypto';
import { setFlagsFromString } from 'node:v8';
import type { Logger } from '@aws-lambda-powertools/logger';
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import type { Context } from 'aws-lambda';
import {
  type AwsClients,
  DynamoDbBatchStore,
  inboxMetadata,
  openS3Object,
  readS3Object,
} from '../../backends/aws';
import { DynamoDbIngestSchedule, type IngestEntry } from '../../backends/aws/dynamodb-ingest-schedule';
import { ingestVariables } from '../../backends/aws/ingest-variables';
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
import { outputsRecord } from '../../ingest/outputs-record';
import { decodeS3Key, readIngestEvent, type S3EventRecord } from './ingest-message';
import type { JobsRuntime } from './jobs-runtime';
import { engineLogger } from './observability';

/** Rounds that changed nothing one batch may take before it is stopped (6 days of the sweeper's minute passes). */
export const DEFAULT_CONTINUATION_BUDGET = 8_640;

/** Drivers at once (the SQS event source's maximum concurrency before, 2). */
export const DEFAULT_INGEST_DRIVERS = 2;

/** A batch that went past its budget of rounds. */
export class ContinuationBudgetExhaustedError extends Error {
  override readonly name = 'ContinuationBudgetExhaustedError';
}

/** Entries whose work failed in this invocation (they come due again); the invocation fails, so its errors alarm sees it. */
export class IngestEntriesFailedError extends Error {
  override readonly name = 'IngestEntriesFailedError';
}

export interface IngestFunctionOptions {
  runtime: Pick<JobsRuntime, 'deps' | 'aws' | 'config' | 'observability'>;
  /** The S3 client the inbox is read with (the function's handler builds it; the runtime's report store shares it). */
  s3: AwsClients['s3'];
  /** Hands the work on to a new invocation of the function named (its own asynchronous invoke). */
  continueWith: (event: { kind: 'continue'; hop: number }, functionName: string) => Promise<void>;
  /** Where a stopped batch's notice goes (the ingest dead-letter queue). Default: OPFLOW_INGEST_DLQ_URL. */
  deadLetterQueueUrl?: string | undefined;
  /** Stop taking work this long before the function's deadline (default 60 s). */
  reserveMs?: number | undefined;
  /** A batch whose jobs run is due again this much later (default 10 s). */
  pollSeconds?: number | undefined;
  /** Rounds that changed nothing a batch may take (default OPFLOW_INGEST_CONTINUATION_BUDGET, else 8,640). */
  continuationBudget?: number | undefined;
  /** Drivers at once (default OPFLOW_INGEST_DRIVERS, else 2). */
  drivers?: number | undefined;
}

/** What every part of an invocation reads: the runtime, the inbox's S3 client, the stores and the settings. */
interface IngestSetup {
  runtime: IngestFunctionOptions['runtime'];
  logger: Logger;
  s3: AwsClients['s3'];
  batches: DynamoDbBatchStore;
  schedule: DynamoDbIngestSchedule;
  continueWith: IngestFunctionOptions['continueWith'];
  deadLetterQueueUrl: string | undefined;
  reserveMs: number;
  pollSeconds: number;
  continuationBudget: number;
  drivers: number;
}

/** What one invocation did. */
export interface IngestRun {
  /** Uploads its event named, recorded. */
  recorded: number;
  /** Whether it held a driver slot (else every slot was held, and it only recorded). */
  drove: boolean;
  /** Entries it worked on. */
  entries: number;
  /** Whether it invoked itself to go on. */
  continued: boolean;
}

export function createIngestFunction(options: IngestFunctionOptions) {
  // Flat memory over a long manifest (as `opflow ingest` does, see shared/cli/commands/ingest.ts):
  // V8, sized for the function's 1 GB, lets short-lived garbage pile up before it collects.
  setFlagsFromString('--optimize-for-size');
  const setup = ingestSetup(options);
  const { logger } = setup;

  async function handle(event: unknown, context: Context): Promise<IngestRun> {
    logger.addContext(context);
    const run: IngestRun = { recorded: 0, drove: false, entries: 0, continued: false };
    const message = readIngestEvent(event);
    if (message.kind === 'malformed') {
      // No retry can help it: dropped, with what is wrong.
      logger.error('not an ingest event; dropped', { reason: message.reason });
      return run;
    }
    if (message.kind === 'test') return run;
    const now = Date.now();
    if (message.kind === 'uploads') run.recorded = await record(setup, message.records, now);
    if (message.kind === 'continue' && message.batchId)
      await setup.schedule.scheduleBatch(message.batchId, now, { restart: true });
    const hop = message.kind === 'continue' ? message.hop : 0;
    const deadline = now + context.getRemainingTimeInMillis() - setup.reserveMs;
    const holder = context.awsRequestId || randomUUID();
    const slot = await setup.schedule.claimSlot(setup.drivers, holder, now, deadline + setup.reserveMs);
    if (slot === undefined) {
      logger.info('every ingest driver slot is held; the running drivers or the next minute take the work', {
        drivers: setup.drivers,
      });
      return run;
    }
    run.drove = true;
    let failed: string[] = [];
    try {
      const deps: IngestDeps = {
        engine: { ...setup.runtime.deps, log: engineLogger(logger) },
        batches: setup.batches,
      };
      ({ entries: run.entries, failed } = await work(setup, deps, deadline));
    } finally {
      await setup.schedule.releaseSlot(slot, holder);
    }
    // Due work left (the deadline came, or an upload arrived while the slot was held): a new invocation.
    if ((await setup.schedule.due(Date.now())).length > 0) {
      if (hop + 1 > setup.continuationBudget)
        logger.error("ingest hand-over chain at its budget; the sweeper's next pass goes on", { hop });
      else {
        await setup.continueWith({ kind: 'continue', hop: hop + 1 }, context.functionName);
        run.continued = true;
      }
    }
    if (failed.length > 0)
      throw new IngestEntriesFailedError(
        `${failed.length} ingest entr${failed.length === 1 ? 'y' : 'ies'} failed (${failed.slice(0, 5).join(', ')}); each is due again in a minute`,
      );
    return run;
  }

  return { handle, logger: logger as Logger };
}

/** The function's settings: given, else from its environment, else the defaults. */
function ingestSetup(options: IngestFunctionOptions): IngestSetup {
  const { runtime } = options;
  const positive = (name: string) => {
    const value = Number(process.env[name]);
    return Number.isInteger(value) && value > 0 ? value : undefined;
  };
  return {
    runtime,
    logger: runtime.observability.logger,
    s3: options.s3,
    batches: new DynamoDbBatchStore({
      client: runtime.aws.clients.documents,
      tableName: runtime.config.tableName,
    }),
    schedule: new DynamoDbIngestSchedule(runtime.aws.clients.documents, runtime.config.tableName),
    continueWith: options.continueWith,
    deadLetterQueueUrl:
      options.deadLetterQueueUrl ?? (process.env[ingestVariables.deadLetterQueueUrl]?.trim() || undefined),
    reserveMs: options.reserveMs ?? 60_000,
    pollSeconds: options.pollSeconds ?? 10,
    continuationBudget:
      options.continuationBudget ??
      positive(ingestVariables.continuationBudget) ??
      DEFAULT_CONTINUATION_BUDGET,
    drivers: options.drivers ?? positive(ingestVariables.drivers) ?? DEFAULT_INGEST_DRIVERS,
  };
}

/** Records the uploads an S3 event names (creations of objects of the report bucket); how many. */
async function record(setup: IngestSetup, records: S3EventRecord[], now: number): Promise<number> {
  const { logger, runtime } = setup;
  let recorded = 0;
  for (const entry of records) {
    if (!entry.eventName.startsWith('ObjectCreated')) continue;
    const key = decodeS3Key(entry.s3.object.key);
    const bucket = entry.s3.bucket.name;
    if (key === undefined) {
      logger.error('inbox object left alone', {
        bucket,
        key: entry.s3.object.key.slice(0, 1100),
        reason: 'the S3 event key is not a URL-encoded S3 key',
      });
      continue;
    }
    if (bucket !== runtime.config.bucketName) {
      logger.error('inbox object left alone', {
        bucket,
        key: key.slice(0, 1100),
        reason: `bucket ${bucket} is not the report bucket (${runtime.config.bucketName})`,
      });
      continue;
    }
    await setup.schedule.addUpload({ bucket, key, etag: entry.s3.object.eTag }, now);
    recorded += 1;
  }
  return recorded;
}

/** Takes due entries one at a time until the deadline or until none is due; the ids of those that failed. */
async function work(
  setup: IngestSetup,
  deps: IngestDeps,
  deadline: number,
): Promise<{ entries: number; failed: string[] }> {
  const { schedule, logger } = setup;
  const failed: string[] = [];
  const failedIds = new Set<string>();
  let entries = 0;
  // At least one entry, whatever the time left: an invocation that started late still moves on.
  while (entries === 0 || Date.now() < deadline) {
    const due = (await schedule.due(Date.now())).filter((entry) => !failedIds.has(entry.id));
    if (due.length === 0) break;
    let taken = 0;
    for (const entry of due) {
      if (entries > 0 && Date.now() >= deadline) break;
      if (!(await schedule.take(entry, Math.max(deadline, Date.now()) + setup.reserveMs))) continue;
      taken += 1;
      entries += 1;
      try {
        await (entry.kind === 'upload'
          ? readUpload(setup, deps, entry)
          : driveEntry(setup, deps, entry, deadline));
      } catch (error) {
        logger.error('ingest entry failed; due again in a minute', {
          entry: entry.kind === 'upload' ? entry.upload.key.slice(0, 1100) : entry.batchId,
          error: errorMessage(error),
        });
        failed.push(entry.kind === 'upload' ? entry.upload.key.slice(0, 200) : `batch ${entry.batchId}`);
        failedIds.add(entry.id);
        await schedule.take(entry, Date.now() + 60_000).catch(() => undefined);
      }
    }
    // Every due entry taken by others since they were read: theirs to do.
    if (taken === 0) break;
  }
  return { entries, failed };
}

/** An upload entry: read (its batch is then due at once), or left alone with a line saying why. */
async function readUpload(
  setup: IngestSetup,
  deps: IngestDeps,
  entry: Extract<IngestEntry, { kind: 'upload' }>,
): Promise<void> {
  const { bucket, key, etag } = entry.upload;
  let batchId: string | undefined;
  try {
    batchId = await arrived(setup, deps, bucket, key, etag);
  } catch (error) {
    if (!(error instanceof IngestRefused)) throw error;
    setup.logger.error('inbox object left alone', { bucket, key: key.slice(0, 1100), reason: error.message });
  }
  if (batchId) await setup.schedule.scheduleBatch(batchId, Date.now(), { restart: true });
  await setup.schedule.remove(entry);
}

/**
 * A batch entry: one round of driving it, then due again (at once while reading, or when a job of
 * it ended during the round), or removed once settled. A batch whose jobs run is otherwise due
 * `pollSeconds` later: the sweeper's next minute pass, unless a job's end wakes it first.
 */
async function driveEntry(
  setup: IngestSetup,
  deps: IngestDeps,
  entry: Extract<IngestEntry, { kind: 'batch' }>,
  deadline: number,
): Promise<void> {
  const { schedule, batches } = setup;
  const { batchId } = entry;
  const round = await drive(setup, deps, batchId, deadline);
  if (round === 'gone') return schedule.remove(entry);
  if (round === 'held') {
    // Another invocation drives it (its lease); looked at again after it.
    const batch = await batches.get(batchId);
    await schedule.scheduleBatch(batchId, Math.max(Date.now(), batch?.driverUntil ?? 0) + 1_000);
    return;
  }
  const { batch, changed } = round;
  if (batchSettled(batch)) return schedule.remove(entry);
  const reading = !batch.cursor.done;
  const dueAt = reading ? Date.now() : Date.now() + setup.pollSeconds * 1000;
  // Only rounds that changed nothing count against the budget: a batch whose jobs end as fast as
  // it is driven is busy, not looping.
  const { rounds, ends } = await schedule.scheduleBatch(batchId, dueAt, { round: !changed });
  if (rounds > setup.continuationBudget) return stopRunaway(setup, entry, rounds);
  // A job ended while this round ran (its wake-up found the entry held): again at once.
  if (!reading && ends > entry.ends) await schedule.scheduleBatch(batchId, Date.now());
}

/** A batch past its budget of rounds: no longer driven, said in the log, a metric and the dead-letter queue. */
async function stopRunaway(
  setup: IngestSetup,
  entry: Extract<IngestEntry, { kind: 'batch' }>,
  rounds: number,
): Promise<void> {
  const { logger, runtime } = setup;
  const error = new ContinuationBudgetExhaustedError(
    `batch ${entry.batchId} took ${rounds - 1} rounds that changed nothing without settling (${ingestVariables.continuationBudget} ${setup.continuationBudget}): ` +
      'stopped; look at its jobs, then `opflow batch redrive` it',
  );
  const { metrics } = runtime.observability;
  metrics.addMetric('IngestContinuationBudgetExhausted', MetricUnit.Count, 1);
  metrics.publishStoredMetrics();
  logger.error('ingest continuation budget exhausted; the batch is stopped', { error: error.message });
  await setup.schedule.remove(entry);
  if (setup.deadLetterQueueUrl)
    await runtime.aws.clients.sqs.send(
      new SendMessageCommand({
        QueueUrl: setup.deadLetterQueueUrl,
        MessageBody: JSON.stringify({ kind: 'stopped', batchId: entry.batchId, reason: error.message }),
      }),
    );
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

/**
 * One round on the batch as its only driver (a lease on the batch record): reads on until the
 * deadline, releases items, refreshes the outputs when due. `gone` when the batch no longer exists,
 * `held` when another invocation drives it; else the batch as released and whether the round
 * changed it (lines read, items released, jobs seen ended).
 */
async function drive(
  setup: IngestSetup,
  deps: IngestDeps,
  batchId: string,
  deadline: number,
): Promise<{ batch: Batch; changed: boolean } | 'gone' | 'held'> {
  const { batches } = setup;
  const claimed = await lease(batches, batchId, deadline + setup.reserveMs);
  if (claimed === undefined) return 'gone';
  if (claimed === 'held') return 'held';
  let outputs = { at: claimed.outputsAt, cost: claimed.outputsCostMs };
  // The batch as the outputs were last written from (whether it was finished then).
  let written: Pick<Batch, 'status' | 'finishedAt'> | undefined;
  let released: Batch | undefined;
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
      await writeBatchOutputs(deps, batch, { record: false });
      outputs = { at: Date.now(), cost: Math.round(performance.now() - started) };
      written = batch;
    }
  } finally {
    released = await release(batches, batchId, outputs, written);
  }
  return released ? { batch: released, changed: progressOf(released) !== progressOf(claimed) } : 'gone';
}

/** What a round can move: the reading, the items released, the jobs seen ended, the status. */
function progressOf(batch: Batch): string {
  const { succeeded, failed, cancelled } = batch.settled;
  return [
    batch.cursor.done,
    batch.counts.records,
    batch.admitted,
    succeeded + failed + cancelled,
    batch.status,
  ].join('/');
}

async function lease(
  batches: DynamoDbBatchStore,
  batchId: string,
  until: number,
): Promise<Batch | 'held' | undefined> {
  for (let tries = 0; tries < 10; tries++) {
    const batch = await batches.get(batchId);
    if (!batch) return undefined;
    if (batch.driverUntil !== undefined && batch.driverUntil > Date.now()) return 'held';
    const next = { ...batch, version: batch.version + 1, driverUntil: until };
    if (await batches.commit(next, batch.version)) return next;
  }
  return 'held';
}

async function release(
  batches: DynamoDbBatchStore,
  batchId: string,
  outputs: { at?: number | undefined; cost?: number | undefined },
  written: Pick<Batch, 'status' | 'finishedAt'> | undefined,
): Promise<Batch | undefined> {
  for (let tries = 0; tries < 20; tries++) {
    const batch = await batches.get(batchId);
    if (!batch) return undefined;
    const next = {
      ...batch,
      version: batch.version + 1,
      driverUntil: undefined,
      ...(written
        ? outputsRecord(batch, written, { at: outputs.at, costMs: outputs.cost })
        : { outputsAt: outputs.at, outputsCostMs: outputs.cost }),
    };
    if (await batches.commit(next, batch.version)) return next;
  }
  return batches.get(batchId);
}
