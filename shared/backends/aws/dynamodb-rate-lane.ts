/**
 * The priority lane of a key's DynamoDB bucket (admission/priority-lane.ts): the tokens reserved
 * ahead (`reserved`, ascending), and the ones a `high` job's call took over (`cuts`: time to job).
 * Both live in the bucket's one item, changed in the same conditional write as the bucket, so a
 * token is never reserved and cut by two workers at once. Pure and time-injected.
 *
 * The reserved times are kept as one string of base-36 gaps (about 3 bytes a token, where a list
 * of numbers takes 9), so a line of a few hundred tokens still fits the item in one or two write
 * units. The cuts are one string too (`cutl`: the time's gap and a 32-bit hash of the job that cut
 * in, about 11 bytes a cut): a tenant behind its fair share cuts in at a leading tenant's tokens
 * (dynamodb-rate-limiter.ts), dozens at once when tenants start together.
 */
import { cutInMemoryMs } from '../../engine/admission/priority-lane';

export interface RateLane {
  /** Tokens reserved ahead and not taken over, ascending (whole milliseconds). */
  reserved: number[];
  /**
   * Tokens taken over by a priority call or a tenant behind its share: the token's time and the
   * job that took it (`cutHolder` of its id).
   */
  cuts: Map<number, string>;
}

/** Reserved tokens kept at most: a longer line's later tokens are not offered to a cut-in. */
export const maxLaneTokens = 400;
/**
 * Cut-ins remembered at most (each for `cutInMemoryMs` after its token): a `high` call cuts in
 * while fewer are; a tenant behind its share while fewer than `maxShareCuts` are, so cut-ins of
 * shares never keep a `high` call out. About 11 bytes each in the item.
 */
export const maxCuts = 192;
/** Cut-ins of fair shares stop at this many remembered (`maxCuts` leaves room for `high` calls). */
export const maxShareCuts = 160;

/**
 * Who holds a cut token, as stored: a 32-bit FNV-1a hash of the job's id in base 36 (at most 7
 * characters). A holder whose hash were the cut-in's (one in four billion) would spend the token
 * too: one call beyond the rate, which the limiter's throttle handling absorbs.
 */
export function cutHolder(by: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < by.length; i++) {
    hash ^= by.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(36);
}
/**
 * A cut-in takes no token sooner than this: the holder of a token reads the lane when its message
 * comes (at its token's time, SQS delays rounding up), and must find the cut-in written by then.
 */
export const cutInLeadMs = 250;
/** SQS delays are whole seconds: a message sent now comes back at a whole second from now. */
const delayStepMs = 1000;

export function emptyLane(): RateLane {
  return { reserved: [], cuts: new Map() };
}

/** Times ascending as base-36, the first whole, then gaps. */
function gaps(times: readonly number[]): string[] {
  return times.map((time, index) => (index === 0 ? time : time - times[index - 1]!).toString(36));
}

/**
 * The lane as stored: the reserved times (base-36 first time, then gaps), and the cuts (`cutl`:
 * `<gap>~<holder>` in time order).
 */
export function encodeLane(lane: RateLane): { lane?: string; cutl?: string } {
  const stored: { lane?: string; cutl?: string } = {};
  if (lane.reserved.length > 0) stored.lane = gaps(lane.reserved).join(',');
  if (lane.cuts.size > 0) {
    const cuts = [...lane.cuts].sort(([a], [b]) => a - b);
    const times = gaps(cuts.map(([at]) => at));
    stored.cutl = cuts.map(([, by], index) => `${times[index]}~${by}`).join(',');
  }
  return stored;
}

/**
 * The lane of a stored item; what is unreadable is left out (its token is then never cut). `cuts`
 * is the map an item written before `cutl` holds (time to job id).
 */
export function decodeLane(lane: unknown, cuts: unknown, cutl?: unknown): RateLane {
  const reserved: number[] = [];
  if (typeof lane === 'string' && lane.length > 0) {
    let time = 0;
    for (const [index, part] of lane.split(',').entries()) {
      const value = Number.parseInt(part, 36);
      if (!Number.isFinite(value)) break;
      time = index === 0 ? value : time + value;
      reserved.push(time);
    }
  }
  const cutMap = new Map<number, string>();
  if (cuts && typeof cuts === 'object' && !Array.isArray(cuts)) {
    for (const [at, by] of Object.entries(cuts as Record<string, unknown>)) {
      const time = Number(at);
      if (Number.isFinite(time) && typeof by === 'string') cutMap.set(time, cutHolder(by));
    }
  }
  if (typeof cutl === 'string' && cutl.length > 0) {
    let time = 0;
    for (const [index, part] of cutl.split(',').entries()) {
      const [gap, by] = part.split('~');
      const value = Number.parseInt(gap ?? '', 36);
      if (!Number.isFinite(value) || !by || !/^[0-9a-z]{1,7}$/.test(by)) break;
      time = index === 0 ? value : time + value;
      cutMap.set(time, by);
    }
  }
  return { reserved, cuts: cutMap };
}

/** Drops the tokens passed, and the cut-ins a minute past their token (their holder came by then). */
export function pruneLane(lane: RateLane, now: number): RateLane {
  const cuts = new Map([...lane.cuts].filter(([at]) => at >= now - cutInMemoryMs));
  return { reserved: lane.reserved.filter((time) => time > now), cuts };
}

/** A token reserved at `at` joins the lane (unless the lane is full). */
export function laneReserved(lane: RateLane, at: number): RateLane {
  const time = Math.round(at);
  if (lane.reserved.length >= maxLaneTokens || lane.reserved.includes(time)) return lane;
  return { ...lane, reserved: [...lane.reserved, time].sort((a, b) => a - b) };
}

/**
 * The reserved token a priority call due at `dueAt` takes over, claimed at `now`, when the line's
 * next free token comes at `freeAt`: among the tokens from `cutInLeadMs` ahead (and not before the
 * call is due) and before `freeAt`, the latest that comes with the soonest of them. The call's
 * message comes back at a whole second (SQS), so a later token of the same second costs it
 * nothing and is spent closer to its time. Undefined when there is none or the cuts are full
 * (`options.limit`, default `maxCuts`). `options.takes`: which reserved tokens may be taken (a
 * tenant behind its share takes only a leading tenant's).
 */
export function chooseCut(
  lane: RateLane,
  now: number,
  dueAt: number,
  freeAt: number,
  options: { limit?: number; takes?: (at: number) => boolean } = {},
): number | undefined {
  if (lane.cuts.size >= (options.limit ?? maxCuts)) return undefined;
  const from = Math.max(now + cutInLeadMs, dueAt);
  const takes = options.takes ?? (() => true);
  const candidates = lane.reserved.filter((time) => time >= from && time < freeAt && takes(time));
  const soonest = candidates[0];
  if (soonest === undefined) return undefined;
  const comesAt = now + Math.ceil((soonest - now) / delayStepMs) * delayStepMs;
  return candidates.filter((time) => time <= comesAt).at(-1) ?? soonest;
}

/** The lane after `by` (a job's id) took over the token at `at`. */
export function laneCut(lane: RateLane, at: number, by: string): RateLane {
  return {
    reserved: lane.reserved.filter((time) => time !== at),
    cuts: new Map(lane.cuts).set(at, cutHolder(by)),
  };
}

/** Whether the token reserved for `at` is still `by`'s (no other job took it over). */
export function laneHolds(lane: RateLane, at: number, by: string): boolean {
  const cutBy = lane.cuts.get(Math.round(at));
  return cutBy === undefined || cutBy === cutHolder(by);
}
