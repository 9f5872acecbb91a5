// The change log of GET /events on aws, on DynamoDB Local: the job table's stream, read the way
// Lambda's DynamoDB Streams event source reads it (scripts/lambda/dynamodb-stream-source.ts) and
// handed to the events function's logic, becomes per-tenant change items that a reader pages through
// after a cursor: in order, tenant by tenant, only once settled, and reset past the day kept. A slow
// or failed write reaches a reader once: readers wait behind a write in flight.
import { BatchWriteCommand, type DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { JOB_CHANGE_FILTER } from '../../../../infra/lib/live-events';
import { DynamoDbStreamSource } from '../../../../scripts/lambda/dynamodb-stream-source';
import { DynamoDbJobStore } from '../../../../shared/backends/aws';
import {
  changeRetentionMs,
  cursorAt,
  DynamoDbChangeLog,
  isChangeCursor,
  type LoggedChange,
  type StreamChange,
  writingPartition,
} from '../../../../shared/backends/aws/dynamodb-change-log';
import { changePartition, sortableTime } from '../../../../shared/backends/aws/table';
import { createEventsStream } from '../../../../shared/runtime/lambda/events-stream';
import { createObservability } from '../../../../shared/runtime/lambda/observability';
import { dynamoDbLocalForThisFile } from '../../../support/dynamodb-local';
import { makeJob } from '../../../support/factories';
import { REAL_PROCESS_TIMEOUT_MS } from '../../../support/timeouts';

const dynamo = dynamoDbLocalForThisFile();

async function world() {
  const { tableName, client } = await dynamo.newTable();
  let now = Date.now();
  const clock = { now: () => now, advance: (ms: number) => (now += ms) };
  const store = new DynamoDbJobStore({ client, tableName });
  const log = new DynamoDbChangeLog({ client, tableName, now: clock.now, settleMs: 1_000 });
  const source = new DynamoDbStreamSource({
    endpoint: dynamo.emulators.dynamoDb?.endpoint ?? '',
    region: dynamo.emulators.region,
    credentials: { accessKeyId: 'test' },
    tableName,
    filters: [JOB_CHANGE_FILTER],
  });
  await source.start();
  const events = createEventsStream({ log, observability: createObservability() });
  const drain = () => source.drain((event, context) => events.handle(event, context).then(() => undefined));
  return { store, log, source, clock, drain };
}

describe('the change log on DynamoDB Local', () => {
  it(
    'logs each new version of a job in order, per tenant and for everyone, answered once settled',
    async () => {
      const { store, log, source, clock, drain } = await world();
      const start = await log.head();
      const a = makeJob({ tenant: 'acme' });
      const b = makeJob({ tenant: 'globex' });
      await store.create(a);
      await store.create(b);
      const running = { ...a, status: 'RUNNING' as const, step: 'poll', version: 2 };
      expect(await store.commit(running, 1)).toBe(true);
      expect(await store.commit({ ...running, step: 'report', version: 3 }, 2)).toBe(true);
      expect(await drain()).toBe(4);
      // Nothing else on the table (idempotency and rate items) reaches the function.
      expect(source.delivered).toBe(4);

      // Not yet settled: a write stamped now may still be in flight elsewhere.
      expect((await log.after('acme', start, 100)).changes).toEqual([]);
      clock.advance(1_500);
      const acme = await log.after('acme', start, 100);
      expect(
        acme.changes.map((c) => [c.id, c.status, c.step, c.version, c.previousStatus, c.previousStep]),
      ).toEqual([
        [a.id, 'QUEUED', 'submit', 1, undefined, undefined],
        [a.id, 'RUNNING', 'poll', 2, 'QUEUED', 'submit'],
        [a.id, 'RUNNING', 'report', 3, 'RUNNING', 'poll'],
      ]);
      expect(acme.changes.every((change) => isChangeCursor(change.cursor))).toBe(true);
      const all = await log.after(undefined, start, 100);
      expect(all.changes.map((c) => c.id).sort()).toEqual([a.id, a.id, a.id, b.id].sort());

      // Resumed after the second change: the third only; after the page's cursor: nothing.
      const resumed = await log.after('acme', acme.changes[1]!.cursor, 100);
      expect(resumed.changes.map((c) => c.version)).toEqual([3]);
      expect((await log.after('acme', acme.cursor, 100)).changes).toEqual([]);
      // A page of one: the cursor is the change's, and the next page goes on from it.
      const first = await log.after('acme', start, 1);
      expect(first.changes.map((c) => c.version)).toEqual([1]);
      expect((await log.after('acme', first.cursor, 1)).changes.map((c) => c.version)).toEqual([2]);
    },
    REAL_PROCESS_TIMEOUT_MS,
  );

  it('answers a cursor older than the day kept with a reset at the head', async () => {
    const { log, clock } = await world();
    const old = cursorAt(clock.now() - changeRetentionMs - 60_000);
    const page = await log.after('acme', old, 10);
    expect(page).toEqual({ changes: [], cursor: await log.head(), reset: true });
  });

  // DynamoDB Local (shared by the files of a run with OPFLOW_TEST_DYNAMODB=shared) refuses an iterator taken on an empty shard once
  // another table was written to (TrimmedDataAccessException, aws/aws-sdk-java#2923): the stream
  // source takes it again where it stands, and hands each record once.
  it('reads its stream whole while another table of the same DynamoDB Local is written to', async () => {
    const { store, source, drain } = await world();
    const other = new DynamoDbJobStore(await dynamo.newTable());
    await other.create(makeJob({ tenant: 'acme' }));
    const a = makeJob({ tenant: 'acme' });
    await store.create(a);
    expect(await drain()).toBe(1);
    await other.create(makeJob({ tenant: 'acme' }));
    await store.commit({ ...a, status: 'RUNNING' as const, step: 'poll', version: 2 }, 1);
    expect(await drain()).toBe(1);
    expect(source.delivered).toBe(2);
  });
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Stream changes of `count` jobs of tenant acme, as the events function hands them to the log. */
function streamChanges(count: number): StreamChange[] {
  return Array.from({ length: count }, (_, index) => {
    const job = makeJob({ tenant: 'acme' });
    return {
      sequence: String(1000 + index),
      kind: 'job' as const,
      id: job.id,
      tenant: 'acme',
      workflow: job.workflow,
      status: 'QUEUED',
      step: 'submit',
      version: 1,
      at: Date.now(),
    };
  });
}

/** Whether a command writes change items (not a write's marker). */
function writesChanges(command: unknown): boolean {
  if (!(command instanceof BatchWriteCommand)) return false;
  const [requests] = Object.values(command.input.RequestItems ?? {});
  const item = requests?.[0]?.PutRequest?.Item;
  return typeof item?.PK === 'string' && item.PK !== writingPartition;
}

/** `client`, with `before` run ahead of each command it is given. */
function slowed(client: DynamoDBDocumentClient, before: (command: unknown) => Promise<void>) {
  return {
    send: async (command: unknown) => {
      await before(command);
      return client.send(command as never);
    },
  } as unknown as DynamoDBDocumentClient;
}

/** Every change of acme a reader polling every 50 ms until `done()` gives (and 1 s more). */
async function readUntil(log: DynamoDbChangeLog, done: () => boolean): Promise<LoggedChange[]> {
  const read: LoggedChange[] = [];
  let cursor = await log.head();
  let settledAt: number | undefined;
  while (settledAt === undefined || Date.now() - settledAt < 1_000) {
    const page = await log.after('acme', cursor, 100);
    read.push(...page.changes);
    cursor = page.cursor;
    if (settledAt === undefined && done()) settledAt = Date.now();
    await sleep(50);
  }
  return read;
}

async function itemsOf(client: DynamoDBDocumentClient, tableName: string, pk: string) {
  const answer = await client.send(
    new QueryCommand({
      TableName: tableName,
      KeyConditionExpression: 'PK = :pk',
      ExpressionAttributeValues: { ':pk': pk },
    }),
  );
  return answer.Items ?? [];
}

describe('a write a reader must not pass', () => {
  // Under the settle time (400 ms) and over it: the old rule wrote both again with a new stamp, and
  // a reader that had read the first copy read the second too.
  it.each([300, 900])(
    'a write slow by %i ms is written once and read once, by a reader reading all along',
    async (delayMs) => {
      const { tableName, client } = await dynamo.newTable();
      const reader = new DynamoDbChangeLog({ client, tableName, settleMs: 400 });
      let changeWrites = 0;
      const writer = new DynamoDbChangeLog({
        client: slowed(client, async (command) => {
          if (writesChanges(command) && ++changeWrites === 1) await sleep(delayMs);
        }),
        tableName,
        settleMs: 400,
      });
      const changes = streamChanges(3);
      let written = false;
      const reading = readUntil(reader, () => written);
      await sleep(200);
      await writer.append(changes);
      written = true;
      const read = await reading;
      expect(read.map((change) => change.id)).toEqual(changes.map((change) => change.id));
      const hour = changePartition('acme', Date.now());
      expect(await itemsOf(client, tableName, hour)).toHaveLength(3);
      expect(await itemsOf(client, tableName, writingPartition)).toEqual([]);
    },
    REAL_PROCESS_TIMEOUT_MS,
  );

  it(
    'a write that fails halfway leaves nothing a reader sees, and tried again is read once',
    async () => {
      const { tableName, client } = await dynamo.newTable();
      const reader = new DynamoDbChangeLog({ client, tableName, settleMs: 200 });
      let changeWrites = 0;
      const writer = new DynamoDbChangeLog({
        client: slowed(client, async (command) => {
          // 13 changes are 26 items: the second chunk of 25 fails, once.
          if (writesChanges(command) && ++changeWrites === 2)
            throw new Error('ProvisionedThroughputExceeded');
        }),
        tableName,
        settleMs: 200,
      });
      const changes = streamChanges(13);
      let written = false;
      const reading = readUntil(reader, () => written);
      await expect(writer.append(changes)).rejects.toThrow('ProvisionedThroughputExceeded');
      await sleep(500);
      expect(await itemsOf(client, tableName, changePartition('acme', Date.now()))).toEqual([]);
      // Lambda hands the batch again: its changes are read once.
      await writer.append(changes);
      written = true;
      const read = await reading;
      expect(read.map((change) => change.id)).toEqual(changes.map((change) => change.id));
    },
    REAL_PROCESS_TIMEOUT_MS,
  );

  it('holds readers behind a writer that died no longer than maxWriteMs', async () => {
    const { tableName, client } = await dynamo.newTable();
    let now = Date.now();
    const clock = { now: () => now, advance: (ms: number) => (now += ms) };
    const live = new DynamoDbChangeLog({
      client,
      tableName,
      now: clock.now,
      settleMs: 1_000,
      maxWriteMs: 10_000,
    });
    const start = await live.head();
    // A writer's marker, left by a Lambda that timed out before its changes were written.
    await client.send(
      new BatchWriteCommand({
        RequestItems: {
          [tableName]: [
            { PutRequest: { Item: { PK: writingPartition, SK: `${sortableTime(clock.now())}#dead` } } },
          ],
        },
      }),
    );
    clock.advance(100);
    const [change] = streamChanges(1);
    await live.append([change!]);
    clock.advance(2_000);
    expect((await live.after('acme', start, 10)).changes).toEqual([]);
    clock.advance(10_000);
    expect((await live.after('acme', start, 10)).changes.map((c) => c.id)).toEqual([change!.id]);
  });
});
