/**
 * `opflow resume [jobId] [--select ids]`: answer a job's selection, or continue unfinished work.
 * With a job id and `--select`, the answer must be a subset of the options offered; without a job
 * id, every unfinished job (left by a crash, Ctrl-C or kill -9) continues from its last step.
 */

import type { EngineDeps } from '../../engine/deps';
import { answerSelection } from '../../engine/job-commands';
import { isTerminal, type Job } from '../../engine/job-record';
import { retryJob } from '../../engine/retry';
import { choiceText, openConfirmations } from '../../engine/review-record';
import { describeSkewStall, skewStalls } from '../../runtime/clock-skew-notes';
import { listUnfinished } from '../../runtime/job-queries';
import { type CliContext, type GlobalOptions, openBackend, writeJson } from '../context';
import { driveJobs, reportOutcome } from '../drive-jobs';
import { CliError, ExitCode, type ExitCodeValue } from '../exit-codes';
import { jobSummary, selectionHelp } from '../format';

export interface ResumeOptions extends GlobalOptions {
  select?: string | undefined;
  by?: string | undefined;
  /** The same as `by` (`--as`). */
  as?: string | undefined;
  config?: string | undefined;
  wait: boolean;
}

/**
 * Whether a FAILED job failed only for a reason on this machine that costs nothing to try again:
 * its last call could not connect at all (nothing was sent: the built-in sandbox's host died, the
 * network was down), or writing its report hit a disk error (a full or read-only disk, a report
 * folder that was not writable). `opflow resume` continues such jobs like unfinished ones.
 */
export function failedForALocalReason(job: Job): boolean {
  if (job.status !== 'FAILED' || !job.lastError) return false;
  const { kind, message } = job.lastError;
  if (kind === 'network' && /could not connect/.test(message)) return true;
  // A step's answer (or the report) the report folder could not take: kept in the job, stored now.
  if (kind === 'storage' && job.lastError.retryable) return true;
  return (
    kind === 'internal' &&
    /\b(EACCES|EPERM|ENOSPC|EROFS|EIO|EDQUOT|ENOTDIR|EISDIR|EEXIST|EMFILE|ENFILE)\b/.test(message)
  );
}

/** FAILED jobs `failedForALocalReason`, oldest first (at most a few thousand are looked at). */
async function locallyFailedJobs(store: EngineDeps['store']): Promise<Job[]> {
  const found: Job[] = [];
  let cursor: string | undefined;
  for (let pages = 0; pages < 10; pages++) {
    const page = await store.list({ status: 'FAILED', limit: 500, cursor });
    found.push(...page.jobs.filter(failedForALocalReason));
    cursor = page.cursor;
    if (cursor === undefined) break;
  }
  return found.reverse();
}

/** Who answers: `--by` (or `--as`), else the login name of this shell (USER, USERNAME), else unknown. */
export function answererName(
  options: Pick<ResumeOptions, 'by' | 'as'>,
  env: Readonly<Record<string, string | undefined>>,
): string | undefined {
  if (options.by !== undefined && options.as !== undefined && options.by.trim() !== options.as.trim())
    throw new CliError('--by and --as name two people: give one', ExitCode.usage);
  const flag = options.by !== undefined ? '--by' : '--as';
  const by = options.by ?? options.as;
  const name = (by ?? env.USER ?? env.USERNAME)?.trim();
  if (by !== undefined && !name) throw new CliError(`${flag}: give a name or mail address`, ExitCode.usage);
  return name ? name.slice(0, 200) : undefined;
}

/** `f1, f3` → ['f1', 'f3']; refuses an empty list. */
export function parseSelectedIds(value: string): string[] {
  const ids = value
    .split(',')
    .map((id) => id.trim())
    .filter((id) => id !== '');
  if (ids.length === 0)
    throw new CliError('--select needs at least one option id, e.g. --select f1,f2', ExitCode.usage);
  const twice = ids.find((id, index) => ids.indexOf(id) !== index);
  if (twice !== undefined)
    throw new CliError(`--select: "${twice}" is given twice; name each option once`, ExitCode.usage);
  return ids;
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
  if (selected) answererName(options, ctx.io.env); // a wrong --by or --as is said before anything opens
  const backend = await openBackend(ctx, options, 'work');
  try {
    let focus: Job | undefined;
    if (jobId !== undefined) {
      const focused = await focusOn(ctx, backend, jobId, selected, options);
      if ('exitCode' in focused) return focused.exitCode;
      focus = focused.job;
    }
    const tracked = await gatherUnfinished(ctx, backend, focus, options);
    if (tracked.length === 0) return await nothingToResume(ctx, backend, options);
    if (!options.wait) {
      return reportOutcome(ctx, backend, { jobs: tracked, interrupted: false }, { ...options, startedAt });
    }
    // Without an id nobody is there to answer a selection: a job that comes to one ends the command
    // (exit 3, with how to answer) when the built-in sandbox keeps its tasks in its state file.
    const outcome = await driveJobs(ctx, backend, tracked, { ...options, stopAtSelection: !focus });
    return await reportOutcome(ctx, backend, outcome, { ...options, startedAt });
  } finally {
    await backend.close();
  }
}

type ResumeBackend = Awaited<ReturnType<typeof openBackend>>;

/**
 * The job named: its selection answered (`--select`), run again when it failed only for a local
 * reason, or, when there is nothing to resume (it waits for a selection, it ended), the exit code.
 */
async function focusOn(
  ctx: CliContext,
  backend: ResumeBackend,
  jobId: string,
  selected: string[] | undefined,
  options: ResumeOptions,
): Promise<{ job: Job } | { exitCode: ExitCodeValue }> {
  const focus = await backend.deps.store.get(jobId);
  if (!focus) throw new CliError(`no job ${jobId}`, ExitCode.notFound);
  if (selected) {
    const by = answererName(options, ctx.io.env);
    // The reviewers' rules hold here as from a link: a second approver where a rule asks for one.
    const { callSecondApprovers, cliReviewApprovals } = await import('../review-approvals');
    backend.deps.reviewApprovals ??= await cliReviewApprovals(ctx, options.config);
    const answered = await answerSelection(backend.deps, jobId, selected, { via: 'cli', by });
    const kept = openConfirmations(answered).find((answer) => answer.version === answered.version);
    if (kept && !options.quiet)
      ctx.io.stderr.write(
        `opflow: ${kept.by}'s approval of ${choiceText(kept)} is recorded; a second person must confirm it (opflow resume ${jobId} --select ${kept.options.join(',')} --as <name>)\n`,
      );
    // The second approver is called now, as opflow serve does for an approval given through it.
    if (kept) await callSecondApprovers(ctx, backend.deps, options.config, [answered]);
    return { job: (kept && (await backend.deps.store.get(jobId))) || answered };
  }
  if (focus.status === 'AWAITING_INPUT') {
    if (options.json) {
      writeJson(ctx.io, {
        jobs: [jobSummary(focus)],
        awaitingSelection: [focus.id],
        pending: focus.pending,
        exitCode: ExitCode.awaitingInput,
      });
    } else ctx.io.stdout.write(`${selectionHelp(focus)}\n`);
    return { exitCode: ExitCode.awaitingInput };
  }
  if (failedForALocalReason(focus)) {
    ctx.io.stderr.write(
      focus.unsaved
        ? `opflow: job ${jobId} failed only because ${describeLocalReason(focus)}; storing the answer it kept at step ${focus.step} (nothing is called again)\n`
        : `opflow: job ${jobId} failed only because ${describeLocalReason(focus)}; running it again from step ${focus.step}\n`,
    );
    return { job: await retryJob(backend.deps, focus.id) };
  }
  if (!isTerminal(focus.status)) return { job: focus };
  const exitCode = focus.status === 'SUCCEEDED' ? ExitCode.ok : ExitCode.jobFailed;
  const message = `job ${jobId} is already ${focus.status}; nothing to resume`;
  if (options.json) writeJson(ctx.io, { jobs: [jobSummary(focus)], message, exitCode });
  else ctx.io.stdout.write(`${message}\n`);
  return { exitCode };
}

/**
 * The jobs to follow: the one named first, then every unfinished job nobody answers for, and the
 * jobs that failed only for a local reason (run again); what is continued is said on standard error.
 */
async function gatherUnfinished(
  ctx: CliContext,
  backend: ResumeBackend,
  focus: Job | undefined,
  options: ResumeOptions,
): Promise<Job[]> {
  const { store } = backend.deps;
  const unfinished = (await listUnfinished(store)).filter(
    (job) => job.status !== 'AWAITING_INPUT' && job.id !== focus?.id,
  );
  // Jobs failed only by a connection refused or a disk error continue too (nothing was paid for them).
  let again = 0;
  for (const failed of await locallyFailedJobs(store)) {
    if (failed.id === focus?.id) continue;
    try {
      unfinished.push(await retryJob(backend.deps, failed.id));
      again += 1;
    } catch {
      // Changed meanwhile (another process retried it): it is looked after there.
    }
  }
  if (!options.quiet && again > 0) {
    ctx.io.stderr.write(
      `opflow: running again ${again} job${again === 1 ? '' : 's'} that failed only because a connection was refused or a disk could not be written\n`,
    );
  }
  const tracked = focus ? [focus, ...unfinished] : unfinished;
  if (options.quiet || options.json) return tracked;
  // Say what is continued: how many jobs, of which workflows, and the first few labels.
  if (unfinished.length > 0)
    ctx.io.stderr.write(`opflow: ${describeContinued(unfinished, focus !== undefined)}\n`);
  // Jobs held by a process whose clock is ahead: say so, and when this one takes them over.
  for (const stall of skewStalls(backend, tracked, backend.deps.clock.now()))
    ctx.io.stderr.write(`opflow: ${describeSkewStall(stall, 'resume')}\n`);
  return tracked;
}

/** Nothing unfinished: said, with the selections still waiting for an answer (exit 3 when any). */
async function nothingToResume(
  ctx: CliContext,
  backend: ResumeBackend,
  options: ResumeOptions,
): Promise<ExitCodeValue> {
  const waiting = (await listUnfinished(backend.deps.store)).filter((job) => job.status === 'AWAITING_INPUT');
  const exitCode = waiting.length > 0 ? ExitCode.awaitingInput : ExitCode.ok;
  if (options.json) {
    writeJson(ctx.io, { jobs: [], awaitingSelection: waiting.map((job) => job.id), exitCode });
  } else {
    ctx.io.stdout.write('nothing to resume: no unfinished jobs\n');
    for (const job of waiting) ctx.io.stdout.write(`${selectionHelp(job)}\n`);
  }
  return exitCode;
}

function describeLocalReason(job: Job): string {
  return job.lastError?.kind === 'network' ? 'a connection was refused' : 'a disk could not be written';
}

/** `continuing 3 unfinished jobs (2 novelty-check, 1 llm-chat): helmet.md, hinge.md, chat.json` */
export function describeContinued(jobs: readonly Job[], besides: boolean): string {
  const byWorkflow = new Map<string, number>();
  for (const job of jobs) byWorkflow.set(job.workflow, (byWorkflow.get(job.workflow) ?? 0) + 1);
  const workflows = [...byWorkflow].map(([name, count]) => `${count} ${name}`).join(', ');
  const labels = jobs.slice(0, 5).map((job) => job.label ?? job.id);
  const more = jobs.length > labels.length ? `, and ${jobs.length - labels.length} more` : '';
  return `continuing ${besides ? 'also ' : ''}${jobs.length} unfinished job${jobs.length === 1 ? '' : 's'} (${workflows}): ${labels.join(', ')}${more}`;
}
