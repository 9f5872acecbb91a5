/**
 * Fair shares of a key's budget: no tenant, and no batch of a tenant, starves another. Each tenant
 * has a weight (`OPFLOW_SHARES`, default 1 each); the batches of a tenant (its jobs without a
 * batch are one more) share its part equally. Among the tenants (and a tenant's batches) that have
 * work, each is owed the key's calls in proportion to its weight.
 *
 * The scheme is start-time fair queueing over the calls that ask for a token: every flow (a
 * tenant, or one batch of a tenant) has a virtual time, advanced by 1/weight per call it is given.
 * A flow more than `leadAllowance` ahead of the least-served flow with work stands back: its calls
 * reserve only as far ahead as a new job's first call does, so while the key's line is full they
 * wait and the flows behind fill the line. A flow that far behind another steps up: its calls
 * (new jobs' first calls too) reserve with the full horizon. A flow that comes back after having no work starts
 * level with the others, not with a credit it could spend in a burst. The arithmetic is pure
 * (`askedBy`, `chargedTo`, `standsBack`); `FairShares` keeps one state per key in memory.
 */
import * as z from 'zod';
import type { Job } from '../job-record';

/** The tenants' weights: a tenant not named weighs 1. */
export interface ShareWeights {
  tenants: Readonly<Record<string, number>>;
}

/**
 * One flow's place: its virtual time (calls given / weight), when it last asked for a token, and
 * the part of its virtual time given as tokens still ahead (reserved for later: `at`, `by`).
 */
export interface FlowState {
  virtual: number;
  askedAt: number;
  ahead?: readonly { at: number; by: number }[] | undefined;
}

/** The flow's virtual time counting only the tokens whose time has come by `now`. */
export function servedBy(flow: FlowState, now: number): number {
  let future = 0;
  for (const token of flow.ahead ?? []) if (token.at > now) future += token.by;
  return flow.virtual - future;
}

/** The flows of one key's budget, by flow name (`t:<tenant>`, `b:<tenant>:<batch>`). */
export type ShareState = Readonly<Record<string, FlowState>>;

/**
 * A flow that asked for a token this recently has work: longer than a call sent back to wait may
 * stay away (its wait, plus a spread of at most 30 s; acquire-token.ts).
 */
export const activeWithinMs = 45_000;
/**
 * How far ahead (in virtual time: calls of a flow of weight 1) a flow may be before it stands back.
 * One: a flow's lead then swings by at most 2 over a window, 2 × weight tokens of the window's
 * 30 × weight at 5 calls/s and weights summing to 10 (6.7 % of its share; the goal is 10 %);
 * at 2 the swing could reach 4 (13.3 %). Measured in bench/fairness.md.
 */
export const leadAllowance = 1;
/** A flow that has not asked for this long is forgotten (its lead or lag with it). */
export const forgetAfterMs = 10 * 60_000;

/** The two flows a job's calls count in: its tenant's, and its batch's within that tenant. */
export function flowsOf(job: Pick<Job, 'tenant' | 'batchId'>): { tenant: string; batch: string } {
  return { tenant: `t:${job.tenant}`, batch: `b:${job.tenant}:${job.batchId ?? ''}` };
}

/** The flows a flow is compared with: every tenant, or the batches of the same tenant. */
function groupOf(flow: string): string {
  return flow.startsWith('t:') ? 't:' : flow.slice(0, flow.indexOf(':', 2) + 1);
}

/** The virtual times of the other flows of `flow`'s group that have work at `now`. */
function othersActive(state: ShareState, flow: string, now: number): number[] {
  const group = groupOf(flow);
  const found: number[] = [];
  for (const [name, other] of Object.entries(state)) {
    if (name === flow || !name.startsWith(group) || groupOf(name) !== group) continue;
    if (now - other.askedAt <= activeWithinMs) found.push(other.virtual);
  }
  return found;
}

/** The least virtual time among the other flows of `flow`'s group that have work at `now`. */
function leastActive(state: ShareState, flow: string, now: number): number | undefined {
  const others = othersActive(state, flow, now);
  return others.length === 0 ? undefined : Math.min(...others);
}

/**
 * The least virtual time served by `now` (`servedBy`) among the other flows of `flow`'s group that
 * have work: where the key's service stands.
 */
function leastServed(state: ShareState, flow: string, now: number): number | undefined {
  const group = groupOf(flow);
  let least: number | undefined;
  for (const [name, other] of Object.entries(state)) {
    if (name === flow || !name.startsWith(group) || groupOf(name) !== group) continue;
    if (now - other.askedAt > activeWithinMs) continue;
    const served = servedBy(other, now);
    if (least === undefined || served < least) least = served;
  }
  return least;
}

/**
 * The flow asks for a token at `now`: it has work. A flow new, or back after having none, starts
 * level with where the key's service stands: the least virtual time among the flows with work,
 * counting only their tokens already come (never below its own time). Tokens another flow
 * reserved ahead are not yet service: counted, a flow that asked a moment before the others
 * (the first of a batch submitted together) would keep the line it reserved as a lead no one
 * makes up.
 */
export function askedBy(state: ShareState, flow: string, now: number): ShareState {
  const own = state[flow];
  const idle = own === undefined || now - own.askedAt > activeWithinMs;
  const least = idle ? leastServed(state, flow, now) : undefined;
  const virtual = Math.max(own?.virtual ?? 0, least ?? 0);
  return {
    ...state,
    [flow]: { ...own, virtual, askedAt: Math.max(now, own?.askedAt ?? now) },
  };
}

/**
 * The flow was given a token for `at` (now, or reserved for later): its virtual time moves on by
 * 1/weight.
 */
export function chargedTo(
  state: ShareState,
  flow: string,
  weight: number,
  now: number,
  at = now,
): ShareState {
  const own = state[flow] ?? { virtual: 0, askedAt: now };
  const by = 1 / weight;
  const ahead = [...(own.ahead ?? []).filter((token) => token.at > now), ...(at > now ? [{ at, by }] : [])];
  return {
    ...state,
    [flow]: { ...own, virtual: own.virtual + by, ahead: ahead.length > 0 ? ahead : undefined },
  };
}

/** Whether the flow is more than `leadAllowance` ahead of the least-served other flow with work. */
export function standsBack(state: ShareState, flow: string, now: number): boolean {
  const own = state[flow];
  const least = leastActive(state, flow, now);
  return own !== undefined && least !== undefined && own.virtual - least > leadAllowance;
}

/** Whether another flow with work is more than `leadAllowance` ahead of this one. */
export function fallenBehind(state: ShareState, flow: string, now: number): boolean {
  const own = state[flow];
  return (
    own !== undefined && othersActive(state, flow, now).some((other) => other - own.virtual > leadAllowance)
  );
}

/**
 * The calls each tenant with work is owed over the next `windowMs` at `ratePerSecond` (weights
 * `weights`), beyond the tokens it already holds in that window: its part of the window's tokens
 * (its weight over the weights with work), plus what it is behind the least-served other tenant
 * (their virtual times apart, tokens reserved ahead counted, times its weight), less its tokens
 * reserved within the window. Only
 * while two tenants or more have work; a tenant ahead is owed nothing. The budget filler pulls a
 * tenant's likely-done polls forward by as many (budget-filler.ts), so a tenant whose jobs all wait
 * on polls scheduled far out still asks for its share.
 */
export function callsOwed(
  state: ShareState,
  weights: ShareWeights,
  now: number,
  windowMs: number,
  ratePerSecond: number,
): Map<string, number> {
  const active = Object.entries(state).filter(
    ([name, flow]) => name.startsWith('t:') && now - flow.askedAt <= activeWithinMs,
  );
  const owed = new Map<string, number>();
  if (active.length < 2 || ratePerSecond <= 0) return owed;
  const total = active.reduce((sum, [name]) => sum + weightOf(weights, name.slice(2)), 0);
  for (const [name, flow] of active) {
    const weight = weightOf(weights, name.slice(2));
    const least = Math.min(...active.filter(([other]) => other !== name).map(([, other]) => other.virtual));
    const held = (flow.ahead ?? []).filter((token) => token.at > now && token.at <= now + windowMs).length;
    const calls =
      (weight / total) * ratePerSecond * (windowMs / 1000) + (least - flow.virtual) * weight - held;
    // Virtual times are sums of 1/weight: 1e-9 keeps 14.999... a whole 15.
    const whole = Math.floor(calls + 1e-9);
    if (whole >= 1) owed.set(name.slice(2), whole);
  }
  return owed;
}

/** Where a flow stands against its share: `ahead` stands back, `behind` steps up. */
export type Standing = 'ahead' | 'even' | 'behind';

/** The state without flows that have not asked for `forgetAfterMs`. */
export function forgotten(state: ShareState, now: number): ShareState {
  return Object.fromEntries(Object.entries(state).filter(([, flow]) => now - flow.askedAt <= forgetAfterMs));
}

/** A tenant's weight. */
export function weightOf(weights: ShareWeights, tenant: string): number {
  return weights.tenants[tenant] ?? 1;
}

/**
 * The fair shares of every key a process calls with, in memory (the local backend's one process;
 * on aws each warm function instance keeps its own, from the calls it sees).
 */
export class FairShares {
  readonly #states = new Map<string, ShareState>();
  #prunedAt = Number.NEGATIVE_INFINITY;

  constructor(readonly weights: ShareWeights = { tenants: {} }) {}

  /**
   * The job's call asks for a token of the key (`bucket`) at `now`: `ahead` when its tenant, or its
   * batch within the tenant, is ahead of its share; else `behind` when either has fallen behind.
   */
  asks(bucket: string, job: Pick<Job, 'tenant' | 'batchId'>, now: number): Standing {
    const flows = flowsOf(job);
    const state = askedBy(askedBy(this.#state(bucket, now), flows.tenant, now), flows.batch, now);
    this.#states.set(bucket, state);
    if (standsBack(state, flows.tenant, now) || standsBack(state, flows.batch, now)) return 'ahead';
    return fallenBehind(state, flows.tenant, now) || fallenBehind(state, flows.batch, now)
      ? 'behind'
      : 'even';
  }

  /** The job's call was given a token of the key for `at` (now, or reserved for later). */
  charge(bucket: string, job: Pick<Job, 'tenant' | 'batchId'>, now: number, at = now): void {
    const flows = flowsOf(job);
    const state = this.#state(bucket, now);
    const tenantCharged = chargedTo(state, flows.tenant, weightOf(this.weights, job.tenant), now, at);
    this.#states.set(bucket, chargedTo(tenantCharged, flows.batch, 1, now, at));
  }

  /** The key's flows as they stand (tests, the bench, share-cut.ts). */
  stateOf(bucket: string): ShareState {
    return this.#states.get(bucket) ?? {};
  }

  /** The key's flows after a change computed elsewhere (share-cut.ts), pruned as `asks` does. */
  update(bucket: string, now: number, change: (state: ShareState) => ShareState): void {
    this.#states.set(bucket, change(this.#state(bucket, now)));
  }

  #state(bucket: string, now: number): ShareState {
    if (now - this.#prunedAt > forgetAfterMs) {
      this.#prunedAt = now;
      for (const [key, state] of this.#states) this.#states.set(key, forgotten(state, now));
    }
    return this.#states.get(bucket) ?? {};
  }
}

/** The variable that sets the tenants' weights, or turns fair shares off. */
export const sharesVariable = 'OPFLOW_SHARES';

const weightSchema = z.coerce
  .number()
  .positive('must be a number above 0')
  .max(1_000, 'must be at most 1000');

/**
 * The weights a shares setting says (`acme=3,beta=1`; a tenant not named weighs 1), `equal` for an
 * empty one, or `off`. The grammar of `OPFLOW_SHARES` and of the aws stack's `openPlatform.shares`.
 * Throws a SharesSettingError saying which part is wrong (the caller names the setting).
 */
export function parseShares(text: string): ShareWeights | 'equal' | 'off' {
  const raw = text.trim();
  if (raw === '') return 'equal';
  if (raw === 'off') return 'off';
  const tenants: Record<string, number> = {};
  for (const part of raw.split(',')) {
    const [name, weight, extra] = part.split('=').map((piece) => piece.trim());
    if (!name || weight === undefined || extra !== undefined || weight === '')
      throw new SharesSettingError(`"${part}" is not tenant=weight (e.g. acme=3,beta=1), or off`);
    if (!/^[\w.-]{1,64}$/.test(name))
      throw new SharesSettingError(`"${name}" is not a tenant name (letters, digits, dot, dash, underscore)`);
    if (name in tenants) throw new SharesSettingError(`tenant "${name}" is named twice`);
    const parsed = weightSchema.safeParse(weight);
    if (!parsed.success) throw new SharesSettingError(`${name} ${parsed.error.issues[0]?.message}`);
    tenants[name] = parsed.data;
  }
  return { tenants };
}

/** A shares setting that does not parse; the message says the part, not the setting's name. */
export class SharesSettingError extends Error {
  override readonly name = 'SharesSettingError';
}

/**
 * Fair shares from the environment: `OPFLOW_SHARES` unset or empty is equal weights; `off` turns
 * them off (undefined); `acme=3,beta=1` weighs tenants (one not named weighs 1). Throws naming the
 * variable and the part that is wrong.
 */
export function fairSharesFromEnv(env: Readonly<Record<string, string | undefined>>): FairShares | undefined {
  const weights = shareWeightsFromEnv(env);
  return weights === undefined ? undefined : new FairShares(weights);
}

/**
 * The tenants' weights `OPFLOW_SHARES` says (unset or empty: every tenant weighs 1), or undefined
 * for `off`; for a ledger kept elsewhere (the aws bucket item). Throws as `fairSharesFromEnv`.
 */
export function shareWeightsFromEnv(
  env: Readonly<Record<string, string | undefined>>,
): ShareWeights | undefined {
  let shares: ReturnType<typeof parseShares>;
  try {
    shares = parseShares(env[sharesVariable] ?? '');
  } catch (error) {
    if (error instanceof SharesSettingError)
      throw new SharesSettingError(`${sharesVariable}: ${error.message}`);
    throw error;
  }
  if (shares === 'off') return undefined;
  return shares === 'equal' ? { tenants: {} } : shares;
}
