// The DynamoDB bucket's priority lane: its compact encoding, and which reserved token a priority
// call takes over.
import { describe, expect, it } from 'vitest';
import {
  chooseCut,
  cutInLeadMs,
  decodeLane,
  emptyLane,
  encodeLane,
  laneCut,
  laneHolds,
  laneReserved,
  maxCuts,
  maxLaneTokens,
  pruneLane,
} from '../../../../shared/backends/aws/dynamodb-rate-lane';

const T0 = 1_767_603_600_000;

describe('the DynamoDB rate lane', () => {
  it('round-trips through its stored form in about three bytes a token', () => {
    let lane = emptyLane();
    for (let i = 0; i < 300; i++) lane = laneReserved(lane, T0 + 50 * i + (i % 3));
    lane = laneCut(lane, T0 + 100 + 2, 'job-1');
    const stored = encodeLane(lane);
    expect(stored.lane?.length).toBeLessThan(300 * 3 + 10);
    const back = decodeLane(stored.lane, stored.cuts);
    expect(back.reserved).toEqual(lane.reserved);
    expect([...back.cuts]).toEqual([[T0 + 102, 'job-1']]);
    expect(encodeLane(emptyLane())).toEqual({});
  });

  it('reads what it cannot use as nothing, never as a token', () => {
    expect(decodeLane(42, ['x'])).toEqual(emptyLane());
    expect(decodeLane('zz,!,3', { abc: 'x', 12: 7 }).reserved).toEqual([Number.parseInt('zz', 36)]);
  });

  it('keeps tokens ahead, once each and in order, up to its limit', () => {
    let lane = laneReserved(laneReserved(emptyLane(), T0 + 400), T0 + 200);
    lane = laneReserved(lane, T0 + 400);
    expect(lane.reserved).toEqual([T0 + 200, T0 + 400]);
    for (let i = 0; i < maxLaneTokens + 5; i++) lane = laneReserved(lane, T0 + 1_000 + i);
    expect(lane.reserved).toHaveLength(maxLaneTokens);
    const pruned = pruneLane(laneCut(lane, T0 + 200, 'a'), T0 + 1_000);
    expect(pruned.reserved[0]).toBe(T0 + 1_001);
    expect(pruneLane(pruned, T0 + 200 + 60_001).cuts.size).toBe(0);
    expect(pruneLane(pruned, T0 + 200 + 59_000).cuts.size).toBe(1);
  });

  it('takes the latest token of the soonest second a message can come back in, before the next free one', () => {
    let lane = emptyLane();
    for (let i = 1; i <= 20; i++) lane = laneReserved(lane, T0 + 200 * i);
    expect(chooseCut(lane, T0, T0, T0 + 4_200)).toBe(T0 + 1_000);
    // Not sooner than the lead: the holder of T0 + 200 may already be calling.
    expect(chooseCut(lane, T0 + 100, T0 + 100, T0 + 4_200)).toBe(T0 + 1_000);
    expect(chooseCut(lane, T0 + 900, T0 + 900, T0 + 4_200)).toBe(T0 + 1_800);
    expect(cutInLeadMs).toBeLessThan(1_000);
    // A call due later: from its due time (its message comes back at T0 + 3 s).
    expect(chooseCut(lane, T0, T0 + 2_500, T0 + 4_200)).toBe(T0 + 3_000);
    // A free token as soon: no cut.
    expect(chooseCut(lane, T0, T0, T0 + 300)).toBeUndefined();
    expect(chooseCut(emptyLane(), T0, T0, T0 + 4_200)).toBeUndefined();
    // Too many cut-ins remembered: none more.
    let full = lane;
    for (let i = 0; i < maxCuts; i++) full = laneCut(full, T0 + 100_000 + i, `j${i}`);
    expect(chooseCut(full, T0, T0, T0 + 4_200)).toBeUndefined();
  });

  it("tells a holder its token is gone, and the cut-in's job that it holds it", () => {
    const lane = laneCut(laneReserved(emptyLane(), T0 + 1_000), T0 + 1_000, 'urgent');
    expect(lane.reserved).toEqual([]);
    expect(laneHolds(lane, T0 + 1_000, 'holder')).toBe(false);
    expect(laneHolds(lane, T0 + 1_000.2, 'holder')).toBe(false);
    expect(laneHolds(lane, T0 + 1_000, 'urgent')).toBe(true);
    expect(laneHolds(lane, T0 + 1_200, 'holder')).toBe(true);
  });
});
