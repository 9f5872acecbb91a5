/**
 * Following a set of jobs until each is settled (finished, or waiting for a person's selection):
 * changes committed in this process arrive at once through a subscription, changes made elsewhere
 * (another process, Lambda) are noticed by reading the store every `pollMs`.
 */
import { isTerminal, type Job } from '../engine/job-record';
import type { JobStore } from '../engine/ports';

/** Settled: nothing more will happen without a person (finished, or waiting for a selection). */
export function isSettled(job: Job): boolean {
  return isTerminal(job.status) || job.status === 'AWAITING_INPUT';
}

export interface WatchJobsOptions {
  /** Subscribes to this process's committed changes; returns the unsubscribe function. */
  subscribe?: ((listener: (job: Job) => void) => () => void) | undefined;
  /** Called with each job whenever a newer version of it is seen. */
  onUpdate?: ((job: Job) => void) | undefined;
  signal?: AbortSignal | undefined;
  /** How often the store is read for changes made elsewhere. Default: half a second. */
  pollMs?: number | undefined;
  /** When a job counts as done for this watch. Default: `isSettled`. */
  isDone?: ((job: Job) => boolean) | undefined;
}

/** Resolves with the latest version of each job (in the order of `ids`) once all are settled. */
export function watchJobs(
  store: JobStore,
  ids: readonly string[],
  options: WatchJobsOptions = {},
): Promise<Job[]> {
  const wanted = new Set(ids);
  const isDone = options.isDone ?? isSettled;
  return new Promise<Job[]>((resolve, reject) => {
    const latest = new Map<string, Job>();
    let reading = false;
    let readAgain = false;
    let done = false;

    const see = (job: Job) => {
      const known = latest.get(job.id);
      if (known && known.version >= job.version) return;
      latest.set(job.id, job);
      options.onUpdate?.(job);
    };
    const finish = (error?: unknown) => {
      if (done) return;
      done = true;
      clearInterval(timer);
      unsubscribe?.();
      options.signal?.removeEventListener('abort', onAbort);
      if (error !== undefined) reject(error);
      else resolve(ids.map((id) => latest.get(id)!));
    };
    const allSettled = () =>
      ids.every((id) => {
        const job = latest.get(id);
        return job !== undefined && isDone(job);
      });
    const readStore = async () => {
      if (reading) {
        readAgain = true;
        return;
      }
      reading = true;
      try {
        do {
          readAgain = false;
          for (const id of wanted) {
            const known = latest.get(id);
            if (known && isTerminal(known.status)) continue;
            const job = await store.get(id);
            if (!job) throw new Error(`no job ${id}`);
            see(job);
          }
        } while (readAgain && !done);
        if (allSettled()) finish();
      } catch (error) {
        finish(error);
      } finally {
        reading = false;
      }
    };
    const onAbort = () => finish(options.signal?.reason ?? new Error('aborted'));
    const unsubscribe = options.subscribe?.((job) => {
      if (!wanted.has(job.id) || done) return;
      see(job);
      if (allSettled()) finish();
    });
    const timer = setInterval(() => void readStore(), options.pollMs ?? 500);
    timer.unref();
    if (options.signal?.aborted) return onAbort();
    options.signal?.addEventListener('abort', onAbort, { once: true });
    if (ids.length === 0) return finish();
    void readStore();
  });
}
