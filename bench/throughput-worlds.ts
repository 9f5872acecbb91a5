/**
 * The upstream worlds of the throughput bench's matrix (bench/throughput.ts): task-time families
 * and limiters of the sandbox, and the key limits, so no estimate or admission choice can be tuned
 * to one of them.
 */
import type { SandboxKey, TaskDuration } from '../shared/sandbox';

/** Task times of every task of the novelty check, by family. */
export const families = {
  /** 1 to 3 s, even. */
  uniform: { meanMs: 2_000, spreadMs: 1_000 },
  /** Median 2 s, a wide spread (sigma 1: the 0.9 quantile 7.2 s), capped at 60 s. */
  lognormal: { shape: 'lognormal', meanMs: 2_000, spreadMs: 0, sigma: 1, maxMs: 60_000 },
  /** 80 % 1 to 2 s, 20 % 6 to 10 s. */
  bimodal: { shape: 'bimodal', meanMs: 1_500, spreadMs: 500, longMs: 8_000, longShare: 0.2 },
  /** At least 1 s, Pareto tail index 1.5 (mean 3 s, infinite variance), capped at 60 s. */
  pareto: { shape: 'pareto', meanMs: 1_000, spreadMs: 0, alpha: 1.5, maxMs: 60_000 },
  /** 1 to 3 s alone, each task 4 % longer per task running when it starts, up to 3 times. */
  drift: { meanMs: 2_000, spreadMs: 1_000, slowdownPerRunningTask: 0.04, maxSlowdown: 3 },
} as const satisfies Record<string, TaskDuration>;
export type Family = keyof typeof families;

/** The sandbox key's limiter, by name: how its QPS is counted. */
export const limiters = {
  sliding: { limiter: 'sliding-window' },
  bucket: { limiter: 'token-bucket', burst: 'twice' },
  fixed: { limiter: 'fixed-window' },
} as const;
export type Limiter = keyof typeof limiters;

/** The key's limit (and opflow's --qps) in the matrix, calls/s. */
export const matrixQps = [2, 5, 20] as const;

/** The key the sandbox accepts in a world: its limit counted by the named limiter. */
export function worldKey(key: string, limiter: Limiter, qps: number): SandboxKey {
  const shape = limiters[limiter];
  return {
    key,
    qps,
    limiter: shape.limiter,
    // A token bucket with a burst of two seconds' worth of calls.
    ...('burst' in shape ? { burst: 2 * qps } : {}),
  };
}

/** The cells the 300-job batch runs (the whole matrix at 300 does not fit a run on these machines). */
export const largeCells: readonly { family: Family; limiter: Limiter; qps: number }[] = [
  { family: 'lognormal', limiter: 'sliding', qps: 5 },
  { family: 'pareto', limiter: 'bucket', qps: 5 },
  { family: 'bimodal', limiter: 'fixed', qps: 20 },
  { family: 'drift', limiter: 'sliding', qps: 20 },
];
