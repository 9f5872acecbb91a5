// Bulk ingestion on the aws backend, on the emulators, with the bundled functions: a manifest
// uploaded under inbox/ is announced to the ingest queue as S3's event notification would; the
// bundled ingest function reads it (and a document its lines name) into a batch, releases the items
// to the work queue, the bundled step workers run them, continuations carry the batch on, and the
// outputs end in the bucket under batches/<batchId>/. A document uploaded on its own joins its
// folder's batch (a .docx among them, read through the extractor files beside the ingest bundle).
// The same upload announced twice is read once.
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { Document, Packer, Paragraph } from 'docx';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqsEventSource } from '../../../scripts/lambda/sqs-event-source';
import { DynamoDbBatchStore, s3CreatedEvent } from '../../../shared/backends/aws';
import type { Batch } from '../../../shared/engine/batch-store';
import { isTerminal } from '../../../shared/engine/job-record';
import { listAll } from '../../../shared/runtime/job-queries';
import { AwsWorld } from './harness/aws-world';

type Handler = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse>;

describe('bulk ingestion on aws (S3 inbox event → ingest function → step workers)', () => {
  let world: AwsWorld;
  let ingest: Handler;
  let source: SqsEventSource;
  let queueName: string;
  let queueUrl: string;
  let batches: DynamoDbBatchStore;

  beforeAll(async () => {
    world = await AwsWorld.start({ workers: 2 });
    const queue = world.emulators.createQueue({ visibilityTimeoutSeconds: 5400, maxReceiveCount: 5 });
    queueName = queue.queueName;
    queueUrl = queue.queueUrl;
    process.env.OPFLOW_INGEST_QUEUE_URL = queueUrl;
    ingest = (await world.bundles.load<{ handler: Handler }>('ingest')).handler;
    source = new SqsEventSource({
      sqs: world.emulators.clients.sqs,
      queueUrl,
      queueArn: `arn:aws:sqs:us-east-1:000000000000:${queueName}`,
      batchSize: 1,
      waitTimeSeconds: 0,
      functionTimeoutMs: 900_000,
    });
    batches = new DynamoDbBatchStore({
      client: world.emulators.clients.documents,
      tableName: world.env.OPFLOW_TABLE_NAME!,
    });
  }, 300_000);
  afterAll(async () => {
    delete process.env.OPFLOW_INGEST_QUEUE_URL;
    await world?.stop();
  });

  const upload = async (key: string, body: string | Uint8Array) => {
    const answer = await world.emulators.clients.s3.send(
      new PutObjectCommand({ Bucket: world.bucket, Key: key, Body: body }),
    );
    // What S3's event notification puts on the ingest queue.
    await world.emulators.clients.sqs.send(
      new SendMessageCommand({
        QueueUrl: queueUrl,
        MessageBody: JSON.stringify(
          s3CreatedEvent({ bucket: world.bucket, key }, answer.ETag?.replace(/"/g, '')),
        ),
      }),
    );
  };
  const ingestQueue = () => {
    const state = world.emulators.fauxqs!.inspectQueue(queueName)!;
    const now = Date.now();
    return {
      ready:
        state.messages.ready.length +
        state.messages.delayed.filter((message) => (message.delayUntil ?? now) <= now).length,
      nextAt: Math.min(
        ...state.messages.delayed.map((message) => message.delayUntil ?? now),
        Number.POSITIVE_INFINITY,
      ),
      total: state.messages.ready.length + state.messages.delayed.length + state.messages.inflight.length,
    };
  };
  /** Delivers both queues until the batch is settled and the ingest queue has nothing more for it. */
  const settleBatch = async (batchId: string): Promise<Batch> => {
    for (let round = 0; round < 5_000; round++) {
      const batch = await batches.get(batchId);
      const ingestState = ingestQueue();
      if (
        batch &&
        (batch.status === 'FINISHED' || batch.status === 'STOPPED') &&
        batch.inFlight.length === 0 &&
        ingestState.total === 0
      )
        return batch;
      if (ingestState.ready > 0) {
        await source.poll(ingest);
        continue;
      }
      const work = world.queueState();
      if (work.ready > 0) {
        await world.deliverOnce();
        continue;
      }
      const next = Math.min(ingestState.nextAt, work.nextAt);
      if (!Number.isFinite(next)) throw new Error(`batch ${batchId} is stuck: ${JSON.stringify(batch)}`);
      world.advanceTo(next);
    }
    throw new Error(`batch ${batchId} did not settle`);
  };
  const text = async (key: string) =>
    Buffer.from((await world.reports.get(key))?.body ?? new Uint8Array()).toString('utf8');

  it('ingests a manifest uploaded under inbox/, runs its items and writes the outputs to the bucket', async () => {
    const lines: string[] = [];
    for (let i = 1; i <= 120; i++) {
      if (i % 25 === 0) lines.push(i === 50 ? 'not json' : `{"id": "bad${i}", "query": ""}`);
      else if (i === 3) lines.push('{"id": "from-file", "file": "files/query.txt"}');
      else lines.push(JSON.stringify({ id: `s${i}`, query: `TTL:(sensor ${i})` }));
    }
    await upload('inbox/patent-count/sensors/files/query.txt', 'TTL:(capacitive sensor)');
    await upload('inbox/patent-count/sensors/disclosures.jsonl', `${lines.join('\n')}\n`);
    const batch = await settleBatch('sensors');
    expect(batch).toMatchObject({
      status: 'FINISHED',
      items: 116,
      counts: { records: 120, created: 116, invalid: 4 },
    });
    expect(batch.settled).toMatchObject({ succeeded: 116, failed: 0 });
    const jobs = await listAll(world.store, { batchId: 'sensors' });
    expect(jobs).toHaveLength(116);
    expect(jobs.every((job) => isTerminal(job.status) && job.source === 'bulk')).toBe(true);
    const summary = (await text('batches/sensors/summary.csv')).trim().split('\n');
    expect(summary).toHaveLength(117);
    expect(summary.find((row) => row.startsWith('from-file,'))).toMatch(
      /patents for TTL:\(capacitive sensor\)/,
    );
    const failed = (await text('batches/sensors/failed.jsonl'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(failed.map((entry) => entry.source)).toEqual(['line 25', 'line 50', 'line 75', 'line 100']);
    expect(failed[1].reason).toMatch(/not valid JSON/);
    expect(await text('batches/sensors/index.html')).toContain('Batch sensors');

    // The same upload announced again (S3 delivers at least once): nothing new, no second run.
    const head = (await batches.get('sensors'))!;
    await world.emulators.clients.sqs.send(
      new SendMessageCommand({
        QueueUrl: queueUrl,
        MessageBody: JSON.stringify(
          s3CreatedEvent(
            { bucket: world.bucket, key: 'inbox/patent-count/sensors/disclosures.jsonl' },
            head.source.revision,
          ),
        ),
      }),
    );
    const after = await settleBatch('sensors');
    expect(after.run).toBe(1);
    expect(after.items).toBe(116);
  }, 600_000);

  it("adds a document uploaded on its own to its folder's batch", async () => {
    await upload('inbox/patent-count/loose/valve.md', '# Valve\n\nTTL:(check valve)\n');
    await upload('inbox/patent-count/loose/notes.rtf', '{\\rtf1}');
    // A .docx: read by mammoth, which the ingest bundle imports from extractors/ beside it.
    const docx = await Packer.toBuffer(
      new Document({ sections: [{ children: [new Paragraph('TTL:(hinge damper)')] }] }),
    );
    await upload('inbox/patent-count/loose/hinge.docx', new Uint8Array(docx));
    const batch = await settleBatch('loose');
    expect(batch.items).toBe(2);
    expect(batch.counts.invalid).toBe(1);
    const summary = await text('batches/loose/summary.csv');
    expect(summary).toMatch(
      /valve\.md,v1 \([0-9a-f]+\),Valve,patent-count,SUCCEEDED,".*patents for TTL:\(check valve\)"/,
    );
    expect(summary).toMatch(/hinge\.docx,v1 \([0-9a-f]+\),.*SUCCEEDED,".*patents for TTL:\(hinge damper\)"/);
    expect(await text('batches/loose/failed.jsonl')).toMatch(/unsupported document type/);
  }, 300_000);
});
