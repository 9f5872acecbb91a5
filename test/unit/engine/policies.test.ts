import { describe, expect, it } from 'vitest';
import { defaultRetryPolicy, pollDelay, retryDelay } from '../../../shared/engine';

describe('retryDelay (exponential backoff with full jitter)', () => {
  const policy = { ...defaultRetryPolicy, baseDelayMs: 1_000, maxDelayMs: 10_000 };

  it('draws uniformly below a ceiling that doubles per attempt', () => {
    expect(retryDelay(policy, 1, () => 0.999)).toBe(999);
    expect(retryDelay(policy, 2, () => 0.5)).toBe(1_000);
    expect(retryDelay(policy, 3, () => 0.5)).toBe(2_000);
    expect(retryDelay(policy, 1, () => 0)).toBe(0);
  });

  it('never exceeds the cap', () => {
    expect(retryDelay(policy, 30, () => 0.999_999)).toBeLessThan(10_000);
  });

  it('honours Retry-After when it asks for longer', () => {
    expect(retryDelay(policy, 1, () => 0.1, 30_000)).toBe(30_000);
    expect(retryDelay(policy, 4, () => 0.9, 100)).toBe(7_200);
  });
});

describe('pollDelay', () => {
  it('grows by the factor from the first delay up to the ceiling', () => {
    const policy = { firstDelayMs: 60_000, factor: 1.5, maxDelayMs: 120_000, giveUpAfterMs: 3_600_000 };
    expect([1, 2, 3, 4].map((poll) => pollDelay(policy, poll))).toEqual([60_000, 90_000, 120_000, 120_000]);
  });
});
