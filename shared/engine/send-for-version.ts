import type { JobDeps } from './deps';
import { isTerminal, type Job } from './job-record';

/**
 * Sends the queue message of a job that runs on, for the version just written. A write outside
 * the step runner makes any message in flight stale (the runner drops a message whose version is
 * not the job's), so whoever writes a job that goes on sends its message for the version it leaves
 * (docs/concepts/reliability.md, "Writes outside the step runner"). A finished job, one waiting for
 * a person and a parked one (its releaser sends it) have none. The delay is the job's due time,
 * capped at the queue's longest delay (the runner defers a message that comes early).
 */
export async function sendForVersion(deps: Pick<JobDeps, 'queue' | 'clock'>, job: Job): Promise<void> {
  if (isTerminal(job.status) || job.status === 'AWAITING_INPUT' || job.parked) return;
  const delayMs = Math.max(0, job.nextRunAt - deps.clock.now());
  await deps.queue.send({ jobId: job.id, version: job.version }, Math.min(delayMs, deps.queue.maxDelayMs));
}
