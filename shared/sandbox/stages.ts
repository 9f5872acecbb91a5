/**
 * A stage: one piece of asynchronous work upstream (recommendations, features, a report, ...).
 * It runs for its duration by the sandbox clock, then succeeds, or fails when a trigger asked for it.
 */
import * as z from 'zod';

export type StageState = 'running' | 'succeeded' | 'failed';

export interface Stage {
  /** The operation that started the work (its duration comes from this operation). */
  readonly startedBy: string;
  readonly startedAt: number;
  readonly durationMs: number;
  readonly fails: boolean;
}

/** A stage as kept in a sandbox state file. */
export const stageSchema = z.strictObject({
  startedBy: z.string().min(1),
  startedAt: z.number(),
  durationMs: z.number().nonnegative(),
  fails: z.boolean(),
}) satisfies z.ZodType<Stage>;

export function stageState(stage: Stage, now: number): StageState {
  if (now - stage.startedAt < stage.durationMs) return 'running';
  return stage.fails ? 'failed' : 'succeeded';
}

/** How far the work is, from 0 to 1. */
export function stageProgress(stage: Stage, now: number): number {
  if (stage.durationMs <= 0) return 1;
  return Math.min(1, Math.max(0, (now - stage.startedAt) / stage.durationMs));
}

/** The ai33/ai73/ai34 encoding. */
export function upperStatus(state: StageState): 'RUNNING' | 'SUCCEED' | 'FAILED' {
  return state === 'running' ? 'RUNNING' : state === 'succeeded' ? 'SUCCEED' : 'FAILED';
}

/** The ai35 (and ai32-2) encoding: 1 running, 2 success, 3 failure. */
export function numericStatus(state: StageState): 1 | 2 | 3 {
  return state === 'running' ? 1 : state === 'succeeded' ? 2 : 3;
}
