// The change log of GET /events on aws, on DynamoDB Local: the job table's stream, read the way
// Lambda's DynamoDB Streams event source reads it (scripts/lambda/dynamodb-stream-source.ts) and
// handed to the events function's logic, becomes per-tenant change items that a reader pages through
// after a cursor: in order, tenant by tenant, only once settled, and reset past the day kept.
import { describe, expect, it } from 'vitest';
import { JOB_CHANGE_FILTER } from '../../../../infra/lib/live-events';
import { DynamoDbStreamSource } from '../../../../scripts/lambda/dynamodb-stream-source';
import { DynamoDbJobStore } from '../../../../shared/backends/aws';
import {
  changeRetentionMs,
  cursorAt,
  DynamoDbChangeLog,
  isChangeCursor,
} from '../../../../shared/backends/aws/dynamodb-change-log';
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
      const start = log.head();
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
    expect(page).toEqual({ changes: [], cursor: log.head(), reset: true });
  });
});
