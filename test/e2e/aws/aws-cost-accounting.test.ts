/**
 * The accounting of `npm run bench:aws-cost` (bench/aws-cost-accounting.ts), held against what the
 * emulators saw, so its figures cannot be made up: for one novelty check, the messages the functions
 * sent at the SQS endpoint, the messages the step worker received, its `step done` lines and the
 * job's own count of the messages its commits scheduled agree; the write units it sums are DynamoDB's units for the items written
 * (1 KB each, a transaction twice); a write refused by its condition is counted, not lost.
 */
import {
  DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  TransactWriteItemsCommand,
} from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type CountedWorld,
  countedWorld,
  countsOf,
  noveltyCheck,
  runAlone,
} from '../../../bench/aws-cost-world';
import { REAL_PROCESS_TIMEOUT_MS } from '../../support/timeouts';

describe('the aws cost bench counts what the emulators saw', { timeout: REAL_PROCESS_TIMEOUT_MS }, () => {
  let counted: CountedWorld;

  beforeAll(async () => {
    counted = await countedWorld({ family: 'uniform', limiter: 'sliding', qps: 5, seed: 7, admission: 'on' });
  }, REAL_PROCESS_TIMEOUT_MS);
  afterAll(async () => {
    await counted?.stop();
  });

  it('one novelty check: every message sent is received once and is one the job counted', async () => {
    const { job } = await runAlone(counted.world, 'one.md');
    expect(job.status).toBe('SUCCEEDED');
    const counts = countsOf(counted, 1, [job]);
    const steps = counted.world.logLines().filter((line) => line.message === 'step done').length;
    expect(counts.messagesSent).toBeGreaterThan(5);
    expect(counts.messagesReceived).toBe(counts.messagesSent);
    expect(steps).toBe(counts.messagesReceived);
    // The record counts each message its commits scheduled: all but the api's first one.
    expect((job.messages ?? 0) + 1).toBe(counts.messagesSent);
    // Every commit of the job (its version) is a write of its record; history and the key's bucket add theirs.
    expect(counted.dynamo.tally.writes.byKind.JOB ?? 0).toBeGreaterThanOrEqual(job.version);
    expect(counts.writeUnits).toBeGreaterThan(counts.messagesSent);
    expect(counts.readUnits).toBeGreaterThan(0);
    expect(counts.workerRuns).toBeGreaterThan(0);
    expect(counts.workerMs).toBeGreaterThan(0);
  });

  it("a backlog's first messages hold their tokens: no new job's first look waits with a second message", async () => {
    // The step worker records the tenant's key's bucket as it reads the key; the api books there.
    await runAlone(counted.world, 'first.md');
    const from = counted.world.logLines().length;
    const ids: string[] = [];
    // 15 jobs at 5 calls/s: a line of 3 s, longer than a new job's first call may reserve (2 s).
    for (let i = 0; i < 15; i++)
      ids.push(await counted.world.submit({ ...noveltyCheck, label: `b-${i}.md` }));
    const jobs = await counted.world.settle(ids, { maxRounds: 50_000, drain: true });
    expect(jobs.map((job) => job.status)).toEqual(ids.map(() => 'SUCCEEDED'));
    const lines = counted.world.logLines().slice(from);
    const firstLooks = ids.map((id) =>
      lines.find((line) => line.message === 'step done' && line.jobId === id),
    );
    // Each job's first message ran its first call: none found the line taken and waited again.
    expect(firstLooks.map((line) => line?.outcome)).toEqual(ids.map(() => 'committed'));
  });

  it('write and read units are DynamoDB’s for the items written and read', async () => {
    const client = new DynamoDBClient({
      endpoint: counted.dynamo.url,
      region: counted.world.emulators.region,
      credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    });
    const TableName = counted.world.env.OPFLOW_TABLE_NAME as string;
    const { writes, reads } = counted.dynamo.tally;
    const before = {
      writes: writes.total,
      reads: reads.total,
      failures: counted.dynamo.tally.conditionFailures,
    };
    const item = (pk: string, bytes: number) => ({
      PK: { S: pk },
      SK: { S: 'x' },
      data: { S: 'a'.repeat(bytes) },
    });
    // 2,500 bytes of data: 3 units (1 KB each, rounded up); a small item: 1.
    await client.send(new PutItemCommand({ TableName, Item: item('BENCHTEST#big', 2_500) }));
    expect(writes.total - before.writes).toBe(3);
    await client.send(new PutItemCommand({ TableName, Item: item('BENCHTEST#small', 10) }));
    expect(writes.total - before.writes).toBe(4);
    expect(writes.byKind.BENCHTEST).toBe(4);
    // A transaction costs twice: two small items, 4 units.
    await client.send(
      new TransactWriteItemsCommand({
        TransactItems: [
          { Put: { TableName, Item: item('BENCHTEST#t1', 10) } },
          { Put: { TableName, Item: item('BENCHTEST#t2', 10) } },
        ],
      }),
    );
    expect(writes.total - before.writes).toBe(8);
    // Refused by its condition: no capacity answered, counted apart.
    await expect(
      client.send(
        new PutItemCommand({
          TableName,
          Item: item('BENCHTEST#small', 10),
          ConditionExpression: 'attribute_not_exists(PK)',
        }),
      ),
    ).rejects.toThrow();
    expect(counted.dynamo.tally.conditionFailures - before.failures).toBe(1);
    expect(writes.total - before.writes).toBe(8);
    // A strongly consistent read of a 2.5 KB item: 1 unit (4 KB each); eventually consistent: half.
    const key = { PK: { S: 'BENCHTEST#big' }, SK: { S: 'x' } };
    await client.send(new GetItemCommand({ TableName, Key: key, ConsistentRead: true }));
    await client.send(new GetItemCommand({ TableName, Key: key }));
    expect(reads.total - before.reads).toBe(1.5);
    client.destroy();
  });

  it('SQS: messages are counted per message, requests per request', async () => {
    const { SQSClient, SendMessageBatchCommand, SendMessageCommand, PurgeQueueCommand } = await import(
      '@aws-sdk/client-sqs'
    );
    const sqs = new SQSClient({
      endpoint: counted.sqs.url,
      region: counted.world.emulators.region,
      credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    });
    const QueueUrl = counted.world.queueUrl;
    const before = { ...counted.sqs.tally };
    await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: 'one' }));
    await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl,
        Entries: ['a', 'b', 'c'].map((id) => ({ Id: id, MessageBody: id })),
      }),
    );
    expect(counted.sqs.tally.messagesSent - before.messagesSent).toBe(4);
    expect(counted.sqs.tally.sendRequests - before.sendRequests).toBe(2);
    await sqs.send(new PurgeQueueCommand({ QueueUrl }));
    sqs.destroy();
  });
});
