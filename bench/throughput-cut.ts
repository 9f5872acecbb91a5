/**
 * When the throughput bench (bench/throughput.ts) stops waiting for a case's jobs. On the virtual
 * clock a case is bounded by clock time (a multiple of its bound: the time the case is about), and
 * by real time only as a last guard far above, so a loaded machine (which slows the real time of a
 * virtual run, not its clock time) cuts no case; on the wall clock both are the same time.
 */

/** On the virtual clock: a case is cut after this many times its bound of clock time... */
export const virtualCutTimes = 20;
/** ...and never before this much clock time, ms (a short bound still lets slow polls end). */
export const virtualCutFloorMs = 300_000;
/** On the virtual clock: the real-time guard (a case that stops moving its clock), ms. */
export const realGuardMs = 30 * 60_000;
/** On the wall clock: a case is cut after this many times its bound, and never before 300 s. */
export const wallCutTimes = 8;
export const wallCutFloorMs = 300_000;

export interface CaseCut {
  /** Clock time after which the case is cut (virtual clock only), ms. */
  clockMs?: number | undefined;
  /** Real time after which the case is cut, ms. */
  realMs: number;
}

/** The cut for a case whose bound is `boundMs` (clock time), on the virtual clock or the wall clock. */
export function caseCut(virtual: boolean, boundMs: number): CaseCut {
  if (!(boundMs >= 0)) throw new Error(`a case's bound must be a time, not ${boundMs}`);
  return virtual
    ? { clockMs: Math.max(virtualCutFloorMs, virtualCutTimes * boundMs), realMs: realGuardMs }
    : { realMs: Math.max(wallCutFloorMs, wallCutTimes * boundMs) };
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(0)} s`;

/**
 * Why a case is cut after `clockMs` of clock time and `realMs` of real time since its start, or
 * undefined while it may go on.
 */
export function cutReason(cut: CaseCut, elapsed: { clockMs: number; realMs: number }): string | undefined {
  if (cut.clockMs !== undefined && elapsed.clockMs >= cut.clockMs)
    return `cut at ${seconds(elapsed.clockMs)} of clock time (limit ${seconds(cut.clockMs)}; ${seconds(elapsed.realMs)} real)`;
  if (elapsed.realMs >= cut.realMs)
    return `cut at ${seconds(elapsed.realMs)} of real time (limit ${seconds(cut.realMs)}${cut.clockMs === undefined ? '' : `; clock ${seconds(elapsed.clockMs)} of ${seconds(cut.clockMs)}`})`;
  return undefined;
}

/**
 * Watches a case against `cut` every `everyMs` of real time: `signal` aborts (its reason the cut's
 * text) once `cutReason` gives one. `stop` ends the watch.
 */
export function watchCut(
  cut: CaseCut,
  elapsed: () => { clockMs: number; realMs: number },
  everyMs = 1_000,
): { signal: AbortSignal; reason: () => string | undefined; stop: () => void } {
  const controller = new AbortController();
  let reason: string | undefined;
  const look = () => {
    reason = cutReason(cut, elapsed());
    if (reason !== undefined) {
      clearInterval(timer);
      controller.abort(new Error(reason));
    }
  };
  const timer = setInterval(look, everyMs);
  return { signal: controller.signal, reason: () => reason, stop: () => clearInterval(timer) };
}
