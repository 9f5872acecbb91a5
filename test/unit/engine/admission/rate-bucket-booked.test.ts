/**
 * Tokens reserved ahead and booked past the line's end (rate-bucket.ts `reserveAhead`): mixed with
 * takes and reservations in line, no two tokens are ever closer than 1/rate, and every token handed
 * out is counted once. Pure arithmetic, a seeded sequence (no timing).
 */
import { describe, expect, it } from 'vitest';
import {
  initialBucket,
  maxBookedTokens,
  type RateBucketState,
  rateBucketConfig,
  reserveAhead,
  take,
} from '../../../../shared/engine/admission/rate-bucket';

function seeded(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 9301 + 49297) % 233280;
    return state / 233280;
  };
}

describe('reserveAhead', () => {
  it('books past the line without taking from it, and the line steps around what is booked', () => {
    const config = rateBucketConfig({ ratePerSecond: 2 });
    const t0 = 1_000_000;
    let state = initialBucket(config, t0);
    // The bucket is full: a call due in 3 s books T0 + 3 s and leaves the free token for now.
    const booked = reserveAhead(state, config, t0, t0 + 3_000, 15_000);
    expect(booked.reservedAt).toBe(t0 + 3_000);
    state = booked.state;
    expect(state.tokens).toBe(1);
    expect(take(state, config, t0).decision).toEqual({ granted: true });
    // At T0 + 2.7 s a take would be 300 ms before the booked token: it waits until 500 ms after it.
    const late = take(state, config, t0 + 2_700, 0);
    expect(late.decision).toEqual({ granted: false, retryAtMs: t0 + 3_500 });
    // At T0 + 2.5 s exactly it is 1/rate before: granted.
    expect(take(state, config, t0 + 2_500).decision).toEqual({ granted: true });
  });

  it('never puts two tokens closer than 1/rate, and counts each once, whatever the mix', () => {
    for (const seed of [1, 7, 42, 1234]) {
      const random = seeded(seed);
      const config = rateBucketConfig({ ratePerSecond: 1 + Math.floor(random() * 5) });
      const interval = 1000 / config.ceiling;
      const t0 = 5_000_000;
      let state = initialBucket(config, t0);
      let now = t0;
      const tokens: number[] = [];
      for (let i = 0; i < 2_000; i++) {
        now += Math.floor(random() * 120);
        const kind = random();
        if (kind < 0.4) {
          const result = take(state, config, now, Math.floor(random() * 15_000));
          state = result.state;
          if (result.decision.granted) tokens.push(now);
          else if (result.decision.reserved) tokens.push(result.decision.retryAtMs);
        } else {
          const at = now + Math.floor(random() * 30_000);
          const result = reserveAhead(state, config, now, at, Math.floor(random() * 15_000));
          state = result.state;
          if (result.reservedAt !== undefined) {
            expect(result.reservedAt).toBeGreaterThanOrEqual(at);
            tokens.push(result.reservedAt);
          }
        }
      }
      const sorted = [...tokens].sort((a, b) => a - b);
      for (let i = 1; i < sorted.length; i++) {
        expect(sorted[i]! - sorted[i - 1]!).toBeGreaterThanOrEqual(interval - 1);
      }
      // Every token handed out is taken from the bucket once the line reaches it: after the last
      // one, the tokens left plus those handed out are what the bucket earned (plus its one to start),
      // to a millionth of a token.
      const end = Math.max(now, ...sorted) + 60_000;
      const settled = take(state, config, end);
      const left = settled.decision.granted ? settled.state.tokens + 1 : settled.state.tokens;
      const earnedAtMost = 1 + ((end - t0) / 1000) * config.ceiling;
      expect(left + tokens.length).toBeLessThanOrEqual(earnedAtMost + 1e-6);
      expect(settled.state.booked).toBeUndefined();
      expect(tokens.length).toBeGreaterThan(100);
    }
  });
});

describe('the list of booked tokens', () => {
  it('is bounded: once full, a call is not booked (it takes its token when it comes) and the line is as before', () => {
    const config = rateBucketConfig({ ratePerSecond: 2 });
    const t0 = 1_000_000;
    let state = initialBucket(config, t0);
    // Calls due a minute ahead and later, a second apart: each is booked at its own time.
    for (let i = 0; i < maxBookedTokens; i++) {
      const result = reserveAhead(state, config, t0, t0 + 60_000 + i * 1_000, 15_000);
      expect(result.reservedAt).toBe(t0 + 60_000 + i * 1_000);
      state = result.state;
    }
    expect(state.booked).toHaveLength(maxBookedTokens);
    // The list is full: the next one is refused, and nothing changes.
    const refused = reserveAhead(state, config, t0, t0 + 30_000, 15_000);
    expect(refused.reservedAt).toBeUndefined();
    expect(refused.state.booked).toEqual(state.booked);
    // A reservation in line (the line reaches the call's time) does not need the list: still given.
    expect(reserveAhead(state, config, t0, t0, 15_000).reservedAt).toBe(t0);
    // Once the line has passed some of them, there is room again.
    const later = t0 + 60_000 + 10_500;
    expect(reserveAhead(state, config, later, later + 120_000, 15_000).reservedAt).toBe(later + 120_000);
  });
});

describe('booked tokens whose time has passed', () => {
  it('are taken at their own time: a bucket nobody wrote since grants the next token now', () => {
    const config = rateBucketConfig({ ratePerSecond: 2 });
    const t0 = 1_750_000_000_000;
    // Twelve calls booked 1 to 19 s after the last write; nobody wrote the bucket since.
    const booked = Array.from({ length: 12 }, (_, i) => t0 + 1_000 + i * 1_500);
    const stale: RateBucketState = { tokens: 0, rate: 2, updatedAt: t0, lastTokenAt: t0, booked };
    const now = t0 + 60_000;
    const result = take(stale, config, now, 2_000);
    expect(result.decision).toEqual({ granted: true });
    expect(result.state.booked).toBeUndefined();
    // A booking still ahead, within 1/rate of now, is the line's: the next token comes after it.
    const ahead = take({ ...stale, booked: [...booked, now + 200] }, config, now, 2_000);
    expect(ahead.decision).toEqual({ granted: false, reserved: true, retryAtMs: now + 700 });
  });
});
