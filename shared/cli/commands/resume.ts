/**
 * `opflow resume [jobId] [--select ids]`: answer a job's selection, or continue unfinished work.
 * With a job id and `--select`, the answer must be a subset of the options offered; without a job
 * id, every unfinished job (left by a crash, Ctrl-C or kill -9) continues from its last step.
 */
import { isTerminal, type Job } from '../../engine/job';
import { answerSelection } from '../../engine/jobs';
import { listUnfinished } from '../../runtime/job-queries';
import { type CliContext, type GlobalOptions, openPipeline } from '../context';
import { driveJobs, reportOutcome } from '../drive-jobs';
import { CliError, ExitCode, type ExitCodeValue } from '../exit-codes';
import { selectionHelp } from '../format';

export interface ResumeOptions extends GlobalOptions {
  select?: string | undefined;
  wait: boolean;
}

/** `f1, f3` → ['f1', 'f3']; refuses an empty list. */
export function parseSelectedIds(value: string): string[] {
  const ids = value
    .split(',')
    .map((id) => id.trim())
    .filter((id) => id !== '');
  if (ids.length === 0)
    throw new CliError('--select needs at least one option id, e.g. --select f1,f2', ExitCode.usage);
  return [...new Set(ids)];
}

export async function resumeCommand(
  ctx: CliContext,
  jobId: string | undefined,
  options: ResumeOptions,
): Promise<ExitCodeValue> {
  const startedAt = Date.now();
  if (jobId === undefined && options.select !== undefined) {
    throw new CliError('--select answers one job: opflow resume <jobId> --select <ids>', ExitCode.usage);
  }
  const selected = options.select === undefined ? undefined : parseSelectedIds(options.select);
  const pipeline = await openPipeline(ctx, options, 'work');
  try {
    const { store } = pipeline.deps;
    let focus: Job | undefined;
    if (jobId !== undefined) {
      focus = await store.get(jobId);
      if (!focus) throw new CliError(`no job ${jobId}`, ExitCode.notFound);
      if (selected) {
        focus = await answerSelection(pipeline.deps, jobId, selected);
      } else if (focus.status === 'AWAITING_INPUT') {
        ctx.io.stdout.write(`${selectionHelp(focus)}\n`);
        return ExitCode.awaitingInput;
      } else if (isTerminal(focus.status)) {
        ctx.io.stdout.write(`job ${jobId} is already ${focus.status}; nothing to resume\n`);
        return focus.status === 'SUCCEEDED' ? ExitCode.ok : ExitCode.jobFailed;
      }
    }
    const unfinished = (await listUnfinished(store)).filter(
      (job) => job.status !== 'AWAITING_INPUT' && job.id !== focus?.id,
    );
    const tracked = focus ? [focus, ...unfinished] : unfinished;
    if (tracked.length === 0) {
      const waiting = (await listUnfinished(store)).filter((job) => job.status === 'AWAITING_INPUT');
      if (options.json) {
        ctx.io.stdout.write(
          `${JSON.stringify({ jobs: [], awaitingSelection: waiting.map((job) => job.id) })}\n`,
        );
      } else {
        ctx.io.stdout.write('nothing to resume: no unfinished jobs\n');
        for (const job of waiting) ctx.io.stdout.write(`${selectionHelp(job)}\n`);
      }
      return waiting.length > 0 ? ExitCode.awaitingInput : ExitCode.ok;
    }
    if (!options.wait) {
      return reportOutcome(ctx, pipeline, { jobs: tracked, interrupted: false }, { ...options, startedAt });
    }
    const outcome = await driveJobs(ctx, pipeline, tracked, options);
    return await reportOutcome(ctx, pipeline, outcome, { ...options, startedAt });
  } finally {
    await pipeline.close();
  }
}
