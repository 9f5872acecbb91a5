/**
 * `opflow retry <jobId> [--from-start] [--max-units n]`: run a FAILED or CANCELLED job again, from the step it
 * stopped at (or from its first step), and wait for it like `opflow run` does. The job keeps its id;
 * the run that ended is kept in its record (`opflow status` shows the runs).
 */
import type { Job } from '../../engine/job-record';
import { retryJob } from '../../engine/retry';
import { type CliContext, type GlobalOptions, openBackend } from '../context';
import { driveJobs, reportOutcome } from '../drive-jobs';
import { CliError, ExitCode, type ExitCodeValue } from '../exit-codes';
import { stepTitle } from '../format';
import { parseDuration, parseMaxUnits } from './run';

export interface RetryCommandOptions extends GlobalOptions {
  fromStart?: boolean | undefined;
  deadline?: string | undefined;
  maxUnits?: string | undefined;
  wait: boolean;
}

export async function retryCommand(
  ctx: CliContext,
  jobId: string,
  options: RetryCommandOptions,
): Promise<ExitCodeValue> {
  const startedAt = Date.now();
  const deadlineMs =
    options.deadline === undefined ? undefined : parseDuration(options.deadline, '--deadline');
  const maxUnits = parseMaxUnits(options.maxUnits);
  // The retry is committed before the working backend opens: the built-in sandbox keeps its tasks
  // (and the job's upstream task with them) only when it finds unfinished jobs at its start.
  let job: Job;
  const records = await openBackend(ctx, options, 'records');
  try {
    const existing = await records.deps.store.get(jobId);
    if (!existing) throw new CliError(`no job ${jobId}`, ExitCode.notFound);
    job = await retryJob(records.deps, jobId, { fromStart: options.fromStart, deadlineMs, maxUnits });
    const run = (job.runs?.length ?? 0) + 1;
    if (!options.json && !options.quiet) {
      ctx.io.stderr.write(
        `retrying ${job.id}${job.label ? ` (${job.label})` : ''} from ${
          options.fromStart ? 'the start' : `step "${stepTitle(job, records.deps.workflows)}"`
        }: run ${run} of this job\n`,
      );
    }
    if (!options.wait) {
      return await reportOutcome(
        ctx,
        records,
        { jobs: [job], interrupted: false },
        { ...options, startedAt },
      );
    }
  } finally {
    await records.close();
  }
  const backend = await openBackend(ctx, options, 'work');
  try {
    const outcome = await driveJobs(ctx, backend, [job], options);
    return await reportOutcome(ctx, backend, outcome, { ...options, startedAt });
  } finally {
    await backend.close();
  }
}
