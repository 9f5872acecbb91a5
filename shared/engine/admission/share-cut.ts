/**
 * A tenant (or a batch of a tenant) behind its fair share takes over a leader's token reserved
 * ahead, at its share's pace, instead of waiting at the line's end: the lead the others reserved
 * before it asked is repaid at once, not over the next minute. The rule of both ledgers: the local
 * engine's (`FairShares`, in memory, with the SQLite limiter's `shareCutIn`) and the aws bucket
 * item's (dynamodb-share-ledger.ts, in `take`). Pure but for `FairShares`' state; loaded on first
 * use (the api's and step worker's bundles are at their budgets, and on aws the ledger's chunk
 * carries it).
 */
import type { Job } from '../job-record';
import {
  activeWithinMs,
  type FairShares,
  type FlowState,
  flowsOf,
  type ShareState,
  type ShareWeights,
  servedBy,
  weightOf,
} from './fair-share';

/**
 * A call behind its share takes over a leading tenant's token at most this far ahead (a message's
 * longest delay is 15 minutes); its horizon does not bound it: the token is the leader's lead,
 * which it takes back at its share's pace (`shareCutFrom`), not a place in line ahead of others.
 */
export const shareCutAheadMs = 10 * 60_000;

/** The tenant of a batch flow (`b:<tenant>:<batch>`). */
export function tenantOfBatch(batch: string): string {
  return batch.slice(2, batch.indexOf(':', 2));
}

/**
 * Whether a call of `own` (a job's tenant and batch flows) may take over a token reserved ahead for
 * the batch flow `owner`: its tenant is ahead of the call's tenant by more than a token of each (in
 * virtual time, 1/weight of the owner's plus 1/weight of its own), or, of the call's own tenant,
 * the batch is so far ahead of the call's batch. After the cut the call is still not ahead, so the
 * owner never takes the token back. The rule of both ledgers (`cutPlan` here and the aws
 * bucket item's, dynamodb-share-ledger.ts `ledgerCuttable`).
 */
export function mayTakeFrom(
  state: ShareState,
  own: { tenant: string; batch: string },
  owner: string,
  weights: ShareWeights,
): boolean {
  if (owner === own.batch) return false;
  const ownerTenant = tenantOfBatch(owner);
  const ownTenant = own.tenant.slice(2);
  if (`t:${ownerTenant}` === own.tenant) {
    const ownBatch = state[own.batch]?.virtual;
    return ownBatch !== undefined && (state[owner]?.virtual ?? Number.NEGATIVE_INFINITY) - ownBatch > 2;
  }
  const ownVirtual = state[own.tenant]?.virtual;
  return (
    ownVirtual !== undefined &&
    (state[`t:${ownerTenant}`]?.virtual ?? Number.NEGATIVE_INFINITY) - ownVirtual >
      1 / weightOf(weights, ownerTenant) + 1 / weightOf(weights, ownTenant)
  );
}

/**
 * When the tenant flow `tenant` is owed its next token, at the earliest: the tenants' service is
 * shared in proportion to weights, so the key's virtual time (the least served among the other
 * tenants with work, counting only tokens come) moves on by `ratePerSecond` / (the weights with
 * work) a second; the tenant's own virtual time is reached that much later. A tenant behind takes
 * over a token from then on, so its takings are spread at its share's pace over the leaders' line
 * instead of all at its head.
 */
export function shareCutFrom(
  state: ShareState,
  tenant: string,
  weights: ShareWeights,
  now: number,
  ratePerSecond: number,
): number {
  const own = state[tenant];
  if (!own || ratePerSecond <= 0) return now;
  let weightsWithWork = weightOf(weights, tenant.slice(2));
  let service: number | undefined;
  for (const [name, flow] of Object.entries(state)) {
    if (!name.startsWith('t:') || name === tenant || now - flow.askedAt > activeWithinMs) continue;
    weightsWithWork += weightOf(weights, name.slice(2));
    const served = servedBy(flow, now);
    if (service === undefined || served < service) service = served;
  }
  if (service === undefined) return now;
  return now + (Math.max(0, own.virtual - service) * weightsWithWork * 1000) / ratePerSecond;
}

/**
 * The order in which calls of `tenants` (one entry a call, a tenant named as often as it has calls)
 * are owed the key's next tokens, as indices into `tenants`: weighted fair queueing over the
 * tenants' virtual times, the least first, each pick moving its tenant on by 1/weight. A tenant
 * the state does not hold (forgotten, or never charged) starts level with the least of those given
 * that it holds: as a flow that comes back after having no work, with no credit to spend. Ties keep
 * the given order, and so do a tenant's own calls. The aws releaser of parked jobs hands out tokens
 * in this order (release.ts, through `RateLimiter.shareOrder`): in the parked jobs' due order
 * (their ids, for jobs parked at one time) the tokens would follow how many each tenant parked.
 */
export function owedOrder(state: ShareState, weights: ShareWeights, tenants: readonly string[]): number[] {
  const held = tenants
    .map((tenant) => state[`t:${tenant}`]?.virtual)
    .filter((virtual): virtual is number => virtual !== undefined);
  const start = held.length > 0 ? Math.min(...held) : 0;
  const queues = new Map<string, { virtual: number; calls: number[] }>();
  for (const [index, tenant] of tenants.entries()) {
    const queue = queues.get(tenant);
    if (queue) queue.calls.push(index);
    else queues.set(tenant, { virtual: state[`t:${tenant}`]?.virtual ?? start, calls: [index] });
  }
  const order: number[] = [];
  for (;;) {
    let best: [string, { virtual: number; calls: number[] }] | undefined;
    for (const entry of queues)
      if (entry[1].calls.length > 0 && (best === undefined || entry[1].virtual < best[1].virtual))
        best = entry;
    if (best === undefined) return order;
    const [tenant, queue] = best;
    order.push(queue.calls.shift() as number);
    queue.virtual += 1 / weightOf(weights, tenant);
  }
}

/** The token at `at` given back by its batch flow `owner` (taken over): its charge is undone. */
export function refundedTo(state: ShareState, owner: string, weights: ShareWeights, at: number): ShareState {
  const tenant = tenantOfBatch(owner);
  const flows: Record<string, FlowState> = { ...state };
  for (const [flow, by] of [
    [owner, 1],
    [`t:${tenant}`, 1 / weightOf(weights, tenant)],
  ] as const) {
    const own = flows[flow];
    if (!own) continue;
    const ahead = own.ahead?.filter((token) => token.at !== at);
    flows[flow] = { ...own, virtual: own.virtual - by, ahead: ahead && ahead.length > 0 ? ahead : undefined };
  }
  return flows;
}

/**
 * The tokens reserved ahead that the job's call may take over (its tenant, or its batch, is behind
 * their owners: `mayTakeFrom`) and from when (`shareCutFrom`, at the key's rate), after its
 * `FairShares.asks`; undefined when it may take none. Only tokens this process charged are known.
 */
export function cutPlan(
  shares: FairShares,
  bucket: string,
  job: Pick<Job, 'tenant' | 'batchId'>,
  now: number,
): { takes: (at: number) => boolean; from: (ratePerSecond: number) => number; before: number } | undefined {
  const state = shares.stateOf(bucket);
  const own = flowsOf(job);
  const owners = ownersAhead(state, now);
  const takes = new Map<string, boolean>();
  for (const owner of new Set(owners.values()))
    takes.set(owner, mayTakeFrom(state, own, owner, shares.weights));
  if (![...takes.values()].some(Boolean)) return undefined;
  return {
    takes: (at) => takes.get(owners.get(at) ?? '') === true,
    from: (ratePerSecond) => shareCutFrom(state, own.tenant, shares.weights, now, ratePerSecond),
    before: now + shareCutAheadMs,
  };
}

/**
 * The job's call took over the token reserved for `at` (a share cut, or a `high` call's cut-in):
 * its owner (a flow of this process) is given back its charge, and the job charged, as the aws
 * ledger does (dynamodb-share-ledger.ts `ledgerRefunded`).
 */
export function chargeCut(
  shares: FairShares,
  bucket: string,
  job: Pick<Job, 'tenant' | 'batchId'>,
  now: number,
  at: number,
): void {
  shares.update(bucket, now, (state) => {
    const owner = ownersAhead(state, now).get(at);
    return owner === undefined ? state : refundedTo(state, owner, shares.weights, at);
  });
  shares.charge(bucket, job, now, at);
}

/** The batch flow each token still ahead was given to, by the token's time. */
function ownersAhead(state: ShareState, now: number): Map<number, string> {
  const owners = new Map<number, string>();
  for (const [name, flow] of Object.entries(state)) {
    if (!name.startsWith('b:')) continue;
    for (const token of flow.ahead ?? []) if (token.at > now) owners.set(token.at, name);
  }
  return owners;
}
