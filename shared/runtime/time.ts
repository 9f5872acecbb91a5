/**
 * How the local runtime waits: on the wall clock, or on a manual clock that jumps straight to the
 * next due time whenever every worker is idle (tests skip hours of polling in milliseconds; the
 * sandbox shares the same clock, so its tasks "take" the skipped time too).
 */
import type { Clock } from '../engine/ports';

export interface RuntimeTime {
  readonly clock: Clock;
  /** True when idle waits jump the clock instead of sleeping. */
  readonly skipping: boolean;
  /**
   * Nothing is running and nothing is visible: wait until clock time `at`, or until `wake` resolves.
   * A real wait is cut to `maxRealMs` so other processes' work is noticed; a skipping wait sets the
   * clock to `at` and returns at once.
   */
  idleUntil(at: number, wake: Promise<void>, maxRealMs: number): Promise<void>;
  /** Steps are running: wait until one finishes (`wake`), at most `maxRealMs` of real time. */
  busyWait(wake: Promise<void>, maxRealMs: number): Promise<void>;
}

/** A clock that moves only when told to. */
export class ManualClock implements Clock {
  #now: number;

  /** Starts at `start` (epoch milliseconds). Default: 5 January 2026, 09:00 UTC. */
  constructor(start: number = Date.UTC(2026, 0, 5, 9, 0, 0)) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  /** Moves to `at`; never backwards. */
  set(at: number): void {
    if (at > this.#now) this.#now = at;
  }

  advance(ms: number): void {
    this.set(this.#now + Math.max(0, ms));
  }
}

function realSleep(ms: number, wake: Promise<void>): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const slept = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, Math.max(0, ms));
  });
  return Promise.race([slept, wake]).finally(() => clearTimeout(timer));
}

/** Waits on the wall clock (or on `clock`, for the time it reads). */
export function realTime(clock: Clock = { now: () => Date.now() }): RuntimeTime {
  return {
    clock,
    skipping: false,
    idleUntil: (at, wake, maxRealMs) => realSleep(Math.min(Math.max(0, at - clock.now()), maxRealMs), wake),
    busyWait: (wake, maxRealMs) => realSleep(maxRealMs, wake),
  };
}

/** Jumps `clock` to each due time when idle; waits for running steps in real time. */
export function skippingTime(clock: ManualClock): RuntimeTime {
  return {
    clock,
    skipping: true,
    idleUntil: async (at) => {
      clock.set(at);
      // Let timers and I/O callbacks run before the next look at the queue.
      await new Promise<void>((resolve) => setImmediate(resolve));
    },
    busyWait: (wake, maxRealMs) => realSleep(maxRealMs, wake),
  };
}
