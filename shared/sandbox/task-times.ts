/**
 * How long the sandbox's work takes: a family of task-time distributions (uniform, skewed,
 * lognormal, bimodal, heavy-tailed Pareto), each drawn from a seeded generator per task, and an
 * optional slowdown under load (each task started while others run takes longer by a share per
 * running task), so a batch meets an upstream that slows down as it works, as the real platform does.
 */
import * as z from 'zod';
import type { TaskDuration } from './constants';
import { SeededRandom } from './seeded';

/** The families a task's duration can be drawn from (see `TaskDuration.shape`). */
export const taskTimeShapes = ['uniform', 'skewed', 'lognormal', 'bimodal', 'pareto'] as const;

/** A `TaskDuration` as the sandbox's options accept it (every field checked, unknown ones refused). */
export const taskDurationSchema = z
  .strictObject({
    meanMs: z.number().nonnegative(),
    spreadMs: z.number().nonnegative(),
    shape: z.enum(taskTimeShapes).optional(),
    sigma: z.number().positive().max(5).optional(),
    longMs: z.number().nonnegative().optional(),
    longShare: z.number().min(0).max(1).optional(),
    alpha: z.number().positive().max(20).optional(),
    maxMs: z.number().positive().optional(),
    slowdownPerRunningTask: z.number().nonnegative().max(10).optional(),
    maxSlowdown: z.number().min(1).max(100).optional(),
  })
  .superRefine((duration, context) => {
    const only = (field: keyof TaskDuration, shapes: readonly string[]) => {
      if (duration[field] !== undefined && !shapes.includes(duration.shape ?? 'uniform'))
        context.addIssue({
          code: 'custom',
          path: [field],
          message: `applies only to shape ${shapes.map((shape) => `'${shape}'`).join(' or ')}`,
        });
    };
    only('sigma', ['lognormal']);
    only('longMs', ['bimodal']);
    only('longShare', ['bimodal']);
    only('alpha', ['pareto']);
    if (duration.shape === 'bimodal' && duration.longMs === undefined)
      context.addIssue({ code: 'custom', path: ['longMs'], message: "shape 'bimodal' needs longMs" });
    if (duration.maxMs !== undefined && duration.maxMs < duration.meanMs)
      context.addIssue({ code: 'custom', path: ['maxMs'], message: 'must be at least meanMs' });
  });

/** Pareto's tail index when not given: a finite mean, an infinite variance (a heavy tail). */
export const defaultParetoAlpha = 1.5;
/** Lognormal's sigma when not given: a wide spread (the 0.9 quantile 3.6 times the median). */
export const defaultLognormalSigma = 1;

/**
 * One draw of `duration` from `random` (uniform in [0, 1)), before any slowdown, in milliseconds:
 * - `uniform` (default): `meanMs ± spreadMs`;
 * - `skewed`: the square of a uniform draw, most tasks near `meanMs - spreadMs`, a tail to `+ spreadMs`;
 * - `lognormal`: median `meanMs`, log-spread `sigma` (default 1), `spreadMs` unused;
 * - `bimodal`: `longShare` (default 0.2) of tasks take `longMs ± spreadMs`, the others `meanMs ± spreadMs`;
 * - `pareto`: at least `meanMs`, tail index `alpha` (default 1.5): P(T > t) = (meanMs / t)^alpha.
 * `maxMs` caps every draw (the platform gives up on a task eventually).
 */
export function drawTaskTime(duration: TaskDuration, random: () => number): number {
  const u = random();
  let ms: number;
  switch (duration.shape ?? 'uniform') {
    case 'skewed':
      ms = duration.meanMs + (2 * u * u - 1) * duration.spreadMs;
      break;
    case 'lognormal': {
      // Box-Muller from two uniform draws.
      const v = random();
      const normal = Math.sqrt(-2 * Math.log(1 - u)) * Math.cos(2 * Math.PI * v);
      ms = duration.meanMs * Math.exp((duration.sigma ?? defaultLognormalSigma) * normal);
      break;
    }
    case 'bimodal': {
      const long = u < (duration.longShare ?? 0.2);
      const centre = long ? (duration.longMs ?? duration.meanMs) : duration.meanMs;
      ms = centre + (2 * random() - 1) * duration.spreadMs;
      break;
    }
    case 'pareto':
      ms = duration.meanMs / (1 - u) ** (1 / (duration.alpha ?? defaultParetoAlpha));
      break;
    default:
      ms = duration.meanMs + (2 * u - 1) * duration.spreadMs;
  }
  return Math.max(0, Math.round(Math.min(duration.maxMs ?? Number.POSITIVE_INFINITY, ms)));
}

/**
 * Draws task durations and keeps the end times of the tasks it drew, so a duration with a
 * slowdown knows how many tasks run when it starts. Deterministic: the same seed, salts and start
 * times give the same durations.
 */
export class TaskTimes {
  /** End times of tasks drawn with a slowdown that may still run (pruned as the clock passes them). */
  private ends: number[] = [];

  constructor(private readonly seed: number) {}

  /** The duration of the work `operationId` starts at `now` for the resource salted `salt`. */
  draw(duration: TaskDuration, operationId: string, salt: string, now: number): number {
    const random = SeededRandom.from(this.seed, 'duration', operationId, salt);
    const base = drawTaskTime(duration, () => random.next());
    const perTask = duration.slowdownPerRunningTask ?? 0;
    if (perTask <= 0) return base;
    this.ends = this.ends.filter((end) => end > now);
    const factor = Math.min(duration.maxSlowdown ?? 3, 1 + perTask * this.ends.length);
    const ms = Math.round(Math.min(duration.maxMs ?? Number.POSITIVE_INFINITY, base * factor));
    this.ends.push(now + ms);
    return ms;
  }
}
