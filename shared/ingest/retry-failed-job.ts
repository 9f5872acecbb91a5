/**
 * The smallest "run a FAILED or CANCELLED job again from the step it stopped at" that redrive needs,
 * until the engine's own retry primitive (issue 13) is on main; then redrive uses that one.
 */
import type { EngineDeps } from '../engine/deps';
import type { Job } from '../engine/job';
import { JobRequestError } from '../engine/jobs';

/** Failure kinds meaning the upstream task itself is failed or gone: that step cannot simply be polled again. */
const taskGoneKinds = new Set(['upstream-failed', 'not-found']);

export async function retryFailedJob(deps: EngineDeps, jobId: string): Promise<Job> {
  for (let tries = 0; tries < 5; tries++) {
    const job = await deps.store.get(jobId);
    if (!job) throw new JobRequestError(`no job ${jobId}`, 404);
    if (job.status !== 'FAILED' && job.status !== 'CANCELLED')
      throw new JobRequestError(
        `job ${jobId} is ${job.status}: only a FAILED or CANCELLED job runs again`,
        409,
      );
    const workflow = deps.workflows.get(job.workflow);
    if (!workflow)
      throw new JobRequestError(`job ${jobId} belongs to unknown workflow "${job.workflow}"`, 409);
    // Where the upstream task is gone, go back to the start; else continue at the step it stopped at.
    const fromStart = job.lastError !== undefined && taskGoneKinds.has(job.lastError.kind);
    const from = fromStart ? (workflow.steps[0]?.name ?? job.step) : job.step;
    const now = deps.clock.now();
    const next: Job = {
      ...job,
      status: 'QUEUED',
      step: from,
      version: job.version + 1,
      context: fromStart ? {} : job.context,
      selections: fromStart ? {} : job.selections,
      pending: undefined,
      attempts: 0,
      polls: 0,
      pollStartedAt: undefined,
      inFlightSince: undefined,
      intents: fromStart ? {} : job.intents,
      lastError: undefined,
      nextRunAt: now,
      deadlineAt: now + Math.max(60_000, job.deadlineAt - job.createdAt),
      updatedAt: now,
      finishedAt: undefined,
      expiresAt: undefined,
    };
    if (await deps.store.commit(next, job.version)) {
      await deps.queue.send({ jobId: next.id, version: next.version }, 0);
      deps.onJobChange?.(next);
      return next;
    }
  }
  throw new JobRequestError(`job ${jobId} keeps changing; try again`, 409);
}
