/**
 * The out-of-order checks every workflow shares: a step that needs earlier work answers the
 * invalid-parameter code with a message that names the step and what it waits for.
 */
import { outOfOrder } from '../sandbox-rejection';
import { stableJson } from '../seeded';
import { type Stage, stageState } from '../stages';

/**
 * Throw unless `stage` exists and has succeeded. `caller` is the step called (e.g. `ai33-3`),
 * `what` the work it needs (e.g. `the recommendations of ai33-2`), `start` how that work is started.
 */
export function requireSucceeded(
  stage: Stage | undefined,
  now: number,
  caller: string,
  what: string,
  start: string,
): asserts stage is Stage {
  if (!stage) throw outOfOrder(`${caller} needs ${what}, which has not been started: call ${start} first`);
  const state = stageState(stage, now);
  if (state === 'running') throw outOfOrder(`${caller} called before ${what} finished (still running)`);
  if (state === 'failed') throw outOfOrder(`${caller} cannot continue: ${what} FAILED`);
}

/** Throw unless the work polled by `caller` has been started. */
export function requireStarted(
  stage: Stage | undefined,
  caller: string,
  start: string,
): asserts stage is Stage {
  if (!stage) throw outOfOrder(`${caller} called before ${start}: nothing to report yet`);
}

/**
 * The confirmation steps' rule: the first call keeps its choice and starts the next stage
 * (`confirm`); a repeat with the same choice changes nothing (a retried call is harmless); a
 * different choice is refused with `conflict`, because the next stage already works on the first.
 */
export function confirmOnce<T>(
  confirmed: T | undefined,
  choice: T,
  conflict: string,
  confirm: () => void,
): void {
  if (confirmed !== undefined) {
    if (stableJson(confirmed) === stableJson(choice)) return;
    throw outOfOrder(conflict);
  }
  confirm();
}
