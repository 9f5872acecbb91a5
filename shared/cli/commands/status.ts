/**
 * `opflow status <jobId>`: everything about one job (its step, usage, error, pending selection, who
 * answered its selection points and the reviewers' rounds).
 */

import { shownCallbackUrl } from '../../engine/callback-record';
import { isTerminal } from '../../engine/job-record';
import { selectionRoundsView } from '../../engine/review-record';
import { describeSkewStall, skewStalls } from '../../runtime/clock-skew-notes';
import { describeCallback } from '../callback-format';
import { type CliContext, type GlobalOptions, openBackend, writeJson } from '../context';
import { reportLocationOf } from '../drive-jobs';
import { CliError, ExitCode, type ExitCodeValue } from '../exit-codes';
import { describeJob } from '../format';
import { describeReview, describeRounds } from '../review-format';

export async function statusCommand(
  ctx: CliContext,
  jobId: string,
  options: GlobalOptions,
): Promise<ExitCodeValue> {
  const backend = await openBackend(ctx, options, 'records');
  try {
    const job = await backend.deps.store.get(jobId);
    if (!job) throw new CliError(`no job ${jobId}`, ExitCode.notFound);
    const report = await reportLocationOf(backend, job);
    const rounds = selectionRoundsView(job);
    if (options.json)
      writeJson(ctx.io, {
        ...job,
        callbackUrl: job.callbackUrl === undefined ? undefined : shownCallbackUrl(job.callbackUrl),
        report,
        // Each selection point's approval rounds, as the job API shows them (times in ISO 8601).
        ...(rounds.length > 0 ? { selectionRounds: rounds } : {}),
      });
    else {
      const stalls = skewStalls(backend, isTerminal(job.status) ? [] : [job], backend.deps.clock.now());
      ctx.io.stdout.write(
        `${[
          describeJob(job, backend.deps.workflows, report),
          ...describeCallback(job),
          ...describeReview(job),
          ...describeRounds(job),
          ...stalls.map((stall) => `stalled   ${describeSkewStall(stall, 'opflow resume')}`),
        ].join('\n')}\n`,
      );
    }
    return ExitCode.ok;
  } finally {
    await backend.close();
  }
}
