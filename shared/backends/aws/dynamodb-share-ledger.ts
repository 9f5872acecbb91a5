/**
 * The fair shares of a key's budget on aws (admission/fair-share.ts), kept in the key's DynamoDB
 * bucket item beside its lane: every function that takes a token (the step worker's calls, bookings
 * and returns, its releases, the api's new jobs' first tokens) reads and charges one ledger, in the
 * same conditional write that takes the token. Two workers never charge on one version of it.
 *
 * Stored as one string attribute (`shares`): the flows (`t:<tenant>`, `b:<tenant>:<batch>`), each
 * with its virtual time and when it last asked; and, for each token of the lane (reserved ahead), the
 * batch flow it was given to, run-length coded against the lane's order. A flow's tokens still ahead
 * (`FlowState.ahead`) are read back from those owners, so the lane's tokens are not stored twice.
 * Pure and time-injected.
 */
import * as z from 'zod';
import {
  activeWithinMs,
  askedBy,
  chargedTo,
  fallenBehind,
  flowsOf,
  forgotten,
  type ShareState,
  type ShareWeights,
  type Standing,
  sharesVariable,
  shareWeightsFromEnv,
  standsBack,
  weightOf,
} from '../../engine/admission/fair-share';
import {
  mayTakeFrom,
  owedOrder,
  refundedTo,
  shareCutFrom,
  tenantOfBatch,
} from '../../engine/admission/share-cut';

export { shareCutAheadMs } from '../../engine/admission/share-cut';

import type { ShareClaim } from '../../engine/ports';

/** A key's ledger: its flows, and the batch flow of each token of its lane (by the token's time). */
export interface ShareLedger {
  flows: ShareState;
  owners: Map<number, string>;
}

/** Flows kept at most (the least recently asked go first): keeps the item within a write unit or two. */
export const maxFlows = 48;
/**
 * A call refused a token and reserving none still records that its flows have work, but at most
 * this often per flow (a write): a flow with work asks within `activeWithinMs` (45 s) of its last.
 */
export const askRefreshMs = 10_000;

/**
 * The weights an `OPFLOW_SHARES` text says (unset or empty: every tenant weighs 1); undefined for
 * `off`. Throws naming the variable and the part that is wrong.
 */
export function weightsOfSetting(text: string): ShareWeights | undefined {
  return shareWeightsFromEnv({ [sharesVariable]: text });
}

export function emptyLedger(): ShareLedger {
  return { flows: {}, owners: new Map() };
}

const storedSchema = z.object({
  f: z.array(z.tuple([z.string().min(1).max(200), z.number().finite(), z.string().regex(/^[0-9a-z]+$/)])),
  o: z.string().optional(),
});

/** The batch flow of the claim's job, and its tenant's. */
function flowsOfClaim(claim: ShareClaim): { tenant: string; batch: string } {
  return flowsOf({ tenant: claim.tenant, batchId: claim.batchId });
}

/**
 * The ledger of a stored item, with each flow's tokens ahead of `now` read from the lane's owners
 * (`reserved`: the lane's times, ascending). What does not parse is an empty ledger: fair shares
 * then start over, and no token is lost or given twice (the bucket is apart).
 */
export function decodeLedger(
  stored: unknown,
  reserved: readonly number[],
  weights: ShareWeights,
  now: number,
): ShareLedger {
  if (typeof stored !== 'string' || stored.length === 0) return emptyLedger();
  let parsed: z.infer<typeof storedSchema>;
  try {
    const result = storedSchema.safeParse(JSON.parse(stored));
    if (!result.success) return emptyLedger();
    parsed = result.data;
  } catch {
    return emptyLedger();
  }
  const names = parsed.f.map(([name]) => name);
  const flows: Record<string, { virtual: number; askedAt: number; ahead?: { at: number; by: number }[] }> =
    {};
  for (const [name, virtual, askedAt] of parsed.f)
    flows[name] = { virtual, askedAt: Number.parseInt(askedAt, 36) };
  const owners = new Map<number, string>();
  const runs = parsed.o ? parsed.o.split(',') : [];
  let index = 0;
  for (const run of runs) {
    const [who, times] = run.split('*');
    const count = times === undefined ? 1 : Number.parseInt(times, 36);
    const owner = who === '-' || who === undefined ? undefined : names[Number.parseInt(who, 36)];
    for (let i = 0; i < count && index < reserved.length; i++, index++)
      if (owner?.startsWith('b:')) owners.set(reserved[index] as number, owner);
  }
  for (const [at, batch] of owners) {
    if (at <= now) continue;
    const tenant = tenantOfBatch(batch);
    for (const [flow, by] of [
      [batch, 1],
      [`t:${tenant}`, 1 / weightOf(weights, tenant)],
    ] as const) {
      const state = flows[flow];
      if (state) state.ahead = [...(state.ahead ?? []), { at, by }];
    }
  }
  return { flows, owners };
}

/**
 * The ledger as stored (`shares`), its owners in the order of the lane's tokens (`reserved`);
 * undefined when it holds nothing. Flows not asked for 10 minutes are forgotten, and past
 * `maxFlows` the least recently asked.
 */
export function encodeLedger(
  ledger: ShareLedger,
  reserved: readonly number[],
  now: number,
): string | undefined {
  const kept = Object.entries(forgotten(ledger.flows, now))
    .sort(([, a], [, b]) => b.askedAt - a.askedAt)
    .slice(0, maxFlows);
  if (kept.length === 0) return undefined;
  const indexOf = new Map(kept.map(([name], index) => [name, index.toString(36)]));
  const runs: string[] = [];
  let last: string | undefined;
  let count = 0;
  const flush = () => {
    if (last !== undefined) runs.push(count === 1 ? last : `${last}*${count.toString(36)}`);
  };
  for (const at of reserved) {
    const owner = ledger.owners.get(at);
    const who = (owner === undefined ? undefined : indexOf.get(owner)) ?? '-';
    if (who === last) count++;
    else {
      flush();
      last = who;
      count = 1;
    }
  }
  flush();
  // Trailing unknown owners say nothing: left out.
  while (runs.length > 0 && (runs.at(-1) as string).startsWith('-')) runs.pop();
  const stored: z.infer<typeof storedSchema> = {
    f: kept.map(([name, flow]) => [name, Math.round(flow.virtual * 1e4) / 1e4, flow.askedAt.toString(36)]),
    ...(runs.length > 0 ? { o: runs.join(',') } : {}),
  };
  return JSON.stringify(stored);
}

/**
 * The claim's job asks for a token at `now`: its flows have work (fair-share.ts `askedBy`), and
 * where they stand: `ahead` when its tenant or its batch is ahead of its share, else `behind`
 * when either has fallen behind.
 */
export function ledgerAsks(
  ledger: ShareLedger,
  claim: ShareClaim,
  now: number,
): { ledger: ShareLedger; standing: Standing } {
  const { tenant, batch } = flowsOfClaim(claim);
  const flows = askedBy(askedBy(ledger.flows, tenant, now), batch, now);
  const standing: Standing =
    standsBack(flows, tenant, now) || standsBack(flows, batch, now)
      ? 'ahead'
      : fallenBehind(flows, tenant, now) || fallenBehind(flows, batch, now)
        ? 'behind'
        : 'even';
  return { ledger: { ...ledger, flows }, standing };
}

/** Whether the ask changed the ledger enough to be written although no token was taken. */
export function askWorthWriting(before: ShareLedger, claim: ShareClaim, now: number): boolean {
  const { tenant, batch } = flowsOfClaim(claim);
  return [tenant, batch].some((flow) => {
    const askedAt = before.flows[flow]?.askedAt;
    return askedAt === undefined || now - askedAt >= askRefreshMs;
  });
}

/**
 * The claim's job was given the token at `at` (now, or reserved for later): its tenant's virtual
 * time moves on by 1/weight and its batch's by 1 (`chargedTo`); a token ahead is its batch's in
 * the lane's owners.
 */
export function ledgerCharged(
  ledger: ShareLedger,
  claim: ShareClaim,
  weights: ShareWeights,
  now: number,
  at: number,
): ShareLedger {
  const { tenant, batch } = flowsOfClaim(claim);
  const charged = chargedTo(
    chargedTo(ledger.flows, tenant, weightOf(weights, claim.tenant), now, at),
    batch,
    1,
    now,
    at,
  );
  const owners = new Map(ledger.owners);
  if (at > now) owners.set(Math.round(at), batch);
  return { flows: charged, owners };
}

/**
 * The token at `at` was taken over by a priority call: its holder's flows are given back what it
 * was charged (the holder takes, and is charged, a new one), and the owner is forgotten until the
 * cut-in is charged for it.
 */
export function ledgerRefunded(ledger: ShareLedger, weights: ShareWeights, at: number): ShareLedger {
  const batch = ledger.owners.get(Math.round(at));
  if (batch === undefined) return ledger;
  const owners = new Map(ledger.owners);
  owners.delete(Math.round(at));
  return { flows: refundedTo(ledger.flows, batch, weights, Math.round(at)), owners };
}

/** The owners of tokens still in the lane (`reserved`, after pruning). */
export function ledgerPruned(ledger: ShareLedger, reserved: readonly number[]): ShareLedger {
  const inLane = new Set(reserved);
  return { ...ledger, owners: new Map([...ledger.owners].filter(([at]) => inLane.has(at))) };
}

/**
 * Which of the lane's tokens the claim's job may take over because its tenant, or its batch within
 * the tenant, is behind the token's owner by more than one token of each (share-cut.ts
 * `mayTakeFrom`, the local ledger's rule too): a token given to a tenant further ahead, or to a
 * batch of its own tenant further ahead. Undefined when it may take none. The owner is given back its charge
 * and takes a new token when its call comes (`ledgerRefunded`), so the lead a tenant booked before
 * the others asked is taken back from the first second, not only as its tokens come.
 */
export function ledgerCuttable(
  ledger: ShareLedger,
  claim: ShareClaim,
  weights: ShareWeights,
): ((at: number) => boolean) | undefined {
  const own = flowsOfClaim(claim);
  if (ledger.flows[own.tenant] === undefined || ledger.flows[own.batch] === undefined) return undefined;
  const takes = new Map<string, boolean>();
  for (const owner of new Set(ledger.owners.values()))
    takes.set(owner, mayTakeFrom(ledger.flows, own, owner, weights));
  if (![...takes.values()].some(Boolean)) return undefined;
  return (at) => {
    const owner = ledger.owners.get(Math.round(at));
    return owner !== undefined && takes.get(owner) === true;
  };
}

/** When the claim's tenant is owed its next token, at the earliest (share-cut.ts `shareCutFrom`). */
export function ledgerCutFrom(
  ledger: ShareLedger,
  claim: ShareClaim,
  weights: ShareWeights,
  now: number,
  ratePerSecond: number,
): number {
  return shareCutFrom(ledger.flows, flowsOfClaim(claim).tenant, weights, now, ratePerSecond);
}

/**
 * The order in which calls of `tenants` are owed the key's next tokens by the ledger's tenants'
 * virtual times (share-cut.ts `owedOrder`, weighted fair queueing), as indices into `tenants`.
 */
export function ledgerOrder(
  ledger: ShareLedger,
  weights: ShareWeights,
  tenants: readonly string[],
): number[] {
  return owedOrder(ledger.flows, weights, tenants);
}

/** How many tenants of the ledger have work at `now` (asked within fair-share.ts `activeWithinMs`). */
export function tenantsWithWork(ledger: ShareLedger, now: number): number {
  let count = 0;
  for (const [flow, state] of Object.entries(ledger.flows))
    if (flow.startsWith('t:') && now - state.askedAt <= activeWithinMs) count++;
  return count;
}
