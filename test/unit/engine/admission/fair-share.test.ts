/**
 * Fair shares of a key's budget: start-time fair queueing over the flows (tenants, and batches of a
 * tenant) that ask for tokens.
 */
import { describe, expect, it } from 'vitest';
import { SqliteRateLimiter } from '../../../../shared/backends/local';
import { type Job, submitJob } from '../../../../shared/engine';
import {
  activeWithinMs,
  askedBy,
  callsOwed,
  chargedTo,
  FairShares,
  fairSharesFromEnv,
  fallenBehind,
  flowsOf,
  leadAllowance,
  servedBy,
  standsBack,
} from '../../../../shared/engine/admission/fair-share';
import {
  chargeCut,
  cutPlan,
  mayTakeFrom,
  owedOrder,
  shareCutFrom,
} from '../../../../shared/engine/admission/share-cut';
import { drive } from '../../../support/memory-ports';
import { happyScript, harness } from '../fixtures';

describe('fair shares (pure)', () => {
  it('makes a flow stand back once it is more than the allowance ahead of another with work', () => {
    let state = askedBy(askedBy({}, 't:a', 0), 't:b', 0);
    for (let i = 0; i <= leadAllowance; i++) state = chargedTo(state, 't:a', 1, 0);
    expect(standsBack(state, 't:a', 0)).toBe(true);
    expect(standsBack(state, 't:b', 0)).toBe(false);
    // Once b has had its calls, a is level again.
    for (let i = 0; i <= leadAllowance; i++) state = chargedTo(state, 't:b', 1, 0);
    expect(standsBack(state, 't:a', 0)).toBe(false);
  });

  it('weighs calls: a flow of weight 3 gets three calls for one of weight 1', () => {
    let state = askedBy(askedBy({}, 't:heavy', 0), 't:light', 0);
    const given = { heavy: 0, light: 0 };
    for (let i = 0; i < 400; i++) {
      const flow = standsBack(state, 't:heavy', 0) ? 'light' : 'heavy';
      given[flow]++;
      state = chargedTo(state, `t:${flow}`, flow === 'heavy' ? 3 : 1, 0);
    }
    expect(given.heavy / 400).toBeCloseTo(0.75, 1);
  });

  it("owes a tenant its part of the window's tokens and what it is behind, less the tokens it holds", () => {
    const weights = { tenants: { a: 5, b: 3, c: 2 } };
    let state = askedBy(askedBy(askedBy({}, 't:a', 0), 't:b', 0), 't:c', 0);
    // Level: each is owed its part of a window of 1 s at 10 calls/s (5, 3 and 2 calls).
    expect(callsOwed(state, weights, 0, 1_000, 10)).toEqual(
      new Map([
        ['a', 5],
        ['b', 3],
        ['c', 2],
      ]),
    );
    // b and c were given two tokens' worth of virtual time each (6 and 4 calls): a is behind by 2,
    // owed 5 + 2 x 5; b and c, ahead of a, are owed less than a call.
    for (let i = 0; i < 6; i++) state = chargedTo(state, 't:b', 3, 0);
    for (let i = 0; i < 4; i++) state = chargedTo(state, 't:c', 2, 0);
    expect(callsOwed(state, weights, 0, 1_000, 10)).toEqual(new Map([['a', 15]]));
    // Tokens a holds within the window count against it; those past it count as given.
    state = chargedTo(state, 't:a', 5, 0, 500);
    state = chargedTo(state, 't:a', 5, 0, 5_000);
    expect(callsOwed(state, weights, 0, 1_000, 10).get('a')).toBe(12);
    // One tenant with work alone is owed nothing: the key's room is its own.
    expect(callsOwed(askedBy({}, 't:a', 0), weights, 0, 1_000, 10).size).toBe(0);
  });

  it('ignores flows without work, and starts a flow that comes back level, without a credit', () => {
    let state = askedBy(askedBy({}, 't:a', 0), 't:b', 0);
    for (let i = 0; i < 50; i++) state = chargedTo(state, 't:a', 1, 0);
    const later = activeWithinMs + 1;
    state = askedBy(state, 't:a', later);
    expect(standsBack(state, 't:a', later)).toBe(false); // b asked too long ago: it has no work
    state = askedBy(state, 't:b', later);
    expect(state['t:b']?.virtual).toBe(50);
    expect(standsBack(state, 't:a', later)).toBe(false);
  });

  it('starts a newcomer where the service stands: tokens another flow reserved ahead are its lead', () => {
    // a asked a moment first (its jobs were submitted first) and reserved 10 tokens, 200 ms apart.
    let state = askedBy({}, 't:a', 0);
    for (let i = 1; i <= 10; i++) state = chargedTo(state, 't:a', 1, 0, i * 200);
    expect(state['t:a']?.virtual).toBe(10);
    expect(servedBy(state['t:a']!, 0)).toBe(0);
    expect(servedBy(state['t:a']!, 1_000)).toBe(5);
    // b asks at once: it starts level with a's service so far, not with a's line, so a stands back
    // and b's calls step up until b has had as many.
    state = askedBy(state, 't:b', 0);
    expect(state['t:b']?.virtual).toBe(0);
    expect(standsBack(state, 't:a', 0)).toBe(true);
    expect(fallenBehind(state, 't:b', 0)).toBe(true);
    for (let i = 1; i <= 10 - leadAllowance; i++) state = chargedTo(state, 't:b', 1, 0, 2_000 + i * 200);
    expect(standsBack(state, 't:a', 0)).toBe(false);
    // A flow back after having no work starts at the others' service, not their reserved line.
    const later = activeWithinMs + 10_000;
    state = askedBy(askedBy(state, 't:a', later), 't:b', later);
    expect(state['t:b']?.virtual).toBe(10); // level with a, without a credit
    state = chargedTo(state, 't:a', 1, later, later + 5_000);
    state = askedBy(state, 't:c', later);
    expect(state['t:c']?.virtual).toBe(10); // a's token 5 s ahead is not yet service
  });

  it('compares a batch only with the batches of its own tenant', () => {
    expect(flowsOf({ tenant: 'acme', batchId: 'b1' })).toEqual({ tenant: 't:acme', batch: 'b:acme:b1' });
    let state = askedBy(askedBy(askedBy({}, 'b:acme:b1', 0), 'b:acme:b2', 0), 'b:beta:b1', 0);
    for (let i = 0; i < 10; i++) state = chargedTo(state, 'b:acme:b1', 1, 0);
    state = chargedTo(state, 'b:acme:b2', 1, 0);
    for (let i = 0; i < 10; i++) state = chargedTo(state, 'b:beta:b1', 1, 0);
    expect(standsBack(state, 'b:acme:b1', 0)).toBe(true);
    expect(standsBack(state, 'b:beta:b1', 0)).toBe(false); // alone in its tenant
  });
});

describe("a tenant behind takes over a leader's reserved tokens", () => {
  const weights = { tenants: { alpha: 5, gamma: 2 } };

  it('may take from a tenant ahead by more than a token of each, never from its own batch', () => {
    const gamma = { tenant: 't:gamma', batch: 'b:gamma:' };
    let state = askedBy(askedBy({}, 't:alpha', 0), 't:gamma', 0);
    // alpha ahead by 0.6 (three tokens at weight 5): not more than 1/5 + 1/2.
    for (let i = 0; i < 3; i++) state = chargedTo(state, 't:alpha', 5, 0);
    expect(mayTakeFrom(state, gamma, 'b:alpha:a1', weights)).toBe(false);
    state = chargedTo(state, 't:alpha', 5, 0);
    expect(mayTakeFrom(state, gamma, 'b:alpha:a1', weights)).toBe(true);
    expect(mayTakeFrom(state, gamma, 'b:gamma:', weights)).toBe(false);
    // Within a tenant, a batch more than two tokens ahead of the call's batch.
    let batches = askedBy(askedBy({}, 'b:alpha:a1', 0), 'b:alpha:a2', 0);
    for (let i = 0; i < 3; i++) batches = chargedTo(batches, 'b:alpha:a1', 1, 0);
    expect(mayTakeFrom(batches, { tenant: 't:alpha', batch: 'b:alpha:a2' }, 'b:alpha:a1', weights)).toBe(
      true,
    );
  });

  it("spreads its takings at its share's pace: from when its virtual time comes", () => {
    // At 5 calls/s and weights 5 + 2 with work, the key's virtual time moves 5/7 a second.
    let state = askedBy(askedBy({}, 't:alpha', 0), 't:gamma', 0);
    expect(shareCutFrom(state, 't:gamma', weights, 0, 5)).toBe(0);
    state = chargedTo(state, 't:gamma', 2, 0);
    expect(shareCutFrom(state, 't:gamma', weights, 0, 5)).toBeCloseTo(700, 6);
  });

  it('plans on the tokens it charged, and gives the owner back its charge when one is taken', () => {
    const shares = new FairShares({ tenants: { alpha: 5, gamma: 2 } });
    const alpha = { tenant: 'alpha', batchId: 'a1' };
    const gamma = { tenant: 'gamma', batchId: undefined };
    shares.asks('k', alpha, 0);
    for (let i = 1; i <= 11; i++) shares.charge('k', alpha, 0, i * 200);
    expect(shares.stateOf('k')['t:alpha']?.virtual).toBeCloseTo(2.2, 6);
    // alpha alone: nothing to take.
    expect(cutPlan(shares, 'k', alpha, 0)).toBeUndefined();
    expect(shares.asks('k', gamma, 0)).toBe('behind');
    const plan = cutPlan(shares, 'k', gamma, 0);
    expect(plan?.takes(200)).toBe(true);
    expect(plan?.takes(300)).toBe(false); // no token of a leader's there
    expect(plan?.from(5)).toBe(0);
    chargeCut(shares, 'k', gamma, 0, 200);
    const state = shares.stateOf('k');
    expect(state['t:alpha']?.virtual).toBeCloseTo(2, 6);
    expect(state['b:alpha:a1']?.virtual).toBe(10);
    expect(state['b:alpha:a1']?.ahead?.some((token) => token.at === 200)).toBe(false);
    expect(state['t:gamma']?.virtual).toBeCloseTo(0.5, 6);
    chargeCut(shares, 'k', gamma, 0, 400);
    expect(cutPlan(shares, 'k', gamma, 0)?.takes(600)).toBe(true);
    // After a third, gamma is no longer behind by more than a token of each: alpha keeps the rest.
    chargeCut(shares, 'k', gamma, 0, 600);
    expect(shares.stateOf('k')['t:alpha']?.virtual).toBeCloseTo(1.6, 6);
    expect(cutPlan(shares, 'k', gamma, 0)).toBeUndefined();
  });
});

describe('the order in which tenants are owed the next tokens (parked jobs released on aws)', () => {
  const weights = { tenants: { alpha: 5, beta: 3, gamma: 2 } };

  it('is weighted fair queueing from the virtual times: the least first, each pick 1/weight on', () => {
    // Level: over ten picks, 5 of alpha's, 3 of beta's and 2 of gamma's, interleaved as the shares.
    let state = askedBy(askedBy(askedBy({}, 't:alpha', 0), 't:beta', 0), 't:gamma', 0);
    const tenants = [
      ...Array.from({ length: 6 }, () => 'alpha'),
      ...Array.from({ length: 4 }, () => 'beta'),
      ...Array.from({ length: 3 }, () => 'gamma'),
    ];
    const order = owedOrder(state, weights, tenants);
    expect([...order].sort((a, b) => a - b)).toEqual(tenants.map((_, index) => index));
    const firstTen = order.slice(0, 10).map((index) => tenants[index]);
    expect(firstTen.filter((tenant) => tenant === 'alpha')).toHaveLength(5);
    expect(firstTen.filter((tenant) => tenant === 'beta')).toHaveLength(3);
    expect(firstTen.filter((tenant) => tenant === 'gamma')).toHaveLength(2);
    // Ties keep the given order, and a tenant's own calls keep theirs.
    expect(order.slice(0, 3)).toEqual([0, 6, 10]);
    expect(order.filter((index) => tenants[index] === 'alpha')).toEqual([0, 1, 2, 3, 4, 5]);
    // alpha 2 ahead (ten tokens at weight 5): gamma's and beta's calls first, in the id order's stead.
    for (let i = 0; i < 10; i++) state = chargedTo(state, 't:alpha', 5, 0);
    expect(owedOrder(state, weights, ['alpha', 'alpha', 'beta', 'gamma'])).toEqual([2, 3, 0, 1]);
  });

  it('starts a tenant the state does not hold level with the least it holds, with no credit', () => {
    let state = askedBy(askedBy({}, 't:alpha', 0), 't:beta', 0);
    for (let i = 0; i < 10; i++) state = chargedTo(state, 't:alpha', 5, 0);
    for (let i = 0; i < 3; i++) state = chargedTo(state, 't:beta', 3, 0);
    // beta at 1, alpha at 2: delta (unknown, weight 1) starts at 1, level with beta and after it in
    // the given order; its first pick brings it level with alpha, which comes first in that order.
    expect(owedOrder(state, weights, ['alpha', 'beta', 'delta', 'delta'])).toEqual([1, 2, 0, 3]);
    // None held: the given order, but for the weights.
    expect(owedOrder({}, weights, ['gamma', 'alpha', 'alpha'])).toEqual([0, 1, 2]);
    expect(owedOrder({}, weights, [])).toEqual([]);
  });
});

describe('OPFLOW_SHARES', () => {
  it('is equal weights unset, off turns shares off, and tenant=weight pairs weigh tenants', () => {
    expect(fairSharesFromEnv({})?.weights).toEqual({ tenants: {} });
    expect(fairSharesFromEnv({ OPFLOW_SHARES: 'off' })).toBeUndefined();
    expect(fairSharesFromEnv({ OPFLOW_SHARES: 'acme=3, beta=0.5' })?.weights).toEqual({
      tenants: { acme: 3, beta: 0.5 },
    });
  });

  it('refuses what it cannot read, naming the variable and the part', () => {
    expect(() => fairSharesFromEnv({ OPFLOW_SHARES: 'acme' })).toThrow(
      /OPFLOW_SHARES: "acme" is not tenant=weight/,
    );
    expect(() => fairSharesFromEnv({ OPFLOW_SHARES: 'acme=0' })).toThrow(
      /OPFLOW_SHARES: acme must be a number above 0/,
    );
    expect(() => fairSharesFromEnv({ OPFLOW_SHARES: 'a=1,a=2' })).toThrow(/named twice/);
    expect(() => fairSharesFromEnv({ OPFLOW_SHARES: 'a b=1' })).toThrow(/"a b" is not a tenant name/);
  });
});

/**
 * Tenant b's share of the key's calls from 30 s to 120 s, when tenant a's 30 jobs were submitted
 * before b's 30 (a key of 1 call/s: both still have work at 120 s).
 */
async function lateTenantShare(shares: FairShares | undefined): Promise<number> {
  const h = harness(happyScript(0), {
    rateLimiter: SqliteRateLimiter.inMemory({ ratePerSecond: 1 }),
    fairShares: shares,
  });
  const startedAt = h.clock.now();
  for (const tenant of ['a', 'b'])
    for (let i = 0; i < 30; i++)
      await submitJob(h.deps, { workflow: 'demo', tenant, input: { issue: `${tenant} ${i}` } });
  const callsAt = async (seconds: number) => {
    await drive(h.deps, h.queue, h.clock, { until: () => h.clock.now() - startedAt >= seconds * 1000 });
    const jobs: Job[] = (await h.store.list({ limit: 1000 })).jobs;
    const calls = (tenant: string) =>
      jobs.filter((job) => job.tenant === tenant).reduce((sum, job) => sum + job.usage.calls, 0);
    return { a: calls('a'), b: calls('b') };
  };
  const from = await callsAt(30);
  const to = await callsAt(120);
  const b = to.b - from.b;
  return b / (to.a - from.a + b);
}

describe('fair shares in admission', () => {
  it('give a tenant that came second half of the key while both have work', async () => {
    const withShares = await lateTenantShare(new FairShares());
    const without = await lateTenantShare(undefined);
    expect(withShares).toBeGreaterThan(0.45);
    expect(withShares).toBeLessThan(0.55);
    expect(without).toBeLessThan(0.3);
    // Two runs of 120 s of virtual time over 60 jobs: about 12 s alone, more on a loaded machine.
  }, 90_000);
});
