import { describe, expect, it } from 'vitest';
import {
  type FlowToken,
  keepGrantLog,
  readKeptGrants,
  sharesOfWeights,
  slidingShares,
  tokensOf,
} from '../../../bench/fairness-windows';
import { openLocalDatabase } from '../../../shared/backends/local/database';
import { readTokenGrants, SqliteRateLimiter } from '../../../shared/backends/local/sqlite-rate-limiter';
import type { TokenGrant } from '../../../shared/engine/admission/priority-lane';

/** Tokens every `everyMs` from `from`, their flows in turn from `pattern`. */
const tokensIn = (pattern: string[], count: number, from = 0, everyMs = 200): FlowToken[] =>
  Array.from({ length: count }, (_, i) => ({ at: from + i * everyMs, flow: pattern[i % pattern.length]! }));

describe('sliding windows of a key tokens (the fairness bench)', () => {
  it('gives a flow that gets its configured share in every window a miss of zero', () => {
    // 5 tokens a second, in the pattern a a b c c: 40/20/40 in every window of a whole number of patterns.
    const tokens = tokensIn(['a', 'a', 'b', 'c', 'c'], 1_000);
    const result = slidingShares(
      tokens,
      { a: 0.4, b: 0.2, c: 0.4 },
      { windowMs: 1_000, from: 0, to: 200_000 },
    );
    // Each window of 1 s holds 5 tokens, a whole pattern: the share is exact whatever its start.
    expect(result.windows).toBeGreaterThan(100);
    expect(result.fewestTokens).toBe(5);
    for (const row of result.rows) {
      expect(row.min).toBeCloseTo(row.configured, 10);
      expect(row.worstRelative).toBeCloseTo(0, 10);
    }
  });

  it('finds the worst window among all sliding starts, not only on a step grid', () => {
    // 60 tokens of a, then 60 of b, one a second: the window of 60 s that starts at 30 s holds 30 of each,
    // the one at 0 s only a, the one at 60 s only b.
    const tokens = [...tokensIn(['a'], 60, 0, 1_000), ...tokensIn(['b'], 60, 60_000, 1_000)];
    const result = slidingShares(tokens, { a: 0.5, b: 0.5 }, { windowMs: 60_000, from: 0, to: 120_000 });
    const a = result.rows.find((row) => row.flow === 'a')!;
    // 61 distinct windows: starts at 0, 1 s, ..., 60 s.
    expect(result.windows).toBe(61);
    expect(a.max).toBe(1);
    expect(a.min).toBe(0);
    expect(a.worstAbsolute).toBe(0.5);
    expect(a.worstRelative).toBe(1);
    // The first of the worst windows: the one of a's tokens only, at the span's start.
    expect(a.worstAtMs).toBe(0);
    // A window between 0 and 60 s, off the 10 s grid: at 7 s it holds 53 of a and 7 of b.
    const off = slidingShares(tokens, { a: 0.5, b: 0.5 }, { windowMs: 60_000, from: 7_000, to: 67_000 });
    expect(off.windows).toBe(1);
    expect(off.rows.find((row) => row.flow === 'a')!.min).toBeCloseTo(53 / 60, 10);
  });

  it('says both misses: absolute in points, relative to the configured share', () => {
    // In one window of 10 tokens: a 6 (configured 50 %), b 3 (30 %), c 1 (20 %).
    const tokens = tokensIn(['a', 'a', 'b', 'a', 'c', 'a', 'b', 'a', 'b', 'a'], 10, 0, 100);
    const result = slidingShares(tokens, sharesOfWeights({ a: 5, b: 3, c: 2 }), {
      windowMs: 1_000,
      from: 0,
      to: 1_000,
    });
    const row = (flow: string) => result.rows.find((r) => r.flow === flow)!;
    expect(result.windows).toBe(1);
    expect(row('a').worstAbsolute).toBeCloseTo(0.1, 10);
    expect(row('a').worstRelative).toBeCloseTo(0.2, 10);
    expect(row('b').worstRelative).toBeCloseTo(0, 10);
    expect(row('c').worstAbsolute).toBeCloseTo(0.1, 10);
    expect(row('c').worstRelative).toBeCloseTo(0.5, 10);
  });

  it('looks at no window in a span shorter than one, and skips windows without tokens', () => {
    const tokens = tokensIn(['a', 'b'], 10, 0, 100);
    expect(slidingShares(tokens, { a: 0.5, b: 0.5 }, { windowMs: 60_000, from: 0, to: 59_999 }).windows).toBe(
      0,
    );
    expect(slidingShares([], { a: 0.5, b: 0.5 }, { windowMs: 1_000, from: 0, to: 5_000 }).windows).toBe(0);
  });

  it("counts each token of a grant log once: a cut-in's token is its cutter's, refusals none", () => {
    const grants: TokenGrant[] = [
      { seq: 1, by: 'j1', askedAt: 0, tokenAt: 0, kind: 'granted' },
      { seq: 2, by: 'j2', askedAt: 0, tokenAt: 200, kind: 'reserved' },
      { seq: 3, by: 'j3', askedAt: 0, tokenAt: 400, kind: 'reserved' },
      // A priority job takes over j2's token; j2 takes a new one at the line's end.
      { seq: 4, by: 'p', askedAt: 100, tokenAt: 200, kind: 'cut-in' },
      { seq: 5, by: 'j2', askedAt: 200, tokenAt: 600, kind: 'reserved' },
      { seq: 6, by: 'j4', askedAt: 300, tokenAt: 300, kind: 'refused' },
      { seq: 7, askedAt: 300, tokenAt: 800, kind: 'granted' },
    ];
    const tenant: Record<string, string> = { j1: 'a', j2: 'a', j3: 'b', p: 'b', j4: 'a' };
    expect(tokensOf(grants, (jobId) => tenant[jobId])).toEqual([
      { at: 0, flow: 'a' },
      { at: 200, flow: 'b' },
      { at: 400, flow: 'b' },
      { at: 600, flow: 'a' },
    ]);
  });

  it("keeps every grant of a run longer than the limiter's log (ten minutes), which the log alone loses", async () => {
    const db = openLocalDatabase(':memory:');
    const limiter = new SqliteRateLimiter(db, { ratePerSecond: 5, burst: 1 });
    keepGrantLog(db);
    // A token every 2.5 s for 12.5 minutes: 300 grants, the log pruned at the 256th (of those asked 10 minutes before).
    for (let i = 0; i < 300; i++)
      await limiter.take('key', i * 2_500, { share: { tenant: 't', jobId: `job${i}` } });
    const kept = readKeptGrants(db).get('key') ?? [];
    expect(kept).toHaveLength(300);
    expect(kept[0]).toMatchObject({ seq: 1, by: 'job0', tokenAt: 0, kind: 'granted' });
    expect(kept.map((grant) => grant.seq)).toEqual(Array.from({ length: 300 }, (_, i) => i + 1));
    // The limiter's own log has pruned the first minutes: read alone, the run would start there.
    expect((readTokenGrants(db).get('key') ?? []).length).toBeLessThan(300);
    db.close();
  });
});
