/**
 * Retrying a job that ended FAILED or CANCELLED: the command behind `opflow retry`, the job API's
 * `POST /jobs/{id}/retry`, bulk redrive and the dashboard's retry button.
 *
 * The job keeps its id, input, usage and outputs; the run that ended is kept in `job.runs` (its
 * status, step, error, usage then), and the job runs again from the step it stopped at, or from its
 * first step with `fromStart`. When the upstream reported the task itself failed (or gone) at a step
 * that only reads it, polling the same task again would fail the same way: the retry goes back to
 * the step that created it (a task the platform no longer knows, "task ... not found", is created
 * again). Create-call intents are kept across runs, so every create sent again (the task recreated,
 * a run from the start) is a counted paid repeat (`usage.duplicateCreates`), never a silent one.
 */
import { findStep, taskCreatorOf } from './advance';
import { rejoinBatch } from './batch-store';
import { callbackForNewRun } from './callback-record';
import type { JobDeps } from './deps';
import { checkExpectedVersion, type ExpectedVersion, JobRequestError } from './job-commands';
import type { Job, JobRun } from './job-record';
import type { Workflow } from './workflow';

export interface RetryOptions extends ExpectedVersion {
  /** Run the whole workflow again from its first step (upstream ids, selections and step data start afresh). */
  fromStart?: boolean | undefined;
  /** Milliseconds from now for the new run; default: as long as the job had the first time. */
  deadlineMs?: number | undefined;
  /** A new cap of billed units for the job (all its runs); default: the one it had. */
  maxUnits?: number | undefined;
}

/** The statuses a job may be retried from. */
export const retryableStatuses = ['FAILED', 'CANCELLED'] as const;

/** Failure kinds meaning the upstream task itself is failed or gone: reading it again cannot help. */
const taskGoneKinds = new Set(['upstream-failed', 'not-found']);

/**
 * The step a retry of `job` starts at (without `fromStart`): the step it stopped at, or, when the
 * upstream task failed at a step that only reads it, the nearest earlier step that creates one.
 */
export function retryStep(workflow: Workflow, job: Job): string {
  if (!job.lastError || !taskGoneKinds.has(job.lastError.kind)) return job.step;
  return taskCreatorOf(workflow, job.step) ?? job.step;
}

async function loadInput(deps: JobDeps, job: Job): Promise<unknown> {
  if ('inline' in job.input) return job.input.inline;
  const stored = await deps.reports.get(job.input.ref);
  if (!stored)
    throw new JobRequestError(`the input of job ${job.id} is no longer stored; start a new job`, 'conflict');
  return JSON.parse(Buffer.from(stored.body).toString('utf8'));
}

/** The step a retry starts at: the first (the workflow's `start` for the input) or `retryStep`. */
async function startStepOf(deps: JobDeps, workflow: Workflow, job: Job, fromStart: boolean): Promise<string> {
  let from = retryStep(workflow, job);
  if (fromStart) {
    from = workflow.steps[0]?.name ?? job.step;
    if (workflow.start) {
      const input = workflow.input.safeParse(await loadInput(deps, job));
      if (!input.success) {
        throw new JobRequestError(
          `job ${job.id}'s input is no longer valid for ${workflow.name}; start a new job`,
          'conflict',
        );
      }
      from = workflow.start(input.data);
    }
  }
  if (!findStep(workflow, from)) {
    throw new JobRequestError(
      `job ${job.id} stopped at step "${from}", which workflow ${workflow.name} no longer has; retry it --from-start`,
      'conflict',
    );
  }
  return from;
}

/**
 * A job cancelled while a paid call of its run was under way keeps the call's mark until the call's
 * outcome comes back (its usage, and its answer, are then added to the job: late-usage.ts) or its
 * allowance runs out (a caller that died). Retried before, the new run would call beside it, and
 * the call's late write would make the new run's commit lose: refused until then.
 */
function refuseWhileCallAlive(job: Job, now: number): void {
  if (job.inFlightSince === undefined || job.nextRunAt <= now) return;
  throw new JobRequestError(
    `job ${job.id} cannot be retried yet: a paid call of its run (step "${job.step}") is still under way; retry it once its answer is in, within ${Math.ceil((job.nextRunAt - now) / 1000)} s`,
    'conflict',
  );
}

/**
 * Run a FAILED or CANCELLED job again. Refuses (JobRequestError 409) a job in any other status
 * with the reason; 404 for an unknown job.
 */
export async function retryJob(deps: JobDeps, jobId: string, options: RetryOptions = {}): Promise<Job> {
  const fromStart = options.fromStart === true;
  // With an expected version there is one try: a job that changed is not the one selected.
  const tries = options.expectVersion === undefined ? 5 : 1;
  for (let attempt = 0; attempt < tries; attempt++) {
    const job = await deps.store.get(jobId);
    if (!job) throw new JobRequestError(`no job ${jobId}`, 'not-found');
    checkExpectedVersion(job, options);
    if (job.status !== 'FAILED' && job.status !== 'CANCELLED') {
      const why =
        job.status === 'SUCCEEDED'
          ? 'it SUCCEEDED; start a new job for the same input instead (opflow run --fresh)'
          : `it is ${job.status} and has not finished; only a FAILED or CANCELLED job can be retried`;
      throw new JobRequestError(`job ${jobId} cannot be retried: ${why}`, 'conflict');
    }
    refuseWhileCallAlive(job, deps.clock.now());
    const workflow = deps.workflows.get(job.workflow);
    if (!workflow) {
      throw new JobRequestError(`job ${jobId} belongs to unknown workflow "${job.workflow}"`, 'conflict');
    }
    const maxUnits = options.maxUnits ?? job.maxUnits;
    if (maxUnits !== undefined && job.usage.billedUnits >= maxUnits) {
      throw new JobRequestError(
        `job ${jobId} cannot be retried: it was billed ${job.usage.billedUnits} units and its cap is ${maxUnits}; retry it with a higher --max-units (the API's maxUnits)`,
        'conflict',
      );
    }
    const from = await startStepOf(deps, workflow, job, fromStart);
    const now = deps.clock.now();
    const run: JobRun = {
      status: job.status,
      step: job.step,
      error: job.lastError,
      finishedAt: job.finishedAt,
      usage: job.usage,
      retriedAt: now,
      retriedFrom: from,
      fromStart,
    };
    const span = options.deadlineMs ?? Math.max(60_000, job.deadlineAt - job.createdAt);
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
      inFlightBy: undefined,
      // Create calls sent in earlier runs stay counted: sent again, each is a counted paid repeat.
      intents: job.intents,
      lastError: undefined,
      recreatedTasks: undefined,
      // A new run gets a fresh message budget (the runaway guard counts per run).
      messages: undefined,
      // An answer that came back but could not be stored is stored now, not asked for again.
      unsaved: !fromStart && job.unsaved?.step === from ? job.unsaved : undefined,
      nextRunAt: now,
      deadlineAt: now + span,
      ...(maxUnits === undefined ? {} : { maxUnits }),
      runs: [...(job.runs ?? []), run],
      updatedAt: now,
      finishedAt: undefined,
      expiresAt: undefined,
      callback: callbackForNewRun(job),
    };
    // The new run's end gets its own callback: the outbox entry first, as when a job is created.
    if (job.callbackUrl) await deps.callbacks?.outbox.add(job.id, now);
    // Its batch stops counting it as ended first (a crash before the commit leaves it counted again).
    if (job.batchId !== undefined && deps.batches) await rejoinBatch(deps.batches, job, now);
    if (await deps.store.commit(next, job.version)) {
      deps.metrics?.count('JobRetried', 1, { workflow: job.workflow });
      deps.log?.info('job retried', { jobId, from, fromStart, run: next.runs!.length + 1 });
      await deps.queue.send({ jobId: next.id, version: next.version }, 0);
      deps.onJobChange?.(next);
      return next;
    }
  }
  throw new JobRequestError(
    options.expectVersion === undefined
      ? `job ${jobId} keeps changing; try again`
      : `job ${jobId} changed while retrying; look at it again`,
    'conflict',
  );
}
