/** Task-time families, the slowdown under load, and the limiters of a sandbox key. */
import { describe, expect, it } from 'vitest';
import type { TaskDuration } from '../../../shared/sandbox/constants';
import { KeyGate } from '../../../shared/sandbox/key-gate';
import { resolveOptions, type SandboxKey } from '../../../shared/sandbox/options';
import { SandboxRejection } from '../../../shared/sandbox/sandbox-rejection';
import { SeededRandom } from '../../../shared/sandbox/seeded';
import { drawTaskTime, TaskTimes } from '../../../shared/sandbox/task-times';

function draws(duration: TaskDuration, count = 4_000): number[] {
  const random = new SeededRandom(7);
  return Array.from({ length: count }, () => drawTaskTime(duration, () => random.next())).sort(
    (a, b) => a - b,
  );
}
const quantile = (sorted: number[], q: number) => sorted[Math.floor(q * (sorted.length - 1))] ?? Number.NaN;

describe('drawTaskTime', () => {
  it('draws uniform and skewed times within mean ± spread, as before', () => {
    const uniform = draws({ meanMs: 2_000, spreadMs: 1_000 });
    expect(uniform[0]).toBeGreaterThanOrEqual(1_000);
    expect(uniform.at(-1)).toBeLessThanOrEqual(3_000);
    expect(quantile(uniform, 0.5)).toBeGreaterThan(1_900);
    expect(quantile(uniform, 0.5)).toBeLessThan(2_100);
    const skewed = draws({ meanMs: 2_000, spreadMs: 1_000, shape: 'skewed' });
    // The square of a uniform draw: the median at 1 + 2 * 0.25 = 1.5 s.
    expect(quantile(skewed, 0.5)).toBeGreaterThan(1_400);
    expect(quantile(skewed, 0.5)).toBeLessThan(1_600);
  });

  it('draws a lognormal around its median with a wide spread, capped at maxMs', () => {
    const times = draws({ shape: 'lognormal', meanMs: 2_000, spreadMs: 0, sigma: 1, maxMs: 20_000 });
    expect(quantile(times, 0.5)).toBeGreaterThan(1_800);
    expect(quantile(times, 0.5)).toBeLessThan(2_200);
    // exp(1.2816) = 3.6 times the median at the 0.9 quantile.
    expect(quantile(times, 0.9) / quantile(times, 0.5)).toBeGreaterThan(3.2);
    expect(quantile(times, 0.9) / quantile(times, 0.5)).toBeLessThan(4);
    expect(times.at(-1)).toBeLessThanOrEqual(20_000);
  });

  it('draws a bimodal mixture with the long share asked for', () => {
    const times = draws({ shape: 'bimodal', meanMs: 1_500, spreadMs: 500, longMs: 8_000, longShare: 0.2 });
    const long = times.filter((ms) => ms >= 6_000).length / times.length;
    expect(long).toBeGreaterThan(0.17);
    expect(long).toBeLessThan(0.23);
    expect(times.filter((ms) => ms > 2_000 && ms < 6_000)).toEqual([]);
  });

  it('draws a heavy Pareto tail from its minimum', () => {
    const times = draws({ shape: 'pareto', meanMs: 1_000, spreadMs: 0, alpha: 1.5 });
    expect(times[0]).toBeGreaterThanOrEqual(1_000);
    // P(T > t) = (1 / t)^1.5: the 0.99 quantile at 100^(1/1.5) = 21.5 s.
    expect(quantile(times, 0.99)).toBeGreaterThan(15_000);
    expect(quantile(times, 0.99)).toBeLessThan(30_000);
  });
});

describe('TaskTimes', () => {
  it('draws the same duration for the same seed, operation and salt', () => {
    const a = new TaskTimes(3).draw({ meanMs: 2_000, spreadMs: 1_000 }, 'op', 'task-1', 0);
    const b = new TaskTimes(3).draw({ meanMs: 2_000, spreadMs: 1_000 }, 'op', 'task-1', 500);
    expect(a).toBe(b);
  });

  it('slows a task down by the share per running task, up to maxSlowdown', () => {
    const duration: TaskDuration = {
      meanMs: 1_000,
      spreadMs: 0,
      slowdownPerRunningTask: 0.5,
      maxSlowdown: 2,
    };
    const times = new TaskTimes(1);
    expect(times.draw(duration, 'op', 'a', 0)).toBe(1_000);
    expect(times.draw(duration, 'op', 'b', 100)).toBe(1_500);
    expect(times.draw(duration, 'op', 'c', 200)).toBe(2_000);
    expect(times.draw(duration, 'op', 'd', 300)).toBe(2_000);
    // Every task above ended by 10 s: alone again.
    expect(times.draw(duration, 'op', 'e', 10_000)).toBe(1_000);
  });
});

describe('task durations and limiters in the options', () => {
  it('refuses a parameter of another shape, and a bimodal without its long time', () => {
    expect(() => resolveOptions({ defaultTaskDuration: { meanMs: 1, spreadMs: 0, alpha: 2 } })).toThrow(
      /defaultTaskDuration\.alpha: applies only to shape 'pareto'/,
    );
    expect(() =>
      resolveOptions({ defaultTaskDuration: { meanMs: 1, spreadMs: 0, shape: 'bimodal' } }),
    ).toThrow(/defaultTaskDuration\.longMs: shape 'bimodal' needs longMs/);
    expect(() => resolveOptions({ keys: [{ key: 'k', qps: 2, burst: 4 }] })).toThrow(
      /keys\[0\]\.burst: applies only to limiter 'token-bucket'/,
    );
  });
});

describe('KeyGate limiters', () => {
  const admitAt = (key: SandboxKey, times: number[]): boolean[] => {
    const gate = new KeyGate([key]);
    const state = gate.identify(`Bearer ${key.key}`, null);
    return times.map((now) => {
      try {
        gate.admit(state, now);
        return true;
      } catch (error) {
        if (error instanceof SandboxRejection) return false;
        throw error;
      }
    });
  };

  it('sliding window: at most qps calls in any second', () => {
    expect(admitAt({ key: 'k', qps: 2 }, [0, 900, 950, 1_000, 1_899, 1_901])).toEqual([
      true,
      true,
      false,
      true,
      false,
      true,
    ]);
  });

  it('fixed window: at most qps calls per second of the clock, however close across a boundary', () => {
    expect(
      admitAt({ key: 'k', qps: 2, limiter: 'fixed-window' }, [900, 950, 999, 1_000, 1_001, 1_002]),
    ).toEqual([true, true, false, true, true, false]);
  });

  it('token bucket: a burst after a pause, then the refill rate', () => {
    expect(
      admitAt({ key: 'k', qps: 2, limiter: 'token-bucket', burst: 4 }, [0, 1, 2, 3, 4, 520, 1_040, 1_100]),
    ).toEqual([true, true, true, true, false, true, true, false]);
  });
});
