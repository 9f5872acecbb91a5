/**
 * Seeing a set of jobs through, for `opflow run` and `opflow resume`: start the workers (local),
 * show progress until every job is settled or the user presses Ctrl-C, stop gracefully, and print
 * what happened with the exit code that says it.
 */
import { isTerminal, type Job } from '../engine/job-record';
import { reportKeys } from '../engine/report';
import type { Backend } from '../runtime/backend';
import { listUnfinished } from '../runtime/job-queries';
import { watchJobs } from '../runtime/watch-jobs';
import { type CliContext, type GlobalOptions, writeJson } from './context';
import { ExitCode, type ExitCodeValue } from './exit-codes';
import { countOf, formatDuration, jobLine, jobSummary, selectionHelp } from './format';
import type { InputProblem } from './inputs';
import { createProgressDisplay } from './progress';

export interface DriveOutcome {
  jobs: Job[];
  interrupted: boolean;
  /** This command hosted the built-in sandbox: unfinished jobs lose their upstream tasks with it. */
  hostedSandbox?: boolean | undefined;
}

/** Where a finished job's readable report is (the HTML one), when it has one. */
export async function reportLocationOf(backend: Backend, job: Job): Promise<string | undefined> {
  const key = reportKeys(job.id).html;
  return job.outputs.includes(key) ? backend.deps.reports.link(key) : undefined;
}

/** Runs until every job in `jobs` is settled, or until interrupted. */
export async function driveJobs(
  ctx: CliContext,
  backend: Backend,
  jobs: Job[],
  options: GlobalOptions & {
    /**
     * End at a selection even with the built-in sandbox, when its tasks are kept in its state file
     * (a file database): `opflow resume` without an id, which continues jobs nobody is watching.
     */
    stopAtSelection?: boolean | undefined;
    /** Plain progress lines even on a terminal (an answer streams to the same terminal). */
    plainProgress?: boolean | undefined;
  },
): Promise<DriveOutcome> {
  const { io } = ctx;
  const interactive = Boolean(io.stderr.isTTY) && !options.json && !options.plainProgress;
  const display = createProgressDisplay({
    stream: io.stderr,
    interactive,
    workflows: backend.deps.workflows,
    jobs,
    quiet: options.quiet,
  });
  // The jobs run in this process (local) or elsewhere (aws, where this command only watches).
  const here = backend.work.where === 'here' ? backend.work : undefined;
  // Jobs parked for a selection can go on only while this process keeps its built-in sandbox.
  const hostsSandbox = here?.sandbox !== undefined;
  // With a file database the built-in sandbox keeps its tasks in a state file: stopping loses nothing.
  const sandboxStateFile = here?.sandbox?.server.state?.file;
  // Waiting for a person keeps the built-in sandbox unless stopping loses nothing and it was asked.
  const keepForSelection = hostsSandbox && !(options.stopAtSelection && sandboxStateFile !== undefined);
  const abort = new AbortController();
  let interrupts = 0;
  const stopListening = io.onInterrupt(() => {
    interrupts += 1;
    if (interrupts === 1) {
      display.note(interruptNote(hostsSandbox, sandboxStateFile));
      abort.abort(new Error('interrupted'));
    } else {
      // Even now nothing is lost: the next run takes the leases back and continues.
      process.exit(ExitCode.interrupted);
    }
  });
  const announced = new Set<string>();
  const announceSelection = (job: Job) => {
    if (!keepForSelection || job.status !== 'AWAITING_INPUT' || announced.has(`${job.id}:${job.version}`))
      return;
    announced.add(`${job.id}:${job.version}`);
    display.note(
      `${selectionHelp(job)}\n  (run that in another terminal: this command keeps the built-in sandbox, which holds the job's tasks, until the job finishes)`,
    );
  };
  const watchdogStop = new AbortController();
  const watchSignal = AbortSignal.any([abort.signal, watchdogStop.signal]);
  let lastChangeAt = Date.now();
  const watchdog = here
    ? undefined
    : await stepWorkerWatchdog(ctx, backend, jobs, () => lastChangeAt, watchSignal);
  try {
    here?.start();
    const watch = (ids: string[], mine = true) =>
      watchJobs(backend.deps.store, ids, {
        subscribe: (listener) => backend.onJobChange(listener),
        onUpdate: (job) => {
          lastChangeAt = Date.now();
          display.update(job);
          announceSelection(job);
        },
        signal: watchSignal,
        pollMs: here ? 500 : remotePollMs(ids.length),
        // Own jobs waiting for a person keep the sandbox; other commands' jobs do not.
        isDone: keepForSelection && mine ? (job) => isTerminal(job.status) : undefined,
      });
    const watched = watch(jobs.map((job) => job.id));
    const settled = watchdog
      ? await Promise.race([watched, watchdog.stuck.then(() => watched)])
      : await watched;
    // A job of a settled batch that ended here again (a retry): the batch's outputs follow it.
    if (here) await refreshBatchOutputs(ctx, backend, settled);
    if (!hostsSandbox) return { jobs: settled, interrupted: false, hostedSandbox: false };
    await keepSandboxForOthers(backend, jobs, display, (ids) => watch(ids, false));
    return { jobs: settled, interrupted: false, hostedSandbox: hostsSandbox };
  } catch (error) {
    if (!abort.signal.aborted) throw error;
    await here?.stop();
    const latest = await Promise.all(jobs.map(async (job) => (await backend.deps.store.get(job.id)) ?? job));
    return { jobs: latest, interrupted: true, hostedSandbox: hostsSandbox };
  } finally {
    watchdogStop.abort();
    stopListening();
    display.stop();
  }
}

/**
 * The batches of jobs that ended here, when settled (finished, stopped): counted and their outputs
 * (summary.csv, index.html, ...) rewritten from their jobs (ingest/settled-batch.ts). Locally nobody
 * else may be running: this command is where the job's end is seen. A failure is said, not fatal:
 * the job's own outcome stands, and `opflow serve` or the next command that sees it rewrites them.
 */
export async function refreshBatchOutputs(
  ctx: CliContext,
  backend: Backend,
  jobs: readonly Job[],
): Promise<void> {
  if (!jobs.some((job) => job.batchId !== undefined && isTerminal(job.status))) return;
  try {
    const { refreshBatchesOf } = await import('../ingest/settled-batch');
    await refreshBatchesOf({ engine: backend.deps, batches: await backend.batches() }, jobs);
  } catch (error) {
    ctx.io.stderr.write(
      `opflow: the batch outputs of these jobs were not rewritten: ${error instanceof Error ? error.message : String(error)}\n`,
    );
  }
}

/**
 * Other opflow commands may have joined this process's built-in sandbox meanwhile: their jobs' tasks
 * live here, so keep it (and the workers) until those jobs are done too.
 */
async function keepSandboxForOthers(
  backend: Backend,
  jobs: Job[],
  display: { note(text: string): void },
  watch: (ids: string[]) => Promise<unknown>,
): Promise<void> {
  for (
    let others = await joinedJobs(backend, jobs);
    others.length > 0;
    others = await joinedJobs(backend, jobs)
  ) {
    display.note(
      `keeping the built-in sandbox for ${others.length} job${others.length === 1 ? '' : 's'} of other opflow commands`,
    );
    await watch(others.map((job) => job.id));
  }
}

/** What Ctrl-C says: whether stopping now loses the built-in sandbox's tasks. */
function interruptNote(hostsSandbox: boolean, sandboxStateFile: string | undefined): string {
  if (hostsSandbox && sandboxStateFile === undefined)
    return 'stopping after the steps in progress (Ctrl-C again stops at once). The built-in sandbox stops with this command, and the tasks of jobs under way with it: to stop and resume later, run against the platform or against `opflow sandbox` (OPFLOW_BASE_URL)';
  if (hostsSandbox)
    return `stopping after the steps in progress (press Ctrl-C again to stop at once; nothing is lost: the built-in sandbox keeps its tasks in ${sandboxStateFile}, and opflow resume continues them)`;
  return 'stopping after the steps in progress (press Ctrl-C again to stop at once; nothing is lost)';
}

/**
 * Jobs that run elsewhere (aws): a work queue nobody reads is said within seconds, not waited on.
 * The returned promise rejects when no step worker reads the queue; only its rejection matters.
 */
async function stepWorkerWatchdog(
  ctx: CliContext,
  backend: Backend,
  jobs: Job[],
  lastChangeAt: () => number,
  signal: AbortSignal,
): Promise<{ stuck: Promise<void> } | undefined> {
  const reachability = await import('./aws-reachability');
  const probe = reachability.workQueueProbe(backend);
  if (!probe) return undefined;
  const watchdog = reachability.watchForStepWorker(probe, jobs, lastChangeAt, signal, ctx.io.env);
  watchdog.catch(() => undefined);
  // Wrapped: an async function's result promise would adopt the watchdog's own.
  return { stuck: watchdog };
}

/**
 * How often a command reads jobs that run elsewhere (aws: in Lambda, one GetItem per unfinished job
 * a read): a few jobs every half second, so a job is seen done within half a second of finishing
 * (every 2 seconds, a one-call job waited for the command longer than it ran); more jobs less often,
 * about four item reads a second, and never rarer than every 2 seconds.
 */
export function remotePollMs(jobs: number): number {
  return Math.min(2_000, Math.max(500, jobs * 250));
}

/** Unfinished jobs that are not among `mine` and that nobody needs to answer. */
async function joinedJobs(backend: Backend, mine: readonly Job[]): Promise<Job[]> {
  const ids = new Set(mine.map((job) => job.id));
  return (await listUnfinished(backend.deps.store)).filter(
    (job) => !ids.has(job.id) && job.status !== 'AWAITING_INPUT',
  );
}

/**
 * The calls of a run, telling this run's from those of jobs it reused (inputs already done, not
 * run again): `0 calls; 3 jobs reused, 98 calls made by them earlier`, never the reused jobs'
 * calls as if this run had made them.
 */
export function describeRunCalls(jobs: readonly Job[], reused: readonly { jobId: string }[]): string {
  const reusedIds = new Set(reused.map((entry) => entry.jobId));
  let mine = 0;
  let earlier = 0;
  let reusedJobs = 0;
  for (const job of jobs) {
    if (reusedIds.has(job.id)) {
      reusedJobs += 1;
      earlier += job.usage.calls;
    } else mine += job.usage.calls;
  }
  const made = countOf(mine, 'call');
  if (reusedJobs === 0) return made;
  return `${made}; ${countOf(reusedJobs, 'job')} reused, ${countOf(earlier, 'call')} made by ${reusedJobs === 1 ? 'it' : 'them'} earlier`;
}

/** Prints the outcome of a run (text or JSON) and returns the exit code. */
export async function reportOutcome(
  ctx: CliContext,
  backend: Backend,
  outcome: DriveOutcome,
  options: GlobalOptions & {
    refused?: InputProblem[];
    /** Inputs not run again: a succeeded job of the same input exists. */
    skipped?: { source: string; jobId: string }[];
    startedAt: number;
  },
): Promise<ExitCodeValue> {
  const { io } = ctx;
  const refused = options.refused ?? [];
  const locations = new Map<string, string | undefined>();
  for (const job of outcome.jobs) locations.set(job.id, await reportLocationOf(backend, job));

  const failed = outcome.jobs.filter((job) => job.status === 'FAILED' || job.status === 'CANCELLED');
  const awaiting = outcome.jobs.filter((job) => job.status === 'AWAITING_INPUT');
  const unfinished = outcome.jobs.filter((job) => !isTerminal(job.status) && job.status !== 'AWAITING_INPUT');
  const exitCode: ExitCodeValue = outcome.interrupted
    ? ExitCode.interrupted
    : failed.length > 0 || refused.length > 0
      ? ExitCode.jobFailed
      : awaiting.length > 0
        ? ExitCode.awaitingInput
        : ExitCode.ok;

  if (options.json) {
    writeJson(io, {
      jobs: outcome.jobs.map((job) => jobSummary(job, locations.get(job.id))),
      refused,
      skipped: options.skipped ?? [],
      interrupted: outcome.interrupted,
      exitCode,
    });
    return exitCode;
  }

  const succeeded = outcome.jobs.filter((job) => job.status === 'SUCCEEDED');
  const counts = [
    `${succeeded.length} succeeded`,
    ...(failed.length > 0 ? [`${failed.length} failed or cancelled`] : []),
    ...(awaiting.length > 0 ? [`${awaiting.length} waiting for a selection`] : []),
    ...(unfinished.length > 0 ? [`${unfinished.length} unfinished`] : []),
  ];
  const lines = [
    `${countOf(outcome.jobs.length, 'job')}: ${counts.join(', ')} (${formatDuration(
      Date.now() - options.startedAt,
    )}, ${describeRunCalls(outcome.jobs, options.skipped ?? [])})`,
  ];
  for (const job of outcome.jobs) {
    const location = locations.get(job.id);
    if (job.status === 'SUCCEEDED') lines.push(`  ✔ ${job.label ?? job.id}  ${location ?? '(no report)'}`);
    else if (job.status === 'AWAITING_INPUT')
      lines.push(`  ? ${selectionHelp(job).replace(/\n/g, '\n    ')}`);
    else if (isTerminal(job.status))
      lines.push(`  ✖ ${jobLine(job, backend.deps.workflows)}  (opflow status ${job.id})`);
    else lines.push(`  … ${jobLine(job, backend.deps.workflows)}`);
  }
  for (const problem of refused) lines.push(`  ✖ ${problem.source}: not run: ${problem.reason}`);
  if (outcome.interrupted)
    lines.push('interrupted: nothing is lost; `opflow resume` continues every unfinished job');
  io.stdout.write(`${lines.join('\n')}\n`);
  return exitCode;
}
