// The ingest function (shared/runtime/lambda/ingest.ts, built as functions/ingest builds it, on a
// jobs runtime against DynamoDB Local and fauxqs' SQS and S3) when it would outlast its invocation or
// dies in the middle of one:
// - given less time than its reserve, it reads one chunk, commits it with the position in the file
//   and hands over to a new invocation of itself; those read on from there, and every valid line
//   becomes exactly one item and one job;
// - instances killed at seeded random points (after some chunks are committed, before the next
//   position commit, or anywhere in between: admission, documents) leave their entry of the ingest
//   schedule taken until their lease ends; then it is due again, the sweeper's pass invokes the
//   function, and a new instance resumes from the last committed chunk, without a duplicate item,
//   problem or job.
// The clock is faked (Date only), so a killed instance's lease passes without sleeping.
import { PutObjectCommand } from '@aws-sdk/client-s3';
import type { Context } from 'aws-lambda';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { type AwsEmulators, startAwsEmulators } from '../../../scripts/emulators/aws-emulators';
import { lambdaContext } from '../../../scripts/lambda/lambda-events';
import {
  awsClientConfig,
  createS3Client,
  DynamoDbBatchStore,
  DynamoDbJobStore,
  s3CreatedEvent,
} from '../../../shared/backends/aws';
import { batchEntryId, DynamoDbIngestSchedule } from '../../../shared/backends/aws/dynamodb-ingest-schedule';
import type { BatchItem } from '../../../shared/engine/batch-store';
import type { Job } from '../../../shared/engine/job-record';
import { loadAwsConfig } from '../../../shared/runtime/aws/config';
import { createIngestFunction } from '../../../shared/runtime/lambda/ingest';
import { createJobsRuntime } from '../../../shared/runtime/lambda/jobs-runtime';
import { SeededRandom } from '../../../shared/sandbox/seeded';
import { jsonlManifest, manifestFiles } from '../../support/manifests';

type Handler = (event: unknown, context: Context) => Promise<unknown>;

/** 5 January 2026, 09:00 UTC. */
const T0 = Date.UTC(2026, 0, 5, 9, 0, 0);
/**
 * What the function keeps back before its deadline (the product's default, 60 s). The local event
 * source stops an invocation at its timeout as Lambda does, so "time is short" is an invocation
 * whose whole timeout is the reserve: after its first chunk less than the reserve is left.
 */
const RESERVE_MS = 60_000;

let emulators: AwsEmulators;
let env: Record<string, string>;
let bucket: string;
let batches: DynamoDbBatchStore;
let jobs: DynamoDbJobStore;
const saved: Record<string, string | undefined> = {};

beforeAll(async () => {
  vi.useFakeTimers({ toFake: ['Date'], now: T0 });
  emulators = await startAwsEmulators({ secretsManager: false });
  const table = await emulators.createTable();
  bucket = emulators.createBucket();
  env = {
    OPFLOW_TABLE_NAME: table,
    OPFLOW_QUEUE_URL: emulators.createQueue().queueUrl,
    OPFLOW_BUCKET_NAME: bucket,
    OPFLOW_API_KEY_SECRET_PREFIX: 'opflow/test/api-key/',
    ...emulators.environment(),
  };
  // The function's credentials come from its environment, as on Lambda; the killed instances log
  // their failures (the assertions are on the table).
  for (const [name, value] of Object.entries({ ...env, POWERTOOLS_LOG_LEVEL: 'CRITICAL' })) {
    saved[name] = process.env[name];
    process.env[name] = value;
  }
  batches = new DynamoDbBatchStore({ client: emulators.clients.documents, tableName: table });
  jobs = new DynamoDbJobStore({ client: emulators.clients.documents, tableName: table });
}, 120_000);
afterAll(async () => {
  await emulators?.stop();
  for (const [name, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  vi.useRealTimers();
});

/** A seeded generator (the sandbox's mulberry32): the same numbers on every run. */
function seeded(seed: number): () => number {
  const random = new SeededRandom(seed);
  return () => random.next();
}

class Killed extends Error {
  override readonly name = 'Killed';
}

interface KillPlan {
  /** Chunks this instance commits before it may die. */
  chunks: number;
  /** Requests after that at which it dies, unless the next chunk's commit comes first. */
  after: number;
}

/** Where each killed instance died: its batch's committed position then, and what it was doing. */
interface Death {
  at: 'position commit' | 'other request';
  records: number;
}

/** Whether a DynamoDB request is a chunk's commit (the batch record with the position, in a transaction). */
function isChunkCommit(input: unknown): boolean {
  const first = (input as { TransactItems?: { Put?: { Item?: Record<string, unknown> } }[] })
    .TransactItems?.[0]?.Put?.Item;
  if (!first) return false;
  const sk = first.SK as unknown;
  return sk === 'META' || (sk as { S?: string } | undefined)?.S === 'META';
}

/**
 * One instance of the ingest function, as Lambda starts it (its own clients). With a kill plan,
 * every request of the instance fails from the planned one on: it is dead, nothing more of it
 * reaches DynamoDB, SQS or S3, not even its `finally` (the lease is never released).
 */
function instance(handOvers: unknown[], plan?: KillPlan, deaths?: Death[]): Handler {
  // As functions/ingest/handler.ts builds it: the S3 client shared by the inbox and the report store;
  // its hand-overs (asynchronous invocations of itself) kept for the test to deliver.
  const s3 = createS3Client(awsClientConfig(loadAwsConfig(env)));
  const runtime = createJobsRuntime({ env, s3 });
  const ingest = createIngestFunction({
    runtime,
    s3,
    reserveMs: RESERVE_MS,
    continueWith: async (event) => {
      handOvers.push(event);
    },
  });
  if (plan) {
    let dead = false;
    let committed = 0;
    let since = 0;
    const die = (at: Death['at']) => {
      dead = true;
      deaths?.push({ at, records: -1 });
      throw new Killed('the instance was killed');
    };
    const clients = runtime.aws.clients;
    for (const client of [clients.documents, clients.sqs, s3] as {
      middlewareStack: { add(middleware: unknown, options: unknown): void };
    }[]) {
      client.middlewareStack.add(
        (next: (args: { input: unknown }) => Promise<unknown>) => async (args: { input: unknown }) => {
          if (dead) throw new Killed('the instance is dead');
          if (client === clients.documents && isChunkCommit(args.input)) {
            if (committed >= plan.chunks) die('position commit');
            const answer = await next(args);
            committed += 1;
            return answer;
          }
          if (committed >= plan.chunks && ++since >= plan.after) die('other request');
          return next(args);
        },
        { step: 'initialize', name: 'killSwitch', priority: 'high' },
      );
    }
  }
  return (event, context) => runtime.settle(ingest.handle(event, context));
}

/** Uploads the manifest and the files it names; the S3 event of the manifest, as the bucket's notification sends it. */
async function upload(folder: string, manifest: string): Promise<unknown> {
  const s3 = emulators.clients.s3;
  for (const [name, body] of Object.entries(manifestFiles))
    await s3.send(
      new PutObjectCommand({
        Bucket: bucket,
        Key: `${folder}${name}`,
        Body: body,
        Metadata: { 'opflow-role': 'manifest-file' },
      }),
    );
  const key = `${folder}disclosures.jsonl`;
  const answer = await s3.send(
    new PutObjectCommand({
      Bucket: bucket,
      Key: key,
      Body: manifest,
      // Every item released as soon as it is read: each valid line ends as a job too.
      Metadata: { 'opflow-options': JSON.stringify({ inFlight: 1000 }) },
    }),
  );
  return s3CreatedEvent({ bucket, key }, answer.ETag?.replace(/"/g, ''));
}

/** One invocation, as Lambda gives it (`timeoutMs` of time); whether it failed. */
async function invoke(handler: Handler, event: unknown, timeoutMs: number): Promise<boolean> {
  try {
    await handler(event, lambdaContext('opflow-ingest', timeoutMs) as Context);
    return false;
  } catch {
    return true;
  }
}

async function allItems(batchId: string): Promise<BatchItem[]> {
  const items: BatchItem[] = [];
  for (let from = 0; ; ) {
    const page = await batches.listItems(batchId, from, 300);
    items.push(...page);
    if (page.length < 300) return items;
    from = page[page.length - 1]!.seq + 1;
  }
}

async function jobsOf(batchId: string): Promise<Job[]> {
  const found: Job[] = [];
  let cursor: string | undefined;
  do {
    const page = await jobs.list({ batchId, limit: 1000, cursor });
    found.push(...page.jobs);
    cursor = page.cursor;
  } while (cursor !== undefined);
  return found;
}

/** Every valid line exactly one item and one job; every bad line exactly one problem. */
async function expectExactlyOnce(batchId: string, manifest: ReturnType<typeof jsonlManifest>, total: number) {
  const batch = (await batches.get(batchId))!;
  const good = total - manifest.bad.length;
  expect(batch.cursor).toMatchObject({ records: total, done: true });
  expect(batch.counts).toEqual({ records: total, created: good, existing: 0, invalid: manifest.bad.length });
  const items = await allItems(batchId);
  expect(items.map((item) => item.id)).toEqual(manifest.goodIds);
  expect(items.map((item) => item.seq)).toEqual(items.map((_, index) => index));
  expect(new Set(items.map((item) => item.key)).size).toBe(good);
  const problems = await batches.listProblems(batchId, 1);
  expect(problems.map((problem) => problem.record)).toEqual(manifest.bad.map((bad) => bad.at));
  const released = await jobsOf(batchId);
  expect(released).toHaveLength(good);
  expect(new Set(released.map((job) => job.idempotencyKey))).toEqual(new Set(items.map((item) => item.key)));
  expect(batch.admitted).toBe(good);
  expect(new Set(batch.inFlight)).toEqual(new Set(released.map((job) => job.id)));
}

it('hands over to a new invocation in the middle of the file when its time is short, the position committed; those finish it, each valid line one item and one job', async () => {
  const total = 300;
  const manifest = jsonlManifest(total);
  const handOvers: unknown[] = [await upload('inbox/patent-count/short/', manifest.text)];
  // Each invocation has no more time than the reserve: it does one entry (the upload, then one chunk).
  const handler = instance(handOvers);
  const positions: { records: number; done: boolean; driven: boolean }[] = [];
  for (let invocations = 0; invocations < 50 && handOvers.length > 0; invocations++) {
    expect(await invoke(handler, handOvers.shift(), RESERVE_MS)).toBe(false);
    const batch = (await batches.get('short'))!;
    positions.push({
      records: batch.cursor.records,
      done: batch.cursor.done,
      driven: batch.driverUntil !== undefined,
    });
    if (batch.cursor.done && batch.admitted === batch.items) break;
  }
  // The first invocation opened the batch and handed over; each next one read one chunk (49
  // records: the DynamoDB store's chunk), committed it with the position, released its lease and
  // handed over; the next read on from there.
  expect(positions[0]).toEqual({ records: 0, done: false, driven: false });
  const reading = positions.filter((position) => !position.done).slice(1);
  expect(reading.map((position) => position.records)).toEqual([49, 98, 147, 196, 245, 294]);
  expect(positions.find((position) => position.done)?.records).toBe(total);
  await expectExactlyOnce('short', manifest, total);
}, 300_000);

it('resumes an ingest killed at random points (after some chunks, before the next position commit) without a duplicate item, problem or job', async () => {
  const total = 400;
  const manifest = jsonlManifest(total);
  const handOvers: unknown[] = [await upload('inbox/patent-count/killed/', manifest.text)];
  const schedule = new DynamoDbIngestSchedule(emulators.clients.documents, env.OPFLOW_TABLE_NAME!);
  // The batch of the test before stays out of it (its jobs never run here, so it is never settled).
  await schedule.remove({ id: batchEntryId('short') });
  // Plenty of time per invocation: only the kills interrupt it.
  const timeoutMs = 600_000;
  const random = seeded(20261123);
  const deaths: Death[] = [];
  for (let invocations = 0; invocations < 40; invocations++) {
    if (handOvers.length === 0) {
      const entries = await schedule.entries();
      if (entries.length === 0) break;
      // Nothing handed over: a killed instance's entry comes due when its lease ends, and the
      // sweeper's next pass (a minute at most) invokes the function.
      // (Already due: a slot may still be held by a killed instance; the next minute's pass then.)
      const dueAt = entries[0]!.dueAt;
      vi.setSystemTime(dueAt > Date.now() ? dueAt + 1_000 : Date.now() + 61_000);
      handOvers.push({ kind: 'continue' });
    }
    // A new instance each time; the first four are killed after 1 or 2 chunks of their own (of the
    // file's 9, so always in the middle of it): two at their next position commit, two at one of
    // the next requests (admission's job writes, the next chunk's read of existing keys...).
    // Then one that lives.
    const plan =
      deaths.length < 4
        ? {
            chunks: 1 + Math.floor(random() * 2),
            after: deaths.length % 2 === 0 ? Number.POSITIVE_INFINITY : 1 + Math.floor(random() * 2),
          }
        : undefined;
    const handler = instance(handOvers, plan, deaths);
    const before = deaths.length;
    const failed = await invoke(handler, handOvers.shift(), timeoutMs);
    const batch = await batches.get('killed');
    if (!batch) continue;
    if (deaths.length > before) {
      deaths[deaths.length - 1]!.records = batch.cursor.records;
      // Killed: the invocation failed, the lease stays until it runs out.
      expect(failed).toBe(true);
      expect(batch.driverUntil).toBeGreaterThan(Date.now());
    } else expect(failed).toBe(false);
    if (batch.cursor.done && batch.admitted === batch.items) break;
  }
  expect(deaths).toHaveLength(4);
  // Killed in the middle of the file, with some chunks committed and more to read.
  expect(deaths.filter((death) => !(death.records > 0 && death.records < total))).toEqual([]);
  expect(deaths.map((death) => death.at)).toEqual([
    'position commit',
    'other request',
    'position commit',
    'other request',
  ]);
  await expectExactlyOnce('killed', manifest, total);
}, 300_000);
