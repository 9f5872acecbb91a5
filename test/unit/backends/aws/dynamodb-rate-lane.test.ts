// The DynamoDB bucket's priority lane: its compact encoding, and which reserved token a priority
// call takes over.
import { describe, expect, it } from 'vitest';
import {
  chooseCut,
  cutHolder,
  cutInLeadMs,
  decodeLane,
  emptyLane,
  encodeLane,
  laneCut,
  laneHolds,
  laneReserved,
  maxCuts,
  maxLaneTokens,
  maxShareCuts,
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
    const back = decodeLane(stored.lane, undefined, stored.cutl);
    expect(back.reserved).toEqual(lane.reserved);
    expect([...back.cuts]).toEqual([[T0 + 102, cutHolder('job-1')]]);
    expect(laneHolds(back, T0 + 102, 'job-1')).toBe(true);
    expect(laneHolds(back, T0 + 102, 'job-2')).toBe(false);
    expect(encodeLane(emptyLane())).toEqual({});
  });

  it('keeps a hundred and sixty cuts in about eleven bytes each, and reads the map an older item holds', () => {
    let lane = emptyLane();
    for (let i = 0; i < 200; i++) lane = laneReserved(lane, T0 + 200 * i);
    for (let i = 0; i < maxShareCuts; i++) lane = laneCut(lane, T0 + 200 * i, `01JD${i}XYZABCDEFGHJKMNPQRS`);
    const stored = encodeLane(lane);
    expect(stored.cutl!.length).toBeLessThan(maxShareCuts * 11);
    const back = decodeLane(stored.lane, undefined, stored.cutl);
    expect(back).toEqual(lane);
    for (let i = 0; i < maxShareCuts; i += 37) {
      expect(laneHolds(back, T0 + 200 * i, `01JD${i}XYZABCDEFGHJKMNPQRS`)).toBe(true);
      expect(laneHolds(back, T0 + 200 * i, 'the-holder')).toBe(false);
    }
    // An item written before `cutl` keeps its cuts as a map of job ids: read, they hold as before.
    const legacy = decodeLane(undefined, { [String(T0 + 1_000)]: 'urgent' });
    expect(laneHolds(legacy, T0 + 1_000, 'urgent')).toBe(true);
    expect(laneHolds(legacy, T0 + 1_000, 'holder')).toBe(false);
    // Distinct ids, distinct holders (a 32-bit hash: no collision among these).
    const holders = new Set(Array.from({ length: 5_000 }, (_, i) => cutHolder(`job-${i}`)));
    expect(holders.size).toBe(5_000);
    // A cut the share limit refuses, while a `high` call still has room.
    expect(chooseCut(lane, T0, T0, T0 + 100_000, { limit: maxShareCuts })).toBeUndefined();
    expect(chooseCut(lane, T0, T0, T0 + 100_000)).toBeDefined();
    expect(decodeLane(undefined, undefined, 'zz~abc,!~x').cuts.size).toBe(1);
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
    // Only the tokens it may take (a tenant behind its share: a leading tenant's).
    expect(chooseCut(lane, T0, T0, T0 + 4_200, { takes: (at) => at >= T0 + 2_000 })).toBe(T0 + 2_000);
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
