// DynamoDbJobStore on DynamoDB Local (and fauxqs S3 for offloaded inputs): the item layout the CDK
// table and the sweeper rely on, the due index across its 16 shards, cursors, large inputs.
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { ulid } from 'ulid';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AwsEmulators, startAwsEmulators } from '../../../../scripts/emulators/aws-emulators';
import {
  DynamoDbJobStore,
  dueShard,
  InvalidCursorError,
  JobAlreadyExistsError,
  JobTooLargeError,
  S3ReportStore,
  statusShard,
} from '../../../../shared/backends/aws';
import type { Job } from '../../../../shared/engine/job-record';
import { contractJob } from '../../../contract/ports.contract';

const T0 = 1_750_000_000_000;
let emulators: AwsEmulators;

beforeAll(async () => {
  emulators = await startAwsEmulators({ secretsManager: false });
});
afterAll(async () => {
  await emulators?.stop();
});

async function freshStore(options: { retentionSeconds?: number } = {}) {
  const tableName = await emulators.createTable();
  const reports = new S3ReportStore({ client: emulators.clients.s3, bucket: emulators.createBucket() });
  const store = new DynamoDbJobStore({ client: emulators.clients.documents, tableName, reports, ...options });
  const item = async (pk: string, sk: string) =>
    (
      await emulators.clients.documents.send(
        new GetCommand({ TableName: tableName, Key: { PK: pk, SK: sk } }),
      )
    ).Item;
  return { store, reports, tableName, item };
}

const next = (job: Job, changes: Partial<Job>): Job => ({
  ...job,
  ...changes,
  version: job.version + 1,
  updatedAt: job.updatedAt + 1,
});

describe('DynamoDbJobStore item layout', () => {
  it('keys a job for every index, and drops it from the due index once finished', async () => {
    const { store, item } = await freshStore({ retentionSeconds: 3600 });
    const job = contractJob({ batchId: 'b-7', status: 'WAITING', nextRunAt: T0 + 5, createdAt: T0 - 10 });
    await store.create(job);
    const stored = await item(`JOB#${job.id}`, 'JOB');
    expect(stored).toMatchObject({
      GSI4PK: `STATUS#WAITING#${statusShard(job.id)}`,
      GSI4SK: `${String(T0 - 10).padStart(13, '0')}#${job.id}`,
      GSI2PK: `DUE#${String(dueShard(job.id)).padStart(2, '0')}`,
      GSI2SK: `${String(T0 + 5).padStart(13, '0')}#${job.id}`,
      GSI5PK: 'BATCH#b-7',
      GSI5SK: `${String(T0 - 10).padStart(13, '0')}#${job.id}`,
      version: 1,
      status: 'WAITING',
    });
    expect(stored).not.toHaveProperty('expiresAt');

    const done = next(job, { status: 'SUCCEEDED', finishedAt: T0 + 2_000 });
    expect(await store.commit(done, job.version)).toBe(true);
    const finished = await item(`JOB#${job.id}`, 'JOB');
    expect(finished).not.toHaveProperty('GSI2PK');
    expect(finished).not.toHaveProperty('GSI2SK');
    expect(finished?.GSI4PK).toBe(`STATUS#SUCCEEDED#${statusShard(job.id)}`);
    // The listing index is keyed on what changes only with the status: a commit that keeps the
    // status leaves its row (and its write units) alone; no job goes to the legacy byStatus index.
    expect(finished?.GSI4SK).toBe(stored?.GSI4SK);
    expect(finished).not.toHaveProperty('GSI1PK');
    // TTL counts from when the job finished.
    expect(finished?.expiresAt).toBe(Math.floor((T0 + 2_000) / 1000) + 3600);
    // The record itself is returned as committed (the TTL attribute is the table's business).
    expect(await store.get(job.id)).toEqual(done);
  });

  it('writes no projection-ALL index at a commit, and only the due index unless the status changes', async () => {
    // Every write asks DynamoDB (Local) what it consumed, index by index.
    const consumed: Record<string, number>[] = [];
    const documents = emulators.clients.documents;
    // A stand-in over the real client (still a DynamoDBDocumentClient, as the SDK's paginators ask).
    const measuring = new Proxy(documents, {
      get: (target, property) => {
        if (property !== 'send') return Reflect.get(target, property, target);
        return async (command: { input: Record<string, unknown> }) => {
          command.input.ReturnConsumedCapacity = 'INDEXES';
          const answer = (await documents.send(command as never)) as {
            ConsumedCapacity?: { GlobalSecondaryIndexes?: Record<string, { CapacityUnits?: number }> };
          };
          const indexes = answer.ConsumedCapacity?.GlobalSecondaryIndexes ?? {};
          consumed.push(
            Object.fromEntries(Object.entries(indexes).map(([name, c]) => [name, c.CapacityUnits ?? 0])),
          );
          return answer;
        };
      },
    });
    const tableName = await emulators.createTable();
    const store = new DynamoDbJobStore({ client: measuring, tableName });
    const job = contractJob({ batchId: 'b-9', status: 'RUNNING', nextRunAt: T0 + 5, createdAt: T0 - 10 });
    await store.create(job);
    // A large record, as a job that has run many steps: an index projecting it would cost 3 units.
    const polled = next(job, { nextRunAt: T0 + 9_000, context: { notes: 'x'.repeat(2_500) } });
    consumed.length = 0;
    expect(await store.commit(polled, job.version)).toBe(true);
    expect(consumed).toHaveLength(1);
    // The due index (keys only, its key moved) and nothing else: not byStatus, byBatch,
    // byStatusShard or byBatchKeys.
    expect(Object.keys(consumed[0]!)).toEqual(['due']);
    consumed.length = 0;
    const finished = next(polled, { status: 'SUCCEEDED', finishedAt: T0 + 10_000 });
    expect(await store.commit(finished, polled.version)).toBe(true);
    // A status change: its rows in the two small listing indexes move (1 unit each: keys and filters),
    // and the job leaves the due index.
    expect(Object.keys(consumed[0]!).sort()).toEqual(['byBatchKeys', 'byStatusShard', 'due']);
    for (const units of Object.values(consumed[0]!)) expect(units).toBeLessThanOrEqual(2);
    // The batch's jobs are listed through the small index, then read whole.
    expect((await store.list({ batchId: 'b-9', status: 'SUCCEEDED' })).jobs).toEqual([finished]);
    expect((await store.list({ batchId: 'b-9', status: 'RUNNING' })).jobs).toEqual([]);
  });

  it("uses the job's own expiresAt for TTL when it has one", async () => {
    const { store, item } = await freshStore();
    const job = contractJob();
    await store.create(job);
    await store.commit(next(job, { status: 'CANCELLED', finishedAt: T0, expiresAt: 1_800_000_000 }), 1);
    expect((await item(`JOB#${job.id}`, 'JOB'))?.expiresAt).toBe(1_800_000_000);
  });

  it('writes the idempotency key item in the same transaction, pointing at the job', async () => {
    const { store, item } = await freshStore();
    const job = contractJob({ tenant: 'acme', idempotencyKey: 'order#42' });
    await store.create(job);
    expect(await item('IDEM#acme#order#42', 'IDEM')).toMatchObject({ jobId: job.id, tenant: 'acme' });
  });

  it('keeps tenants with a "#" in their name apart in idempotency keys', async () => {
    const { store } = await freshStore();
    const a = contractJob({ tenant: 'a#b', idempotencyKey: 'c' });
    const b = contractJob({ tenant: 'a', idempotencyKey: 'b#c' });
    expect((await store.create(a)).created).toBe(true);
    expect((await store.create(b)).created).toBe(true);
  });

  it('refuses to create a job id twice', async () => {
    const { store } = await freshStore();
    const job = contractJob();
    await store.create(job);
    await expect(store.create({ ...job, label: 'again' })).rejects.toBeInstanceOf(JobAlreadyExistsError);
    await expect(store.create({ ...job, idempotencyKey: 'new-key' })).rejects.toBeInstanceOf(
      JobAlreadyExistsError,
    );
  });

  it('replaces an idempotency key whose job has expired (TTL removed it)', async () => {
    const { store, tableName } = await freshStore();
    const gone = ulid();
    await emulators.clients.documents.send(
      new PutCommand({ TableName: tableName, Item: { PK: 'IDEM#default#k', SK: 'IDEM', jobId: gone } }),
    );
    expect(await store.findByIdempotencyKey('default', 'k')).toBeUndefined();
    const job = contractJob({ idempotencyKey: 'k' });
    expect(await store.create(job)).toEqual({ job, created: true });
    expect((await store.findByIdempotencyKey('default', 'k'))?.id).toBe(job.id);
  });
});

describe('DynamoDbJobStore inputs and size', () => {
  it('moves an inline input over 32 KB to S3 and keeps a pointer in the item', async () => {
    const { store, reports, item } = await freshStore();
    const text = 'x'.repeat(40 * 1024);
    const job = contractJob({ input: { inline: { text } } });
    const { job: created } = await store.create(job);
    const ref = `reports/${job.id}/input.json`;
    expect(created.input).toEqual({ ref });
    const stored = await reports.get(ref);
    expect(JSON.parse(Buffer.from(stored!.body).toString('utf8'))).toEqual({ text });
    expect(stored?.contentType).toBe('application/json');
    const raw = await item(`JOB#${job.id}`, 'JOB');
    expect(String(raw?.job).length).toBeLessThan(4_000);
    expect((await store.get(job.id))?.input).toEqual({ ref });
  });

  it('keeps a small input inline', async () => {
    const { store } = await freshStore();
    const job = contractJob({ input: { inline: { text: 'y'.repeat(1000) } } });
    expect((await store.create(job)).job).toEqual(job);
  });

  it('refuses a record that cannot fit in one item, saying which job', async () => {
    const { store } = await freshStore();
    const job = contractJob({ context: { blob: 'z'.repeat(400 * 1024) } });
    await expect(store.create(job)).rejects.toThrow(JobTooLargeError);
    await expect(store.create(job)).rejects.toThrow(job.id);
  });
});

describe('DynamoDbJobStore due jobs', () => {
  it('merges all 16 shards oldest first, without a scan', async () => {
    const { store, tableName } = await freshStore();
    const jobs = Array.from({ length: 60 }, (_, i) =>
      contractJob({ nextRunAt: T0 + ((i * 7919) % 60) * 1_000, status: i % 2 ? 'WAITING' : 'QUEUED' }),
    );
    await Promise.all(jobs.map((job) => store.create(job)));
    const shards = new Set(jobs.map((job) => dueShard(job.id)));
    expect(shards.size).toBeGreaterThanOrEqual(8);

    const due = await store.listDue(T0 + 29_000, 100);
    const expected = jobs
      .filter((job) => job.nextRunAt <= T0 + 29_000)
      .sort((a, b) => a.nextRunAt - b.nextRunAt || a.id.localeCompare(b.id));
    expect(due.map((job) => job.id)).toEqual(expected.map((job) => job.id));

    const oldestTen = await store.listDue(T0 + 60_000, 10);
    expect(oldestTen.map((job) => job.nextRunAt)).toEqual(
      [...jobs.map((job) => job.nextRunAt)].sort((a, b) => a - b).slice(0, 10),
    );

    // Each shard is a partition of the sparse index: its items are exactly the unfinished jobs.
    const counts = await Promise.all(
      Array.from({ length: 16 }, async (_, shard) => {
        const answer = await emulators.clients.documents.send(
          new QueryCommand({
            TableName: tableName,
            IndexName: 'due',
            KeyConditionExpression: 'GSI2PK = :pk',
            ExpressionAttributeValues: { ':pk': `DUE#${String(shard).padStart(2, '0')}` },
            Select: 'COUNT',
          }),
        );
        return answer.Count ?? 0;
      }),
    );
    expect(counts.reduce((a, b) => a + b, 0)).toBe(60);
  });
});

describe('DynamoDbJobStore access patterns', () => {
  it('serves every one of them with keys and indexes: never a Scan', async () => {
    const tableName = await emulators.createTable();
    const client = new DynamoDBClient({
      region: emulators.region,
      credentials: emulators.clientConfig.credentials,
      endpoint: emulators.clientConfig.endpoints?.dynamodb,
    });
    const commands = new Set<string>();
    client.middlewareStack.add(
      (next, context) => (args) => {
        commands.add(String(context.commandName));
        return next(args);
      },
      { step: 'initialize', name: 'recordCommands' },
    );
    const documents = DynamoDBDocumentClient.from(client, {
      marshallOptions: { removeUndefinedValues: true },
    });
    const store = new DynamoDbJobStore({ client: documents, tableName });
    const job = contractJob({ batchId: 'b', idempotencyKey: 'k', nextRunAt: T0 });
    await store.create(job);
    await store.create(contractJob({ idempotencyKey: 'k' }));
    await store.get(job.id);
    await store.commit(next(job, { status: 'WAITING' }), job.version);
    await store.listDue(T0 + 1, 10);
    await store.list({ status: 'WAITING', tenant: 'default' });
    await store.list({ batchId: 'b' });
    await store.list({});
    await store.findByIdempotencyKey('default', 'k');
    client.destroy();
    expect([...commands].sort()).toEqual([
      'BatchGetItemCommand',
      'GetItemCommand',
      'PutItemCommand',
      'QueryCommand',
      'TransactWriteItemsCommand',
    ]);
  });
});

describe('DynamoDbJobStore listing', () => {
  it('pages through every status, newest first (as the local store), each job once', async () => {
    const { store } = await freshStore();
    const statuses = ['QUEUED', 'WAITING', 'SUCCEEDED', 'FAILED', 'AWAITING_INPUT'] as const;
    const jobs = Array.from({ length: 23 }, (_, i) =>
      // Updated in the opposite order: the listing does not follow updates (they would rewrite the index).
      contractJob({
        status: statuses[i % statuses.length]!,
        createdAt: T0 + i * 10,
        updatedAt: T0 + 1_000 - i,
      }),
    );
    for (const job of jobs) await store.create(job);
    const seen: Job[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await store.list({ limit: 5, cursor });
      seen.push(...page.jobs);
      cursor = page.cursor;
      pages += 1;
    } while (cursor);
    expect(pages).toBe(5);
    expect(seen.map((job) => job.id)).toEqual([...jobs].reverse().map((job) => job.id));
  });

  it('lists a batch in creation order, filtered by status and tenant', async () => {
    const { store } = await freshStore();
    const jobs = Array.from({ length: 9 }, (_, i) =>
      contractJob({
        batchId: 'bulk-1',
        createdAt: T0 + i,
        tenant: i % 3 === 0 ? 'acme' : 'default',
        status: i % 2 ? 'SUCCEEDED' : 'QUEUED',
      }),
    );
    for (const job of [...jobs].reverse()) await store.create(job);
    await store.create(contractJob({ batchId: 'bulk-2' }));
    const all = await store.list({ batchId: 'bulk-1', limit: 100 });
    expect(all.jobs.map((job) => job.id)).toEqual(jobs.map((job) => job.id));
    expect(all.cursor).toBeUndefined();

    const acmeQueued = await store.list({ batchId: 'bulk-1', tenant: 'acme', status: 'QUEUED' });
    expect(acmeQueued.jobs.map((job) => job.id)).toEqual(
      jobs.filter((job) => job.tenant === 'acme' && job.status === 'QUEUED').map((job) => job.id),
    );
  });

  it('fills a page even when a tenant filter skips most jobs', async () => {
    const { store } = await freshStore();
    const mine = Array.from({ length: 4 }, (_, i) => contractJob({ tenant: 'rare', createdAt: T0 + i }));
    const others = Array.from({ length: 150 }, (_, i) => contractJob({ createdAt: T0 + 10 + i }));
    await Promise.all([...mine, ...others].map((job) => store.create(job)));
    const first = await store.list({ tenant: 'rare', status: 'QUEUED', limit: 3 });
    expect(first.jobs.map((job) => job.id)).toEqual([mine[3]!.id, mine[2]!.id, mine[1]!.id]);
    const second = await store.list({ tenant: 'rare', status: 'QUEUED', limit: 3, cursor: first.cursor });
    expect(second.jobs.map((job) => job.id)).toEqual([mine[0]!.id]);
    expect(second.cursor).toBeUndefined();
  });

  it('refuses a cursor it did not make, or one made for another kind of listing', async () => {
    const { store } = await freshStore();
    for (let i = 0; i < 3; i++) await store.create(contractJob({ batchId: 'b' }));
    const page = await store.list({ batchId: 'b', limit: 1 });
    expect(page.cursor).toBeDefined();
    await expect(store.list({ cursor: 'not-a-cursor' })).rejects.toBeInstanceOf(InvalidCursorError);
    await expect(store.list({ status: 'QUEUED', cursor: page.cursor })).rejects.toThrow(/listing by batch/);
  });
});
