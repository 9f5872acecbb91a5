// The bad-input suite's rows for the Lambda `ingest` (rows/ingest-events.ts): each event is handed
// to the function's real handler, against the AWS emulators, as Lambda's asynchronous invocation
// does. Each row asserts whether the invocation fails (Lambda would retry it) or the event is
// dropped, and what the log lines name; no row may log a stack trace, end past its bound, or touch a
// batch or a job: the table is the same, item for item, before the first row and after the last.

import type { Context } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AwsEmulators, startAwsEmulators } from '../../scripts/emulators/aws-emulators';
import { lambdaContext } from '../../scripts/lambda/lambda-events';
import { awsClientConfig, createS3Client, putInboxObject, s3CreatedEvent } from '../../shared/backends/aws';
import { batchEntryId, DynamoDbIngestSchedule } from '../../shared/backends/aws/dynamodb-ingest-schedule';
import { scanItems } from '../../shared/backends/aws/dynamodb-pages';
import { loadAwsConfig } from '../../shared/runtime/aws/config';
import { createIngestFunction } from '../../shared/runtime/lambda/ingest';
import { createJobsRuntime } from '../../shared/runtime/lambda/jobs-runtime';
import { captureProcessOutput } from '../support/process-output';
import { ingestRows } from './rows/ingest-events';

const stackLine = /^\s+at .+(:\d+:\d+\)?|\(native\))$/m;
let emulators: AwsEmulators;
let env: Record<string, string>;
let bucket: string;
let table: string;
let ingest: ReturnType<typeof createIngestFunction>;
let s3: ReturnType<typeof createS3Client>;
let tableBefore: unknown[];
const saved: Record<string, string | undefined> = {};

async function scanTable(): Promise<unknown[]> {
  const items = await scanItems(emulators.clients.documents, { TableName: table });
  return items.sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
}

/** Runs one event through the handler; the log lines it wrote and whether the invocation failed. */
async function handle(body: unknown, messageId: string) {
  const withBucket = (text: string) => text.split('{bucket}').join(bucket);
  let event: unknown = body;
  if (typeof body === 'string') {
    try {
      event = JSON.parse(withBucket(body));
    } catch {
      event = body;
    }
  } else if (body !== undefined) event = JSON.parse(withBucket(JSON.stringify(body)));
  const { result, output } = await captureProcessOutput(() =>
    ingest.handle(event, lambdaContext('opflow-ingest', 120_000) as Context).then(
      () => [],
      () => [messageId],
    ),
  );
  // The log is JSON: read its escaped quotes as a person would.
  const logged = output.replace(/\\"/g, '"');
  return { failed: result, logged };
}

beforeAll(async () => {
  emulators = await startAwsEmulators({ secretsManager: false });
  table = await emulators.createTable();
  bucket = emulators.createBucket();
  env = {
    OPFLOW_TABLE_NAME: table,
    OPFLOW_QUEUE_URL: emulators.createQueue().queueUrl,
    OPFLOW_BUCKET_NAME: bucket,
    OPFLOW_API_KEY_SECRET_PREFIX: 'opflow/test/api-key/',
    ...emulators.environment(),
  };
  // The function's settings come from its environment, as on Lambda.
  for (const [name, value] of Object.entries(env)) {
    saved[name] = process.env[name];
    process.env[name] = value;
  }
  s3 = createS3Client(awsClientConfig(loadAwsConfig(env)));
  const runtime = createJobsRuntime({ env, s3 });
  // No hand-over (each row is one event, on its own).
  ingest = createIngestFunction({ runtime, s3, continueWith: async () => undefined });
  // A valid batch, read and started, that no bad message may touch.
  const key = 'inbox/patent-count/good/m.jsonl';
  const lines = ['a', 'b', 'c'].map((id) => JSON.stringify({ id, query: `TTL:(${id})` }));
  const { etag } = await putInboxObject(s3, { bucket: bucket, key }, `${lines.join('\n')}\n`);
  const seeded = await handle(s3CreatedEvent({ bucket: bucket, key }, etag), 'seed');
  expect(seeded.failed, seeded.logged).toEqual([]);
  // Its entry in the ingest schedule removed: no row's invocation may drive it on when it comes due.
  await new DynamoDbIngestSchedule(emulators.clients.documents, table).remove({ id: batchEntryId('good') });
  tableBefore = await scanTable();
  expect(tableBefore.length).toBeGreaterThanOrEqual(4);
}, 180_000);

afterAll(async () => {
  try {
    if (tableBefore) expect(await scanTable()).toEqual(tableBefore);
  } finally {
    await emulators?.stop();
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  }
}, 60_000);

describe('bad input at the ingest function (its events: S3 notifications, continuations)', () => {
  it.each(ingestRows.map((row, index) => [row.name, row, index] as const))(
    '%s',
    { timeout: 60_000 },
    async (_name, row, index) => {
      for (const [key, object] of Object.entries(row.objects ?? {})) {
        await putInboxObject(s3, { bucket: bucket, key }, object.body, object.metadata ?? {});
      }
      const messageId = `m${index}`;
      const { failed, logged } = await handle(row.body, messageId);
      expect(failed, logged).toEqual(row.failed ? [messageId] : []);
      expect(logged).not.toMatch(stackLine);
      // A log line is at most a few KB, whatever the message's size.
      for (const line of logged.split('\n')) expect(line.length).toBeLessThan(8 * 1024);
      for (const text of row.logs) {
        if (typeof text === 'string') expect(logged).toContain(text);
        else expect(logged).toMatch(text);
      }
    },
  );
});
