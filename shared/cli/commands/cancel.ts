/**
 * `opflow cancel <jobId>`: stop a job in any unfinished status. A step already in flight finishes,
 * but its result is not committed: the job stays CANCELLED.
 */
import { cancelJob } from '../../engine/job-commands';
import { type CliContext, type GlobalOptions, openBackend, writeJson } from '../context';
import { refreshBatchOutputs } from '../drive-jobs';
import { CliError, ExitCode, type ExitCodeValue } from '../exit-codes';
import { jobSummary, stepTitle } from '../format';

export async function cancelCommand(
  ctx: CliContext,
  jobId: string,
  options: GlobalOptions,
): Promise<ExitCodeValue> {
  const backend = await openBackend(ctx, options, 'records');
  try {
    const existing = await backend.deps.store.get(jobId);
    if (!existing) throw new CliError(`no job ${jobId}`, ExitCode.notFound);
    const job = await cancelJob(backend.deps, jobId);
    // A job of a finished batch run again and cancelled here: the batch's outputs follow it.
    if (backend.work.where === 'here') await refreshBatchOutputs(ctx, backend, [job]);
    if (options.json) writeJson(ctx.io, jobSummary(job));
    else
      ctx.io.stdout.write(
        `cancelled ${job.id}${job.label ? ` (${job.label})` : ''} ${
          existing.status === 'AWAITING_INPUT' && existing.pending
            ? `while it waited for a selection ("${existing.pending.prompt}")`
            : `at step "${stepTitle(job, backend.deps.workflows)}"`
        }\n`,
      );
    return ExitCode.ok;
  } finally {
    await backend.close();
  }
}
