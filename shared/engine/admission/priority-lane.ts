/**
 * The priority lane: a `high` job's call goes ahead of a key's line at the next token due, instead of
 * at the line's end. The tokens of a saturated key are reserved up to a horizon ahead, each by one
 * waiting job, so there is no free token to give it; it takes the next reserved one instead (a
 * **cut-in**), and that token's holder, when it comes for it, finds it gone and takes a new one at
 * the line's end (one interval later for every job behind: never two calls on one token). The lane
 * keeps the times of the tokens reserved ahead and the cut-ins, per key; the arithmetic is pure.
 */

/** A key's reserved tokens ahead (ascending) and the tokens given to priority calls. */
export interface LaneState {
  reserved: readonly number[];
  cutIns: readonly { at: number; by: string }[];
}

export const emptyLane: LaneState = { reserved: [], cutIns: [] };

/** A cut-in is kept this long after its token (its holder may come late, a little). */
export const cutInMemoryMs = 60_000;
/** At most this many reserved times are kept per key (a line of 15 s at 1,000 calls/s is 15,000). */
export const maxReservedKept = 4_096;

/** A token was reserved for `at` (`take` with a horizon): it is in the line a cut-in may take from. */
export function noteReserved(lane: LaneState, at: number, now: number): LaneState {
  const ahead = lane.reserved.filter((time) => time > now);
  let index = ahead.length;
  while (index > 0 && (ahead[index - 1] as number) > at) index--;
  const reserved = [...ahead.slice(0, index), at, ...ahead.slice(index)].slice(-maxReservedKept);
  return { reserved, cutIns: lane.cutIns.filter((cut) => now - cut.at <= cutInMemoryMs) };
}

/**
 * A priority call (`by`, its job) takes the soonest token reserved after `now` that no other cut-in
 * took, if it is sooner than `freeAt` (when the line would give it one): its time, else undefined.
 */
export function cutIn(
  lane: LaneState,
  now: number,
  by: string,
  freeAt: number,
): { lane: LaneState; at?: number } {
  const taken = new Set(lane.cutIns.map((cut) => cut.at));
  const at = lane.reserved.find((time) => time > now && !taken.has(time));
  if (at === undefined || at >= freeAt) return { lane };
  return {
    lane: {
      reserved: lane.reserved.filter((time) => time > now),
      cutIns: [...lane.cutIns.filter((cut) => now - cut.at <= cutInMemoryMs), { at, by }],
    },
    at,
  };
}

/** Whether the token reserved for `at` is still `by`'s: false when a priority call of another job took it. */
export function stillHeld(lane: LaneState, at: number, by: string): boolean {
  return !lane.cutIns.some((cut) => cut.at === at && cut.by !== by);
}
