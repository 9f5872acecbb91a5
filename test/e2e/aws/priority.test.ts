// A job's priority on aws, end to end: the bundled api and step worker on the emulators, the key's
// bucket in DynamoDB, tokens held by SQS messages, admission on. A batch of patent counts saturates
// a key of 5 calls/s (the sandbox enforces it in a sliding second, and opflow runs at it). A `high`
// job submitted behind it cuts in at a token reserved ahead (the DynamoDB lane): its call comes
// within about a token interval of the soonest its message can come back (SQS delays are whole
// seconds), where a normal job submitted with it waits its place at the line's end. The holder of
// the token taken over finds it gone and takes a new one: every job succeeds, each pays one call,
// and no call is throttled.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LedgerEntry } from '../../../shared/sandbox';
import { REAL_PROCESS_TIMEOUT_MS } from '../../support/timeouts';
import { AwsWorld } from './harness/aws-world';

const qps = 5;
const intervalMs = 1000 / qps;
/** An SQS delay is whole seconds: a message sent to wait for a token comes back up to 1 s after it. */
const sqsGranularityMs = 1000;

let world: AwsWorld;
beforeAll(async () => {
  world = await AwsWorld.start({
    keyQps: qps,
    sandbox: { ledgerBodies: true },
    env: (env) => ({ ...env, OPFLOW_QPS: String(qps), OPFLOW_ADMISSION: 'on', OPFLOW_SHARES: 'off' }),
  });
}, REAL_PROCESS_TIMEOUT_MS);
afterAll(async () => {
  await world?.stop();
});

const count = (query: string, extra: Record<string, unknown> = {}) =>
  world.submit({ workflow: 'patent-count', input: { query }, ...extra });

describe('priority on aws: a high job cuts in ahead of a saturated batch', {
  timeout: REAL_PROCESS_TIMEOUT_MS,
}, () => {
  it('calls within about a token interval, where a normal job waits its place in line', async () => {
    const batch: string[] = [];
    for (let i = 0; i < 80; i++) batch.push(await count(`TTL:(lamp ${i})`));
    // Run the batch until its line is long: 80 calls at 5/s are 16 s of the key's budget.
    const calls = () => world.sandbox.ledger.entries().filter((entry) => entry.operationId !== 'download');
    for (let round = 0; round < 500 && calls().length < 20; round++) await world.deliverOnce();
    expect(calls().length).toBeGreaterThanOrEqual(20);

    const submittedAt = world.now();
    const high = await count('TTL:(urgent lamp)', { priority: 'high' });
    const normal = await count('TTL:(routine lamp)');
    const jobs = await world.settle([...batch, high, normal], { drain: true });
    expect(jobs.map((job) => job.status).filter((status) => status !== 'SUCCEEDED')).toEqual([]);
    expect(jobs.find((job) => job.id === high)?.priority).toBe('high');

    const all = calls();
    // Each job paid one call: the holder whose token was taken over did not call on it too.
    expect(all).toHaveLength(82);
    expect(all.filter((entry) => entry.outcome !== 'ok').map((entry) => entry.httpStatus)).toEqual([]);
    const callOf = (query: string) => all.find((entry) => JSON.stringify(entry.body).includes(query));
    const highCall = callOf('urgent lamp') as LedgerEntry;
    const normalCall = callOf('routine lamp') as LedgerEntry;
    const batchCallsBefore = (call: LedgerEntry) =>
      all.filter((entry) => entry.time > submittedAt && entry.seq < call.seq && entry !== highCall).length;
    const highWaitMs = highCall.time - submittedAt;
    const normalWaitMs = normalCall.time - submittedAt;
    const figures = `high: ${highWaitMs} ms, ${batchCallsBefore(highCall)} batch calls before it; normal: ${normalWaitMs} ms, ${batchCallsBefore(normalCall)}`;
    expect(highWaitMs, figures).toBeLessThanOrEqual(sqsGranularityMs + intervalMs);
    expect(batchCallsBefore(highCall), figures).toBeLessThanOrEqual(
      (sqsGranularityMs + intervalMs) / intervalMs,
    );
    // The normal job takes its place at the line's end: many of the batch's calls go first.
    expect(batchCallsBefore(normalCall), figures).toBeGreaterThan(10);
  });
});
