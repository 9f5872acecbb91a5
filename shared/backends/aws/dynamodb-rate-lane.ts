/**
 * The priority lane of a key's DynamoDB bucket (admission/priority-lane.ts): the tokens reserved
 * ahead (`reserved`, ascending), and the ones a `high` job's call took over (`cuts`: time to job).
 * Both live in the bucket's one item, changed in the same conditional write as the bucket, so a
 * token is never reserved and cut by two workers at once. Pure and time-injected.
 *
 * The reserved times are kept as one string of base-36 gaps (about 3 bytes a token, where a list
 * of numbers takes 9), so a line of a few hundred tokens still fits the item in one or two write
 * units.
 */
import { cutInMemoryMs } from '../../engine/admission/priority-lane';

export interface RateLane {
  /** Tokens reserved ahead and not taken over, ascending (whole milliseconds). */
  reserved: number[];
  /** Tokens taken over by a priority call: the token's time and the job that took it. */
  cuts: Map<number, string>;
}

/** Reserved tokens kept at most: a longer line's later tokens are not offered to a cut-in. */
export const maxLaneTokens = 400;
/** Cut-ins remembered at most (each for `cutInMemoryMs` after its token). */
export const maxCuts = 32;
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

/** The lane as stored: the reserved times (base-36 first time, then gaps) and the cuts. */
export function encodeLane(lane: RateLane): { lane?: string; cuts?: Record<string, string> } {
  const stored: { lane?: string; cuts?: Record<string, string> } = {};
  if (lane.reserved.length > 0) {
    const parts = lane.reserved.map((time, index) =>
      (index === 0 ? time : time - lane.reserved[index - 1]!).toString(36),
    );
    stored.lane = parts.join(',');
  }
  if (lane.cuts.size > 0)
    stored.cuts = Object.fromEntries([...lane.cuts].map(([at, by]) => [String(at), by]));
  return stored;
}

/** The lane of a stored item; what is unreadable is left out (its token is then never cut). */
export function decodeLane(lane: unknown, cuts: unknown): RateLane {
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
      if (Number.isFinite(time) && typeof by === 'string') cutMap.set(time, by);
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
 * nothing and is spent closer to its time. Undefined when there is none or the cuts are full.
 */
export function chooseCut(lane: RateLane, now: number, dueAt: number, freeAt: number): number | undefined {
  if (lane.cuts.size >= maxCuts) return undefined;
  const from = Math.max(now + cutInLeadMs, dueAt);
  const candidates = lane.reserved.filter((time) => time >= from && time < freeAt);
  const soonest = candidates[0];
  if (soonest === undefined) return undefined;
  const comesAt = now + Math.ceil((soonest - now) / delayStepMs) * delayStepMs;
  return candidates.filter((time) => time <= comesAt).at(-1) ?? soonest;
}

/** The lane after `by` took over the token at `at`. */
export function laneCut(lane: RateLane, at: number, by: string): RateLane {
  return {
    reserved: lane.reserved.filter((time) => time !== at),
    cuts: new Map(lane.cuts).set(at, by),
  };
}

/** Whether the token reserved for `at` is still `by`'s (no other job took it over). */
export function laneHolds(lane: RateLane, at: number, by: string): boolean {
  const cutBy = lane.cuts.get(Math.round(at));
  return cutBy === undefined || cutBy === by;
}
