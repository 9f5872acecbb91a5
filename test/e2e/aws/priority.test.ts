// A job's priority on aws, end to end: the bundled api and step worker on the emulators, the key's
// bucket in DynamoDB, tokens held by SQS messages, admission on. A batch of patent counts saturates
// a key of 5 calls/s (the sandbox enforces it in a sliding second, and opflow runs at it). A `high`
// job submitted behind it cuts in at a token reserved ahead (the DynamoDB lane), where a normal job
// submitted with it waits its place at the line's end. The holder of the token taken over finds it
// gone and takes a new one: every job succeeds, each pays one call, and no call is throttled.
//
// Counted in tokens, not milliseconds: each write of the key's bucket item that gives a token names
// it (`grant`), and the job table's stream holds every version of the item, so it is the key's grant
// log (dynamodb-rate-grants.ts), read here as the SQLite one is (`tokensWaited`). The `high` call's
// bound is the tokens of one SQS delay step and one more: its message comes back in whole seconds,
// so it takes the latest reserved token of the soonest second it can come back in.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tokensGivenBetween, tokensWaited } from '../../../shared/engine/admission/priority-lane';
import { REAL_PROCESS_TIMEOUT_MS } from '../../support/timeouts';
import { AwsWorld } from './harness/aws-world';
import { grantLogsOf } from './harness/grant-log';

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

/** The key's grant log: every version of its bucket item on the job table's stream, in grant order. */
async function grantLog() {
  const keys = [...(await grantLogsOf(world)).values()];
  expect(keys).toHaveLength(1);
  return keys[0]!;
}

describe('priority on aws: a high job cuts in ahead of a saturated batch', {
  timeout: REAL_PROCESS_TIMEOUT_MS,
}, () => {
  it("waits at most the tokens of one SQS delay step, counted on the key's grant log, where a normal job waits its place in line", async () => {
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

    const grants = await grantLog();
    const highWaited = tokensWaited(grants, high);
    // A normal job's ask is its submission: parked there, its refusal wrote nothing, and its grant
    // names its release. So it is counted from the submission, as the high job is (asked then).
    const normalToken = grants.filter((grant) => grant.by === normal).at(-1);
    const normalWaited =
      normalToken === undefined
        ? undefined
        : tokensGivenBetween(grants, normal, submittedAt, normalToken.tokenAt);
    const figures = `tokens waited: high ${highWaited.join(', ')}, normal ${normalWaited}; ${grants.length} grants, cut-ins ${grants.filter((grant) => grant.kind === 'cut-in').length}`;
    // One call, one token, cut in at a token reserved for the batch.
    expect(highWaited, figures).toHaveLength(1);
    expect(
      grants.some((grant) => grant.by === high && grant.kind === 'cut-in'),
      figures,
    ).toBe(true);
    expect(grants.find((grant) => grant.by === high)?.askedAt, figures).toBe(submittedAt);
    expect(highWaited[0], figures).toBeLessThanOrEqual((sqsGranularityMs + intervalMs) / intervalMs);
    // The normal job takes its place at the line's end: many of the batch's tokens go first.
    expect(normalWaited, figures).toBeGreaterThan(10);
    // Every job was given a token, and every token given once (a cut-in's token is its cutter's).
    expect(new Set(grants.map((grant) => grant.by)).size, figures).toBe(82);
    const cut = new Set(grants.filter((grant) => grant.kind === 'cut-in').map((grant) => grant.tokenAt));
    const given = grants.filter((grant) => grant.kind === 'cut-in' || !cut.has(grant.tokenAt));
    expect(new Set(given.map((grant) => grant.tokenAt)).size, figures).toBe(given.length);
  });
});
