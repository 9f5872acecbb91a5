/**
 * The local runtime's workers: one loop that claims messages from the SQLite queue and runs up to
 * `concurrency` steps at once, plus the sweeper's timer. A waiting job holds no worker: the engine
 * schedules it as a delayed message, and the loop only sleeps (or, with skipping time, jumps the
 * clock) until the next message is due.
 */
import type { ClaimedMessage, SqliteWorkQueue } from '../../backends/local';
import type { WorkMessage } from '../../engine/ports';
import type { RuntimeTime } from '../time';

export interface WorkerPoolOptions {
  queue: SqliteWorkQueue;
  time: RuntimeTime;
  /** Steps run at once. */
  concurrency: number;
  /** Runs one message to its end. A throw releases the message to be tried again later. */
  handle: (message: WorkMessage) => Promise<unknown>;
  /** The lease names this process, so a restart can take back the leases of a killed one. */
  owner: string;
  /** How long a claimed message stays hidden; renewed while its step runs. Default: one minute. */
  leaseMs?: number | undefined;
  /** Longest real pause between two looks at the queue, to notice other processes' work. Default: 250 ms. */
  pollMs?: number | undefined;
  /** Re-sends stranded jobs; run at start and then every `sweepIntervalMs` of clock time. */
  sweep?: (() => Promise<unknown>) | undefined;
  /** Default: 30 seconds. */
  sweepIntervalMs?: number | undefined;
  /**
   * The budget filler's round (engine/admission/budget-filler.ts: pull polls forward into spare budget, re-aim them):
   * run whenever nothing is claimable, at most every `fillIntervalMs` of clock time; while messages
   * wait the loop looks again that often. It answers when a job left waiting could next be moved; a
   * loop with nothing queued looks again only then.
   */
  fill?: (() => Promise<{ nextChanceAt?: number | undefined } | undefined>) | undefined;
  /** Default: 250 ms. */
  fillIntervalMs?: number | undefined;
  /** Told about a step that threw (not a business failure: those are committed to the job). */
  onError?: ((error: unknown, message: WorkMessage) => void) | undefined;
}

/** Largest delay before a message whose step threw is tried again. */
const maxErrorBackoffMs = 5 * 60_000;

export class WorkerPool {
  readonly #options: Required<Omit<WorkerPoolOptions, 'sweep' | 'onError' | 'fill'>> &
    Pick<WorkerPoolOptions, 'sweep' | 'onError' | 'fill'>;
  readonly #inFlight = new Map<string, Promise<void>>();
  #running = false;
  #loop: Promise<void> | undefined;
  #wakeUp: (() => void) | undefined;
  #wakePending = false;
  #stepsRun = 0;
  #claimsPausedUntil = 0;
  #fillRounds = 0;
  #fillMs = 0;

  constructor(options: WorkerPoolOptions) {
    if (!(Number.isInteger(options.concurrency) && options.concurrency >= 1)) {
      throw new RangeError(`concurrency must be a whole number of at least 1, got ${options.concurrency}`);
    }
    this.#options = {
      ...options,
      leaseMs: options.leaseMs ?? 60_000,
      pollMs: options.pollMs ?? 250,
      sweepIntervalMs: options.sweepIntervalMs ?? 30_000,
      fillIntervalMs: options.fillIntervalMs ?? 250,
    };
  }

  /** Steps running now. */
  get active(): number {
    return this.#inFlight.size;
  }

  /** Steps this pool has finished (or given up on) since it started. */
  get stepsRun(): number {
    return this.#stepsRun;
  }

  /** The budget filler's rounds run so far and the real time they took in all (what the filler costs). */
  get fillRounds(): { rounds: number; ms: number } {
    return { rounds: this.#fillRounds, ms: this.#fillMs };
  }

  get running(): boolean {
    return this.#running;
  }

  /** Starts claiming. Leases left by processes of this machine that died are taken back first. */
  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#loop = this.#run();
  }

  /**
   * Claim nothing before clock time `until` (the upstream's rate limit has no token before then).
   * Without it, every queued job would be claimed and deferred again at each token: work that grows
   * with the square of the queue.
   */
  pauseClaims(until: number): void {
    this.#claimsPausedUntil = Math.max(this.#claimsPausedUntil, until);
  }

  /** Look at the queue now (something was just sent). */
  wake(): void {
    this.#wakePending = true;
    this.#wakeUp?.();
  }

  /** Stops claiming and waits for the steps already running to finish and be acknowledged. */
  async stop(): Promise<void> {
    if (!this.#running) return;
    this.#running = false;
    this.wake();
    await this.#loop;
    await Promise.allSettled([...this.#inFlight.values()]);
  }

  async #run(): Promise<void> {
    const { queue, time, concurrency, leaseMs, owner, pollMs, sweep, sweepIntervalMs, fill, fillIntervalMs } =
      this.#options;
    queue.releaseOrphanedLeases();
    let nextSweepAt = time.clock.now();
    let nextFillAt = time.clock.now();
    let fillChanceAt = Number.POSITIVE_INFINITY;
    while (this.#running) {
      const wake = this.#nextWake();
      const now = time.clock.now();
      if (sweep && now >= nextSweepAt) {
        try {
          await sweep();
        } catch (error) {
          this.#options.onError?.(error, { jobId: '(sweeper)', version: 0 });
        }
        nextSweepAt = time.clock.now() + sweepIntervalMs;
        continue;
      }
      const paused = now < this.#claimsPausedUntil;
      const free = paused ? 0 : concurrency - this.#inFlight.size;
      let claimed: ClaimedMessage[] = [];
      try {
        claimed = free > 0 ? queue.claim(now, free, leaseMs, owner) : [];
      } catch (error) {
        // The database is busy beyond its timeout, or the disk is full: say so and look again soon.
        this.#options.onError?.(error, { jobId: '(queue)', version: 0 });
        await time.busyWait(wake, Math.max(pollMs, 1_000));
        continue;
      }
      for (const message of claimed) this.#startStep(message);
      if (claimed.length > 0) continue;
      if (this.#wakePending) continue;
      if (fill && now >= nextFillAt) {
        nextFillAt = now + fillIntervalMs;
        const startedAt = performance.now();
        try {
          fillChanceAt = (await fill())?.nextChanceAt ?? Number.POSITIVE_INFINITY;
        } catch (error) {
          this.#options.onError?.(error, { jobId: '(scheduler)', version: 0 });
        }
        this.#fillRounds += 1;
        this.#fillMs += performance.now() - startedAt;
        continue;
      }
      if (this.#inFlight.size > 0) {
        await time.busyWait(wake, pollMs);
        continue;
      }
      const visible = queue.nextVisibleAt() ?? Number.POSITIVE_INFINITY;
      const claimable = paused ? Math.max(visible, this.#claimsPausedUntil) : visible;
      // While messages wait, the filler looks every round: the budget frees up as tokens refill,
      // not only when a poll becomes likely done (waiting for `fillChanceAt` alone left the budget
      // idle: learned right 2.1 to 2.7x the bound against 1.1 to 1.3x, bench/journal/2026-11-23-throughput.md). With
      // nothing queued, only a chance the filler named wakes it.
      const filling = !fill
        ? Number.POSITIVE_INFINITY
        : queue.size() > 0
          ? nextFillAt
          : Math.max(nextFillAt, fillChanceAt);
      const next = Math.min(claimable, filling, sweep ? nextSweepAt : Number.POSITIVE_INFINITY);
      if (Number.isFinite(next)) await time.idleUntil(next, wake, pollMs);
      else await time.busyWait(wake, pollMs);
    }
  }

  #nextWake(): Promise<void> {
    this.#wakePending = false;
    return new Promise<void>((resolve) => {
      this.#wakeUp = resolve;
    });
  }

  #startStep(claimed: ClaimedMessage): void {
    const { queue, handle, leaseMs, onError } = this.#options;
    // Renew the lease while the step runs (a long stream), so no other worker takes it over.
    const heartbeat = setInterval(() => queue.extend(claimed.receipt, leaseMs), Math.max(1_000, leaseMs / 3));
    heartbeat.unref();
    const step = (async () => {
      try {
        await handle(claimed.message);
        queue.ack(claimed.receipt);
      } catch (error) {
        onError?.(error, claimed.message);
        const backoff = Math.min(maxErrorBackoffMs, 1_000 * 2 ** Math.min(20, claimed.receiveCount - 1));
        queue.release(claimed.receipt, backoff);
      } finally {
        clearInterval(heartbeat);
        this.#inFlight.delete(claimed.receipt);
        this.#stepsRun += 1;
        this.wake();
      }
    })();
    this.#inFlight.set(claimed.receipt, step);
  }
}
