/**
 * Throughput benchmark: does a batch under a key's rate limit finish near the time the limit
 * allows, with few wasted calls, whatever the declared poll schedules say and whatever the
 * upstream's task times and limiter (the matrix of worlds in throughput-worlds.ts); and does one job
 * on an idle key finish near its own tasks' time?
 *
 * Everything is real and in one process: the built-in sandbox on 127.0.0.1 (its key limited to Q
 * calls per second; every task takes 1 to 3 s, skewed: most near 1 s), the local runtime as
 * `opflow run` builds it (SQLite file, report folder, HTTP client, limiter, worker pool) and the wall
 * clock. Cases run side by side and everything is printed as ratios; nothing here asserts a time.
 *
 *   npx tsx bench/throughput.ts [--jobs=30] [--limit=5] [--only=batch|idle] [--clock=wall|virtual] ...
 *   npx tsx bench/throughput.ts --help
 *
 * Each case runs in a process of its own (all at once, or one after another with --sequential), so
 * side by side cases share the machine's cores rather than one event loop; the parent prints the
 * table.
 *
 * The idle key runs its jobs one after another, each alone, and divides each job's time by its own
 * critical path: the task durations the sandbox drew for it (its ledger's `startedWork`), and also
 * runs `learned` without the scheduler's rounds (`, no filler`: the runner's own aims, as on aws).
 *
 * Engines compared in each case:
 * - learned: this build (poll timing learned per operation, aimed at quantiles by the budget);
 * - fixed: the engine without admission: learning off (the workflows' declared schedules) and no token
 *   reservations (waiting jobs bounce for the next token, claims paused meanwhile);
 * - naive: the same, with every poll one second after the last (a poll-every-second build).
 * Schedules: `right` (declared delays about the tasks' times), `10x slow`, `10x fast`.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import * as z from 'zod';
import {
  conditionalQuantile,
  type EngineDeps,
  type Job,
  keyFingerprint,
  pollStatsKey,
  type Workflow,
  type WorkflowRegistry,
} from '../shared/engine';
import { type LedgerEntry, PlatformCode, SANDBOX_API_KEY } from '../shared/sandbox';
import { noveltyCheck, workflows } from '../shared/workflows';
import { chainBudgetBoundMs, chainsLeft, tasksByJob } from './throughput-bound';
import { caseCut, watchCut } from './throughput-cut';
import { type JobCall, type JobVersion, lastJobLines } from './throughput-last-job';
import { batchFigures, type Failures, failedText, failuresOf, meetsBatchGoals } from './throughput-report';
import { benchPipeline, submitCheck, table, taskDuration } from './throughput-setup';
import {
  type Family,
  families,
  type Limiter,
  largeCells,
  limiters,
  matrixQps,
  worldKey,
} from './throughput-worlds';

const optionsSchema = z.object({
  jobs: z.coerce.number().int().min(1).max(10_000),
  /** Jobs measured one after another in each idle-key case. */
  idleJobs: z.coerce.number().int().min(1).max(1_000).optional(),
  /** The sandbox's seed in the idle-key cases (default: a random one, printed). */
  seed: z.coerce.number().int().min(0).optional(),
  limit: z.coerce.number().positive().max(1_000),
  only: z.enum(['all', 'matrix', 'lone', 'large', 'batch', 'idle']),
  /** Jobs of the large batch (the named cells). */
  largeJobs: z.coerce.number().int().min(1).max(10_000),
  /** Cases run at once (each lane a process running its cases one after another). */
  parallel: z.coerce.number().int().min(1).max(64),
  sequential: z.boolean(),
  /** Only the cases whose label contains this. */
  cases: z.string(),
  trace: z.boolean(),
  /** Print where each case's calls and time went (calls by operation, calls per 5 s, finishes). */
  detail: z.boolean(),
  /** wall: the real clock; virtual: a clock that jumps to the next due time whenever every worker is idle. */
  clock: z.enum(['wall', 'virtual']),
  /** Where each case keeps its database, reports and sandbox state (default: see `workFolder`). */
  dir: z.string().min(1).optional(),
  /** Run the cases in this process (one event loop) instead of a process each. */
  inProcess: z.boolean(),
  /** The matrix also runs learned and the oracle with the key's order longest-first from the start. */
  orders: z.boolean(),
  help: z.boolean(),
  /** Internal: run the one case described (JSON) and write its result to `resultFile`. */
  caseSpec: z.string().optional(),
  resultFile: z.string().optional(),
});
type Options = z.infer<typeof optionsSchema>;

function readOptions(): Options {
  const { values } = parseArgs({
    options: {
      jobs: { type: 'string', default: '30' },
      'idle-jobs': { type: 'string' },
      seed: { type: 'string' },
      limit: { type: 'string', default: '5' },
      only: { type: 'string', default: 'all' },
      'large-jobs': { type: 'string', default: '300' },
      parallel: { type: 'string', default: '2' },
      sequential: { type: 'boolean', default: false },
      cases: { type: 'string', default: '' },
      trace: { type: 'boolean', default: false },
      detail: { type: 'boolean', default: false },
      clock: { type: 'string', default: 'virtual' },
      dir: { type: 'string' },
      'in-process': { type: 'boolean', default: false },
      orders: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
      'case-spec': { type: 'string' },
      'result-file': { type: 'string' },
    },
  });
  const parsed = optionsSchema.safeParse({
    ...values,
    inProcess: values['in-process'],
    idleJobs: values['idle-jobs'],
    largeJobs: values['large-jobs'],
    caseSpec: values['case-spec'],
    resultFile: values['result-file'],
  });
  if (!parsed.success) throw new Error(`bad flags: ${z.prettifyError(parsed.error)}\n\n${usage}`);
  return parsed.data;
}

const usage = `Usage: npx tsx bench/throughput.ts [options]   (npm run bench -- [options])

Novelty checks under a key limit on a matrix of upstream worlds (bench/throughput.md): task-time families
(uniform, lognormal, bimodal, pareto, drift: slowing under load) x the sandbox key's limiter (sliding
1 s window, token bucket with a burst of 2 s of calls, fixed window aligned to the second) x its QPS
(2, 5, 20), with the learned build beside the fixed-schedule, poll-every-second and oracle (polls at
the tasks' true ends) builds; makespan / bound, calls / minimum, throttled %.

Options:
  --only=WHAT        all (default: matrix, lone and large), or one of
                       matrix  a batch of --jobs on every cell
                       lone    one job at a time on an idle key, every cell
                       large   a batch of --large-jobs on the named cells (throughput-worlds.ts)
                       batch   the earlier batch: 1-3 s skewed tasks, declared schedules right,
                               10x slow and 10x fast (sliding window, --limit)
                       idle    the earlier idle key (no limit, 1-3 s skewed)
  --jobs=N           novelty checks in a batch (default 30)
  --large-jobs=N     novelty checks in the large batch (default 300)
  --idle-jobs=N      jobs measured one after another in each lone/idle case (default 15; lone: 8
                     unless given)
  --seed=N           the base sandbox seed (default: random, printed); each cell's seed is printed,
                     and every build of a cell uses it (the same seed draws the same durations)
  --limit=Q          the earlier batch's key limit and --qps, calls/s (default 5)
  --cases=TEXT       only the cases whose label contains TEXT (e.g. "pareto bucket", "learned"); a
                     comma-separated list: the cases whose label contains any of them
  --parallel=N       cases at once, each lane a process running its cases one after another (default 2)
  --clock=CLOCK      virtual (default: a clock that stands still while steps run and jumps to the
                     next due time when every worker is idle: CPU starvation on a shared machine
                     costs no clock time) or wall (real time). A batch case is cut (its jobs
                     not all ended: not a figure; printed at the end with why) after 20 x its bound
                     of clock time (at least 300 s) on the virtual clock, with 30 min of real time
                     as a last guard; on the wall clock after 8 x its bound (at least 300 s).
                     A job run alone (lone, idle, a warm-up job) is cut the same way, each as a
                     case of one job
  --sequential       one case at a time (--parallel=1)
  --in-process       all cases in this process (one event loop) instead of a process per lane
  --dir=FOLDER       where each case keeps its database, reports and sandbox state (default: with
                     --clock=virtual /dev/shm when it exists, a memory file system, as disk writes
                     cost no clock time there; otherwise the system's temporary folder)
  --orders           the matrix also runs \`learned lf\` and \`oracle lf\`: those builds with the runner's
                     call order longest-first (by steps left) from the start (not from the turn the
                     learned times decide; the oracle never turns, having none)
  --detail           per case: calls beyond one per step, budget used per 1 s (per 5 s past a minute; a
                     short run also by operation), when the last job made its first call, when jobs
                     finished, the scheduler's rounds; for a batch, where the time of the job that
                     ended last went (each task's true end against its polls: aimed late or waiting
                     for a token, the calls between tasks, the budget left idle meanwhile); for a
                     lone job, each task's duration and polls
  --trace            every 5 s of real time: the limiter's rate, calls of the last 5 s, the queue
  -h, --help         this text
`;

/** Where cases keep their files: `--dir`, else a memory file system for a virtual clock. */
function workFolder(options: Options): string {
  if (options.dir !== undefined) return options.dir;
  if (options.clock === 'virtual' && existsSync('/dev/shm')) return '/dev/shm';
  return tmpdir();
}

type Engine = 'learned' | 'fixed' | 'naive' | 'oracle';
/** How many times faster than declared the tasks run: 10 is about right for 1–3 s tasks. */
const schedules = { right: 10, '10x slow': 1, '10x fast': 100 } as const;
type Schedule = keyof typeof schedules;

/** Calls of one novelty check when every poll finds its task done (the download is not counted). */
const minCallsPerJob = noveltyCheck.steps.filter((step) => step.kind !== 'fetch').length;

/** Every poll one second after the last: what a naive build does. */
function pollEverySecond(registry: WorkflowRegistry): WorkflowRegistry {
  const naive = new Map<string, Workflow>();
  for (const [name, workflow] of registry) {
    naive.set(name, {
      ...workflow,
      steps: workflow.steps.map((step) =>
        step.poll
          ? { ...step, poll: { ...step.poll, firstDelayMs: 1_000, factor: 1, maxDelayMs: 1_000 } }
          : step,
      ),
    });
  }
  return naive;
}

interface CaseSpec {
  label: string;
  engine: Engine;
  schedule: Schedule;
  jobs: number;
  /** Jobs run one after another before the measured ones (to learn), on the same database. */
  warmup: number;
  /** Key limit at the sandbox and opflow's --qps; undefined: no limit (an idle key). */
  qps: number | undefined;
  /** Submit each measured job only after the one before finished (each alone on the key). */
  oneAtATime?: boolean | undefined;
  /** The sandbox's seed (ids and task durations); undefined: the sandbox's own. */
  seed?: number | undefined;
  /** False: no scheduler rounds (no re-aims or pulls), polls at the runner's own aims, as on aws. */
  fill?: boolean | undefined;
  /** The matrix's task-time family (throughput-worlds.ts); undefined: 1-3 s skewed. */
  family?: Family | undefined;
  /** The matrix's limiter at the sandbox key; undefined: a sliding one-second window. */
  limiter?: Limiter | undefined;
  /** The key's call order longest remaining work first from the start (`--orders`). */
  longestFirst?: boolean | undefined;
}

/** One measured job: its time, the time of the tasks its calls started, its calls. */
interface JobFigures {
  /** From its creation to its end. */
  jobMs: number;
  /**
   * Its own critical path: the durations the sandbox drew for the work its calls started (the
   * novelty check's tasks run one after another). Calls take no clock time on the virtual clock, so
   * there this is the least time any client could take; on the wall clock the calls' own time is
   * counted against the engine.
   */
  criticalMs: number;
  /** Operation calls the sandbox answered for it (the report download not counted). */
  calls: number;
  /**
   * Its own tasks plus a token interval for each other gap of its chain of calls (throughput-bound.ts):
   * the least time of a client that spaces calls at the key's rate.
   */
  chainMs?: number | undefined;
  /** With --detail: each task's drawn duration and when (from its start) the calls after it came, s. */
  timeline?: string | undefined;
}

interface CaseResult {
  spec: CaseSpec;
  wallMs: number;
  calls: number;
  throttled: number;
  succeeded: number;
  /** Median over the measured jobs of (finish - creation). */
  medianJobMs: number;
  timedOut: boolean;
  /** Why the bench stopped waiting for the case's jobs (throughput-cut.ts), when it did. */
  cut?: string | undefined;
  /** The jobs that did not succeed, by why (throughput-report.ts): such a case is not a figure. */
  failures?: Failures | undefined;
  /** With --detail: where the calls and the time went. */
  detail?: string | undefined;
  /** With `oneAtATime`: each measured job's figures, in order. */
  perJob?: JobFigures[] | undefined;
  /** The longest own tasks' time of a measured job (its tasks one after another), ms. */
  longestCriticalMs?: number | undefined;
  /** The bound with the key's budget and the jobs' chains counted together (throughput-bound.ts), ms. */
  chainBoundMs?: number | undefined;
}

let tracing = false;
let detailed = false;
let virtual = false;
let workDir = tmpdir();

async function runCase(spec: CaseSpec): Promise<CaseResult> {
  const dir = mkdtempSync(join(workDir, 'opflow-bench-throughput-'));
  const qps = spec.qps ?? 1_000;
  // Virtual: the same engine, sandbox and limiter on a clock that stands still while steps run and
  // jumps to the next due time when every worker is idle, so CPU starvation costs no clock time.
  const pipeline = await benchPipeline({
    dir,
    qps,
    virtual,
    sandboxSpeed: schedules[spec.schedule],
    workflows: spec.engine === 'naive' ? pollEverySecond(workflows) : workflows,
    fill: spec.fill,
    key:
      spec.limiter !== undefined && spec.qps !== undefined
        ? worldKey(SANDBOX_API_KEY, spec.limiter, spec.qps)
        : { key: SANDBOX_API_KEY, ...(spec.qps === undefined ? {} : { qps: spec.qps }) },
    seed: spec.seed,
    taskTime: spec.family === undefined ? taskDuration : families[spec.family],
    // With --detail the ledger keeps each call's body, so a call is told to its job (its task_id).
    ledgerBodies: detailed,
  });
  // With --detail: the time each reserved token was asked for (the call's due time before the
  // token pushed it), by the token's time (a key's tokens are an interval apart).
  const requestedAt = new Map<number, number>();
  const limiter = pipeline.deps.rateLimiter;
  const reserve = limiter.reserveAhead?.bind(limiter);
  if (detailed && reserve)
    limiter.reserveAhead = async (bucket, now, ask) => {
      const at = await reserve(bucket, now, ask);
      if (at !== undefined) requestedAt.set(at, ask.at);
      return at;
    };
  if (spec.engine === 'fixed' || spec.engine === 'naive') {
    // The engine without admission: the declared schedules, and waiting jobs bounce for the next token.
    pipeline.deps.pollStats = undefined;
    pipeline.deps.reserveHorizonMs = 0;
  }
  if (spec.longestFirst) pipeline.deps.callOrder = () => 'longest-first';
  if (spec.engine === 'oracle') {
    // Every poll at its task's true end (the sandbox's drawn duration), admission as `learned`.
    pipeline.deps.pollStats = undefined;
    const ledger = pipeline.sandbox?.server.ledger;
    if (!ledger) throw new Error('the oracle reads the built-in sandbox ledger');
    const ends = taskEnds(ledger);
    pipeline.deps.pollTimerOf = () => (_step, timing) => {
      const startedAt = pipeline.deps.clock.now() - timing.elapsedMs;
      const end = ends(startedAt);
      return end === undefined ? timing.declaredDelayMs : Math.max(1, end - pipeline.deps.clock.now());
    };
  }
  try {
    const sandbox = pipeline.sandbox;
    if (!sandbox) throw new Error('the benchmark expects the built-in sandbox');
    const submit = async (i: number) => (await submitCheck(pipeline, i)).job.id;
    pipeline.start();
    // A job run alone (a warm-up one, or each of a lone case) is cut like a case of one job
    // (throughput-cut.ts): by clock time on the virtual clock, so a loaded machine cuts none.
    let aloneCut: string | undefined;
    const waitAlone = async (id: string): Promise<Job | undefined> => {
      const since = { clockMs: pipeline.deps.clock.now(), realMs: performance.now() };
      const alone = watchCut(caseCut(virtual, (minCallsPerJob / qps) * 1000), () => ({
        clockMs: pipeline.deps.clock.now() - since.clockMs,
        realMs: performance.now() - since.realMs,
      }));
      try {
        const [job] = await pipeline.waitForJobs([id], { signal: alone.signal });
        if (!job) throw new Error(`job ${id} vanished`);
        return job;
      } catch (error) {
        if (!alone.signal.aborted) throw error;
        aloneCut = `job ${id} alone: ${alone.reason()}`;
        return undefined;
      } finally {
        alone.stop();
      }
    };
    for (let i = 0; i < spec.warmup && aloneCut === undefined; i++) await waitAlone(await submit(1_000 + i));
    const ledger = sandbox.server.ledger;
    const seen = ledger.entries().length;
    const started = performance.now();
    const startedAt = pipeline.deps.clock.now();
    const ids: string[] = [];
    const perJob: JobFigures[] = [];
    if (spec.oneAtATime) {
      for (let i = 0; i < spec.jobs && aloneCut === undefined; i++) {
        const before = ledger.entries().length;
        const id = await submit(i);
        ids.push(id);
        const job = await waitAlone(id);
        if (job) perJob.push(jobFigures(job, ledger.entries().slice(before), qps));
      }
    } else if (aloneCut === undefined) for (let i = 0; i < spec.jobs; i++) ids.push(await submit(i));
    const boundMs = ((spec.jobs * minCallsPerJob) / qps) * 1000;
    const bucket = keyFingerprint(SANDBOX_API_KEY);
    // When the scheduler turned the key's order to longest remaining work first (learned only).
    let endgameAt: number | undefined;
    // With --detail, each job's versions as committed, with the ledger's length then (lastJobLines).
    const versions = new Map<string, JobVersion[]>();
    const unwatch = pipeline.onJobChange((job) => {
      if (endgameAt === undefined && pipeline.deps.callOrder?.(bucket) === 'longest-first')
        endgameAt = pipeline.deps.clock.now();
      if (detailed) {
        const list = versions.get(job.id) ?? [];
        list.push({
          seen: ledger.entries().length,
          at: job.updatedAt,
          nextRunAt: job.nextRunAt,
          tokenAt: job.tokenAt,
        });
        versions.set(job.id, list);
      }
    });
    const sampler = tracing
      ? setInterval(() => {
          const at = ((performance.now() - started) / 1000).toFixed(0);
          const recent = ledger
            .entries()
            .filter((entry) => entry.time > pipeline.deps.clock.now() - 5_000).length;
          process.stderr.write(
            `  ${spec.label} ${at}s: limiter ${pipeline.local.rateLimiter.currentRate(bucket).toFixed(2)}/s, ` +
              `calls in the last 5 s ${recent}, queue ${pipeline.local.queue.size()}\n`,
          );
        }, 5_000)
      : undefined;
    // On the virtual clock the case is bounded by clock time, real time only as a far guard
    // (throughput-cut.ts): a loaded machine slows a virtual run's real time, not its clock time.
    const watch = watchCut(caseCut(virtual, boundMs), () => ({
      clockMs: pipeline.deps.clock.now() - startedAt,
      realMs: performance.now() - started,
    }));
    let jobs: Job[] = [];
    // A job alone that was cut leaves its case unfinished: no wait for it (what ended is read).
    let timedOut = aloneCut !== undefined;
    try {
      if (!timedOut) jobs = await pipeline.waitForJobs(ids, { signal: watch.signal });
    } catch (error) {
      if (!watch.signal.aborted) throw error;
      timedOut = true;
    } finally {
      watch.stop();
    }
    if (timedOut)
      jobs = (await Promise.all(ids.map((id) => pipeline.deps.store.get(id)))).filter(
        (job): job is Job => job !== undefined,
      );
    const cut = aloneCut ?? watch.reason();
    if (cut !== undefined) process.stderr.write(`  ${spec.label}: ${cut}\n`);
    const wallMs = virtual
      ? Math.max(0, ...jobs.map((job) => job.finishedAt ?? job.updatedAt)) - startedAt
      : performance.now() - started;
    clearInterval(sampler);
    unwatch();
    await pipeline.stop();
    const calls = ledger
      .entries()
      .slice(seen)
      .filter((entry) => entry.operationId !== 'download');
    const fills = pipeline.pool.fillRounds;
    const longestCriticalMs = Math.max(0, ...criticalPaths(calls).values());
    const chainBoundMs = chainBudgetBoundMs(noveltyCheck, tasksByJob(calls), qps);
    const learnedNow = detailed ? await learnedTimes(pipeline.deps) : '';
    const lastJob =
      detailed && !spec.oneAtATime
        ? lastJobDetail(spec, ledger.entries(), seen, jobs, versions, requestedAt, startedAt, qps)
        : [];
    const detail = detailed
      ? `${[describe(spec, calls, jobs, startedAt, qps), ...lastJob].join('\n')}\n    learned at the end: ${learnedNow}\n    order longest-first from ${endgameAt === undefined ? '(never)' : `${((endgameAt - startedAt) / 1000).toFixed(1)} s`}; scheduler: ${fills.rounds} rounds, ${(fills.ms / Math.max(1, fills.rounds)).toFixed(2)} ms each (real time), ${(fills.ms / 1000).toFixed(1)} s in all`
      : undefined;
    const spans = jobs.map((job) => (job.finishedAt ?? job.updatedAt) - job.createdAt).sort((a, b) => a - b);
    return {
      spec,
      wallMs,
      calls: calls.length,
      throttled: calls.filter((entry) => entry.errorCode === PlatformCode.throttled).length,
      succeeded: jobs.filter((job) => job.status === 'SUCCEEDED').length,
      medianJobMs: spans[Math.floor(spans.length / 2)] ?? 0,
      timedOut,
      ...(cut === undefined ? {} : { cut }),
      failures: failuresOf(ids, jobs),
      detail,
      ...(spec.oneAtATime ? { perJob } : {}),
      longestCriticalMs,
      chainBoundMs,
    };
  } finally {
    await pipeline.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * With --detail, where the time of the job that ended last went (throughput-last-job.ts): its calls
 * are the ledger's entries since `seen` that name its upstream task (the submit's created id, the
 * task_id of a later call's body, the salt of the work a call started).
 */
function lastJobDetail(
  spec: CaseSpec,
  entries: readonly LedgerEntry[],
  seen: number,
  jobs: readonly Job[],
  versions: ReadonlyMap<string, JobVersion[]>,
  requestedAt: ReadonlyMap<number, number>,
  startedAt: number,
  qps: number,
): string[] {
  const ended = jobs.filter((job) => job.finishedAt !== undefined);
  const last = ended.reduce<Job | undefined>(
    (latest, job) =>
      latest === undefined || (job.finishedAt ?? 0) > (latest.finishedAt ?? 0) ? job : latest,
    undefined,
  );
  const taskId = last?.context.taskId;
  if (!last || typeof taskId !== 'string') return [`  ${spec.label}: the job that ended last: (not found)`];
  const ofTask = (entry: LedgerEntry) => {
    if (entry.resourceId === taskId) return true;
    const body = entry.body as { task_id?: unknown } | undefined;
    if (body?.task_id === taskId) return true;
    return (entry.startedWork ?? []).some((work) => (work.salt ?? '').split(':')[0] === taskId);
  };
  const calls: JobCall[] = [];
  entries.forEach((entry, index) => {
    if (index < seen || entry.operationId === 'download' || !ofTask(entry)) return;
    calls.push({
      index,
      time: entry.time,
      operationId: entry.operationId,
      errorCode: entry.errorCode,
      startedMs: entry.startedWork?.[0]?.durationMs,
    });
  });
  return lastJobLines({
    label: spec.label,
    startedAt,
    createdAt: last.createdAt,
    finishedAt: last.finishedAt ?? last.updatedAt,
    calls,
    versions: versions.get(last.id) ?? [],
    keyCallTimes: entries
      .slice(seen)
      .filter((entry) => entry.operationId !== 'download')
      .map((entry) => entry.time),
    requestedAt: (at) => requestedAt.get(at),
    pollOperations: new Set(
      noveltyCheck.steps.flatMap((step) =>
        step.poll && step.kind !== 'fetch' && step.operation !== undefined ? [step.operation] : [],
      ),
    ),
    qps,
    throttledCode: PlatformCode.throttled,
  });
}

/**
 * When the task started at `startedAt` ends (by its drawn duration), from the sandbox's ledger: on
 * the virtual clock a call takes no time, and no two calls of a key share a millisecond, so the call
 * that started a task is the one at its start. Undefined when none is found.
 */
function taskEnds(ledger: { entries(): readonly LedgerEntry[] }): (startedAt: number) => number | undefined {
  const byStart = new Map<number, number>();
  let seen = 0;
  return (startedAt) => {
    const entries = ledger.entries();
    for (; seen < entries.length; seen++) {
      const entry = entries[seen];
      const work = entry?.startedWork?.[0];
      if (entry && work) byStart.set(entry.time, entry.time + work.durationMs);
    }
    return byStart.get(startedAt);
  };
}

/**
 * Each job's own critical path (its tasks one after another), by the upstream task its work was
 * drawn for (the salt's task id; an export's salt adds `:` and a count).
 */
function criticalPaths(calls: readonly LedgerEntry[]): Map<string, number> {
  const paths = new Map<string, number>();
  for (const call of calls) {
    for (const work of call.startedWork ?? []) {
      const task = (work.salt ?? '').split(':')[0] ?? '';
      paths.set(task, (paths.get(task) ?? 0) + work.durationMs);
    }
  }
  return paths;
}

/** What the store learned of each polled operation of the novelty check: tasks seen, quantiles (s). */
async function learnedTimes(deps: EngineDeps): Promise<string> {
  if (!deps.pollStats) return '(nothing: learning off)';
  const operations = noveltyCheck.steps.flatMap((step) =>
    step.poll && step.kind !== 'fetch' && step.operation !== undefined ? [step.operation] : [],
  );
  const keys = operations.map((operation) => pollStatsKey(deps.pollStatsScope, operation));
  const sketches = await deps.pollStats.load(keys);
  return operations
    .map((operation, i) => {
      const sketch = sketches.get(keys[i] ?? '');
      const name = operation.split(/(?<=\d)(?=[A-Z])/)[0];
      if (!sketch) return `${name} -`;
      const q = (p: number) => ((conditionalQuantile(sketch, p) ?? 0) / 1000).toFixed(2);
      return `${name} n=${sketch.count} q.1 ${q(0.1)} q.5 ${q(0.5)} q.6 ${q(0.6)} q.9 ${q(0.9)}`;
    })
    .join('; ');
}

/**
 * A job run alone: its time, its own critical path (the durations drawn for the work its calls
 * started, from the sandbox's ledger: every call in `calls` is this job's) and its calls.
 */
function jobFigures(job: Job, calls: readonly LedgerEntry[], qps: number): JobFigures {
  const operations = calls.filter((entry) => entry.operationId !== 'download');
  const tasks = [...tasksByJob(operations).values()];
  return {
    chainMs: tasks.length === 1 ? chainsLeft(noveltyCheck, tasks[0] ?? [], 1000 / qps)[0] : undefined,
    jobMs: (job.finishedAt ?? job.updatedAt) - job.createdAt,
    criticalMs: operations
      .flatMap((entry) => entry.startedWork ?? [])
      .reduce((sum, work) => sum + work.durationMs, 0),
    calls: operations.length,
    ...(detailed ? { timeline: taskTimeline(operations) } : {}),
  };
}

/**
 * Each task of a job alone: `duration: polls` with the times (from the task's start, s) of the calls
 * that followed it until the next task started, the last one found it done, e.g. `1.23: 1.10 1.45`.
 */
function taskTimeline(calls: readonly LedgerEntry[]): string {
  const parts: string[] = [];
  let task: { at: number; durationMs: number; polls: number[] } | undefined;
  const close = () => {
    if (task)
      parts.push(
        `${(task.durationMs / 1000).toFixed(2)}: ${task.polls.map((ms) => (ms / 1000).toFixed(2)).join(' ')}`,
      );
  };
  for (const call of calls) {
    const work = call.startedWork?.[0];
    if (work) {
      close();
      task = { at: call.time, durationMs: work.durationMs, polls: [] };
    } else if (task) task.polls.push(call.time - task.at);
  }
  close();
  return parts.join(' | ');
}

/**
 * Where a case's calls and time went: calls beyond one per step by operation (polls that found the
 * task running, throttled answers), calls per 5 s of the run against what the key allows, when the
 * last job made its first call, and when jobs finished.
 */
function describe(
  spec: CaseSpec,
  calls: readonly { time: number; operationId: string; errorCode: number }[],
  jobs: readonly Job[],
  startedAt: number,
  qps: number,
): string {
  const byOperation = new Map<string, number>();
  for (const call of calls) byOperation.set(call.operationId, (byOperation.get(call.operationId) ?? 0) + 1);
  const extra = [...byOperation]
    .map(([operation, count]) => `${operation.split(/(?<=\d)(?=[A-Z])/)[0]} +${count - spec.jobs}`)
    .join(', ');
  // Per second on a short run (the first and last seconds of a 20/s batch decide it), else per 5 s.
  const spanMs = Math.max(0, ...calls.map((call) => call.time - startedAt));
  const binMs = spanMs <= 60_000 ? 1_000 : 5_000;
  const bins: number[] = [];
  for (const call of calls) {
    const bin = Math.floor((call.time - startedAt) / binMs);
    bins[bin] = (bins[bin] ?? 0) + 1;
  }
  const full = (qps * binMs) / 1000;
  const timeline = Array.from(bins, (count) => `${Math.round((100 * (count ?? 0)) / full)}`).join(' ');
  const firstCalls = calls.filter((call) => /^ai35-1[A-Z]/.test(call.operationId));
  const throttledAt = calls
    .filter((call) => call.errorCode === PlatformCode.throttled)
    .map((call) => {
      const before = calls.filter(
        (other) =>
          other.errorCode !== PlatformCode.throttled &&
          other.time > call.time - 1000 &&
          other.time <= call.time,
      );
      return `${((call.time - startedAt) / 1000).toFixed(2)} [${before.map((other) => other.time - call.time).join(',')}]`;
    });
  const lastAdmitted = Math.max(...firstCalls.map((call) => call.time)) - startedAt;
  const finishes = jobs.map((job) => (job.finishedAt ?? job.updatedAt) - startedAt).sort((a, b) => a - b);
  const at = (q: number) =>
    ((finishes[Math.min(finishes.length - 1, Math.floor(q * finishes.length))] ?? 0) / 1000).toFixed(1);
  return [
    `  ${spec.label}: calls beyond one per step: ${extra}`,
    `    budget used per ${binMs / 1000} s (%): ${timeline}`,
    ...(binMs === 1_000 ? callsPerSecond(calls, startedAt) : []),
    `    throttled at (s, with the admitted calls of the second before, ms): ${throttledAt.join('; ')}`,
    `    last first call at ${(lastAdmitted / 1000).toFixed(1)} s; jobs finished: first ${at(0)} s, median ${at(0.5)} s, 90% ${at(0.9)} s, last ${at(1)} s`,
  ].join('\n');
}

/**
 * With --detail, each lone job of a case: its time over its own tasks' time, its calls, and each
 * task's drawn duration with the times of the polls after it (`taskTimeline`).
 */
function loneDetail(r: CaseResult): string[] {
  const learned = /learned at the end: (.*)/.exec(r.detail ?? '')?.[1];
  return [
    `  ${r.spec.label}:${learned === undefined ? '' : ` learned at the end: ${learned}`}`,
    ...(r.perJob ?? []).map(
      (job) =>
        `    ${(job.jobMs / Math.max(1, job.criticalMs)).toFixed(2)}, ${job.calls} calls; ${job.timeline ?? ''}`,
    ),
  ];
}

/** Calls per second of a short run by operation, one line each (the phases a batch walks through). */
function callsPerSecond(
  calls: readonly { time: number; operationId: string }[],
  startedAt: number,
): string[] {
  const rows = new Map<string, number[]>();
  for (const call of calls) {
    const operation = call.operationId.split(/(?<=\d)(?=[A-Z])/)[0] ?? call.operationId;
    const row = rows.get(operation) ?? [];
    const second = Math.floor((call.time - startedAt) / 1000);
    row[second] = (row[second] ?? 0) + 1;
    rows.set(operation, row);
  }
  const width = Math.max(...[...rows.keys()].map((operation) => operation.length));
  return [...rows].map(
    ([operation, row]) =>
      `    calls per 1 s, ${operation.padEnd(width)}: ${Array.from(row, (count) => String(count ?? 0).padStart(2)).join(' ')}`,
  );
}

/** The idle-key row of a case: medians and ranges over its jobs, and the pooled ratios. */
function idleRow(r: CaseResult, jobs: number): string[] {
  const perJob = r.perJob ?? [];
  const spread = (values: number[]) => {
    const sorted = [...values].sort((a, b) => a - b);
    if (sorted.length === 0) return '-';
    const median = sorted[Math.floor(sorted.length / 2)] ?? 0;
    return `${median.toFixed(2)} [${(sorted[0] ?? 0).toFixed(2)}-${(sorted.at(-1) ?? 0).toFixed(2)}]`;
  };
  const sum = (values: number[]) => values.reduce((total, value) => total + value, 0);
  const critical = perJob.map((job) => job.criticalMs);
  // A case whose jobs did not all succeed: failed, no ratio.
  const failed = failedText(jobs, withSucceeded(r), r.timedOut);
  if (failed !== undefined)
    return [r.spec.label, failed, spread(critical.map((ms) => ms / 1000)), '-', '-', '-', '-'];
  return [
    r.spec.label,
    `${r.succeeded}/${jobs}`,
    spread(critical.map((ms) => ms / 1000)),
    spread(perJob.map((job) => job.jobMs / Math.max(1, job.criticalMs))),
    ratio(sum(perJob.map((job) => job.jobMs)), sum(critical)),
    spread(perJob.map((job) => job.calls / minCallsPerJob)),
    ratio(sum(perJob.map((job) => job.calls)), perJob.length * minCallsPerJob),
  ];
}

const ratio = (a: number, b: number) => (b === 0 ? '-' : (a / b).toFixed(2));

/**
 * A case's failures; a result without them (its jobs short of `succeeded`) counts the missing jobs as
 * `unfinished`, so no case short of its jobs reads as a figure.
 */
function withSucceeded(r: CaseResult): Failures {
  const failures = { ...(r.failures ?? {}) };
  const counted = Object.values(failures).reduce((sum, n) => sum + n, 0);
  const missing = r.spec.jobs - r.succeeded - counted;
  if (missing > 0) failures.unfinished = (failures.unfinished ?? 0) + missing;
  return failures;
}

async function runAll(all: CaseSpec[], options: Options): Promise<CaseResult[]> {
  const filters = options.cases
    .split(',')
    .map((text) => text.trim())
    .filter((text) => text !== '');
  const specs =
    filters.length > 0 ? all.filter((spec) => filters.some((text) => spec.label.includes(text))) : all;
  if (specs.length === 0) return [];
  const lanes = Math.min(specs.length, options.sequential ? 1 : options.parallel);
  process.stderr.write(
    `${specs.length} case${specs.length === 1 ? '' : 's'}, ${lanes} at a time${options.inProcess ? ' in this process' : ''}...\n`,
  );
  // Each lane runs its share of the cases one after another (a process each, unless --in-process):
  // a process's start-up (loading the TypeScript) costs more than a 30-job case on a virtual clock.
  const chunks: CaseSpec[][] = Array.from({ length: lanes }, () => []);
  for (const [i, spec] of specs.entries()) chunks[i % lanes]?.push(spec);
  const runChunk = async (chunk: CaseSpec[]): Promise<CaseResult[]> => {
    if (!options.inProcess) return runCasesInChild(chunk, options);
    const results: CaseResult[] = [];
    for (const spec of chunk) results.push(await runCase(spec));
    return results;
  };
  const byLabel = new Map<CaseSpec, CaseResult>();
  const done = await Promise.all(chunks.map(runChunk));
  chunks.forEach((chunk, lane) => {
    chunk.forEach((spec, i) => {
      const result = done[lane]?.[i];
      if (result) byLabel.set(spec, result);
    });
  });
  const results = specs.flatMap((spec) => byLabel.get(spec) ?? []);
  for (const r of results) if (r.cut !== undefined) cutCases.push(`${r.spec.label}: ${r.cut}`);
  return results;
}

/** The cases the bench stopped waiting for, and why (printed at the end of the run). */
const cutCases: string[] = [];

const caseResultSchema = z.looseObject({
  wallMs: z.number(),
  calls: z.number(),
  throttled: z.number(),
  succeeded: z.number(),
  medianJobMs: z.number(),
  timedOut: z.boolean(),
  cut: z.string().optional(),
  failures: z.record(z.string(), z.number()).optional(),
  detail: z.string().optional(),
  longestCriticalMs: z.number().optional(),
  chainBoundMs: z.number().optional(),
  perJob: z
    .array(
      z.object({
        jobMs: z.number(),
        criticalMs: z.number(),
        calls: z.number(),
        chainMs: z.number().optional(),
        timeline: z.string().optional(),
      }),
    )
    .optional(),
});

/**
 * Runs cases one after another in a process of their own (this script with `--case-spec`, under
 * the same loader), so lanes side by side use every core instead of sharing this process's one
 * thread. Its stderr (the trace) comes through; its results come back in a file.
 */
async function runCasesInChild(specs: CaseSpec[], options: Options): Promise<CaseResult[]> {
  const script = process.argv[1];
  if (script === undefined) throw new Error('cannot tell which script to run for a case');
  const folder = mkdtempSync(join(tmpdir(), 'opflow-bench-case-'));
  const resultFile = join(folder, 'result.json');
  const labels = specs.map((spec) => spec.label).join(', ');
  try {
    const args = [
      ...process.execArgv,
      script,
      `--clock=${options.clock}`,
      `--dir=${workFolder(options)}`,
      ...(options.trace ? ['--trace'] : []),
      ...(options.detail ? ['--detail'] : []),
      `--case-spec=${JSON.stringify(specs)}`,
      `--result-file=${resultFile}`,
    ];
    const code = await new Promise<number | null>((resolve, reject) => {
      const child = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'inherit'] });
      child.on('error', reject);
      child.on('exit', (exitCode) => resolve(exitCode));
    });
    if (code !== 0) throw new Error(`cases "${labels}" ended with exit code ${code}`);
    const parsed = z.array(caseResultSchema).safeParse(JSON.parse(readFileSync(resultFile, 'utf8')));
    if (!parsed.success)
      throw new Error(`cases "${labels}": unreadable results: ${z.prettifyError(parsed.error)}`);
    return parsed.data.map((result, i) => ({ ...result, spec: specs[i] as CaseSpec }));
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

const caseSpecSchema = z.object({
  label: z.string(),
  engine: z.enum(['learned', 'fixed', 'naive', 'oracle']),
  family: z.enum(Object.keys(families) as [Family, ...Family[]]).optional(),
  limiter: z.enum(Object.keys(limiters) as [Limiter, ...Limiter[]]).optional(),
  schedule: z.enum(Object.keys(schedules) as [Schedule, ...Schedule[]]),
  jobs: z.number().int().min(1),
  warmup: z.number().int().min(0),
  qps: z.number().positive().optional(),
  oneAtATime: z.boolean().optional(),
  fill: z.boolean().optional(),
  seed: z.number().int().optional(),
  longestFirst: z.boolean().optional(),
});

async function main(): Promise<void> {
  const options = readOptions();
  if (options.help) {
    process.stdout.write(usage);
    return;
  }
  tracing = options.trace;
  detailed = options.detail;
  virtual = options.clock === 'virtual';
  workDir = workFolder(options);
  if (options.caseSpec !== undefined) {
    // A case's own process (see runCaseInChild).
    if (options.resultFile === undefined) throw new Error('--case-spec needs --result-file');
    const specs = z.array(caseSpecSchema).parse(JSON.parse(options.caseSpec));
    const results: CaseResult[] = [];
    for (const spec of specs) results.push(await runCase({ ...spec, qps: spec.qps }));
    writeFileSync(options.resultFile, JSON.stringify(results));
    return;
  }
  process.stdout.write(
    virtual
      ? 'clock: VIRTUAL (the engine, sandbox and limiter on a clock that stands still while steps run and jumps when every worker is idle; times are clock times)\n'
      : 'clock: WALL (real time; CPU starvation on a shared machine inflates the times)\n',
  );
  process.stdout.write(
    `cases: ${options.inProcess ? 'in this process' : 'a process each'}, ${options.sequential ? 'one after another' : 'all at once'}; files in ${workDir}\n`,
  );
  const benchStarted = performance.now();
  const out: string[] = [];
  const baseSeed = options.seed ?? Math.floor(Math.random() * 1_000_000);
  if (options.only === 'all' || options.only === 'matrix') {
    out.push(...(await matrixSection(options, baseSeed, options.jobs, cells())), '');
    process.stdout.write(`${out.splice(0).join('\n')}\n`);
  }
  if (options.only === 'all' || options.only === 'lone') {
    out.push(...(await loneSection(options, baseSeed)), '');
    process.stdout.write(`${out.splice(0).join('\n')}\n`);
  }
  if (options.only === 'all' || options.only === 'large') {
    out.push(...(await matrixSection(options, baseSeed + 1_000, options.largeJobs, largeCells)), '');
    process.stdout.write(`${out.splice(0).join('\n')}\n`);
  }
  if (options.only === 'batch') {
    const specs: CaseSpec[] = [];
    for (const schedule of Object.keys(schedules) as Schedule[]) {
      for (const engine of ['learned', 'fixed'] as const) {
        specs.push({
          label: `${engine} ${schedule}`,
          engine,
          schedule,
          jobs: options.jobs,
          warmup: 0,
          qps: options.limit,
        });
      }
    }
    specs.push({
      label: 'naive every 1 s',
      engine: 'naive',
      schedule: 'right',
      jobs: options.jobs,
      warmup: 0,
      qps: options.limit,
    });
    const results = await runAll(specs, options);
    const minCalls = options.jobs * minCallsPerJob;
    const boundMs = (minCalls / options.limit) * 1000;
    out.push(
      `batch: ${options.jobs} novelty checks (${minCallsPerJob} calls each at least), key limited to ${options.limit}/s, ` +
        `tasks 1-3 s skewed; bound = ${minCalls} calls / ${options.limit}/s = ${(boundMs / 1000).toFixed(0)} s`,
      table(
        ['case', 'ok', 'wall s', 'makespan/bound', 'calls', 'calls/min', 'throttled', 'thr %'],
        results.map((r) => {
          // A case whose jobs did not all succeed: failed, no ratio.
          const failed = failedText(r.spec.jobs, withSucceeded(r), r.timedOut);
          return [
            r.spec.label,
            failed ?? `${r.succeeded}/${r.spec.jobs}`,
            (r.wallMs / 1000).toFixed(1),
            failed ? '-' : ratio(r.wallMs, boundMs),
            String(r.calls),
            failed ? '-' : ratio(r.calls, minCalls),
            String(r.throttled),
            failed ? '-' : `${((100 * r.throttled) / Math.max(1, r.calls)).toFixed(1)}%`,
          ];
        }),
      ),
      ...(options.detail ? results.map((r) => r.detail ?? '') : []),
      '',
    );
    process.stdout.write(`${out.splice(0).join('\n')}\n`);
  }
  if (options.only === 'idle') {
    // One job at a time on an idle key, each measured against its own tasks' drawn times. Every case
    // runs the same warm-up and the same sandbox seed, so the measured jobs' tasks draw the same
    // durations in every case of the run.
    const seed = baseSeed;
    const warmup = 5;
    const specs: CaseSpec[] = [];
    const idle = (label: string, engine: CaseSpec['engine'], schedule: Schedule, fill?: false): CaseSpec => ({
      label,
      engine,
      schedule,
      jobs: options.idleJobs ?? 15,
      warmup,
      qps: undefined,
      oneAtATime: true,
      seed,
      ...(fill === false ? { fill } : {}),
    });
    for (const engine of ['learned', 'fixed'] as const)
      for (const schedule of ['right', '10x slow'] as const)
        specs.push(idle(`${engine} ${schedule}`, engine, schedule));
    // The runner's own aims alone (no scheduler rounds), as on aws: does a wrong prior stop mattering
    // without the filler's re-aims?
    for (const schedule of ['right', '10x slow'] as const)
      specs.push(idle(`learned ${schedule}, no filler`, 'learned', schedule, false));
    const results = await runAll(specs, options);
    out.push(
      `idle key: ${options.idleJobs ?? 15} novelty checks one after another (each alone, after ${warmup} earlier ones on the same database), ` +
        `no limit, sandbox seed ${seed}; per job: time / its own critical path (the ${noveltyCheck.steps.filter((step) => step.poll).length} task durations the sandbox drew for it, ` +
        `1-3 s each), calls / ${minCallsPerJob}; median [min-max], and all jobs pooled (sum / sum)`,
      table(
        ['case', 'ok', 'critical s', 'job/critical path', 'pooled', 'calls/min', 'pooled'],
        results.map((r) => idleRow(r, options.idleJobs ?? 15)),
      ),
      ...(options.detail
        ? results.flatMap((r) => [
            r.detail ?? '',
            `  ${r.spec.label}, per job (time/critical, calls; each task's drawn duration: when calls came after it, s from its start):`,
            ...(r.perJob ?? []).map(
              (job) =>
                `    ${(job.jobMs / Math.max(1, job.criticalMs)).toFixed(2)}, ${job.calls}; ${job.timeline ?? ''}`,
            ),
          ])
        : []),
      '',
    );
  }
  process.stdout.write(`${out.join('\n')}\n`);
  process.stdout.write(
    cutCases.length === 0
      ? 'cases cut: none\n'
      : `cases cut (their jobs not all ended; not figures): ${cutCases.length}\n${cutCases.map((line) => `  ${line}\n`).join('')}`,
  );
  process.stdout.write(
    `(real time of the whole run: ${((performance.now() - benchStarted) / 1000).toFixed(0)} s)\n`,
  );
}

/** A cell of the matrix: a task-time family, the key's limiter and its QPS. */
interface Cell {
  family: Family;
  limiter: Limiter;
  qps: number;
}

/** Every cell: family x limiter x QPS. */
function cells(): Cell[] {
  return (Object.keys(families) as Family[]).flatMap((family) =>
    (Object.keys(limiters) as Limiter[]).flatMap((limiter) =>
      matrixQps.map((qps) => ({ family, limiter, qps })),
    ),
  );
}

const cellName = (cell: Cell) => `${cell.family} ${cell.limiter} ${cell.qps}/s`;
const matrixEngines = ['learned', 'fixed', 'naive', 'oracle'] as const;
/** With `--orders`: learned and the oracle with the key's order longest-first from the start. */
const orderEngines = ['learned lf', 'oracle lf'] as const;
/** The lone job compares the learned build with the oracle (the earlier `--only=idle` has fixed). */
const loneEngines = ['learned', 'oracle'] as const;

/**
 * A batch of `jobs` on every cell, each build side by side on the cell's seed: makespan over the
 * bound (the larger of the minimum calls at the key's QPS and the longest own tasks' time of a job,
 * which no client can beat), calls over the minimum, throttled share; and whether `learned` meets
 * the goals (makespan <= 1.10 of the bound, calls <= 1.05 of the minimum, throttled <= 2 %).
 */
async function matrixSection(
  options: Options,
  baseSeed: number,
  jobs: number,
  list: readonly Cell[],
): Promise<string[]> {
  const specs: CaseSpec[] = [];
  const seedOf = new Map<string, number>();
  const engines = [...matrixEngines, ...(options.orders ? orderEngines : [])];
  list.forEach((cell, i) => {
    const seed = baseSeed + i;
    seedOf.set(cellName(cell), seed);
    for (const engine of engines)
      specs.push({
        label: `${cellName(cell)} ${engine}`,
        engine: engine === 'learned lf' ? 'learned' : engine === 'oracle lf' ? 'oracle' : engine,
        ...(engine.endsWith(' lf') ? { longestFirst: true } : {}),
        schedule: 'right',
        jobs,
        warmup: 0,
        qps: cell.qps,
        seed,
        family: cell.family,
        limiter: cell.limiter,
      });
  });
  const results = await runAll(specs, options);
  const minCalls = jobs * minCallsPerJob;
  const rows: string[][] = [];
  let met = 0;
  let measured = 0;
  for (const cell of list) {
    const of = (engine: string) => results.find((r) => r.spec.label === `${cellName(cell)} ${engine}`);
    if (!engines.some((engine) => of(engine))) continue;
    // A build whose jobs did not all succeed prints as failed, no ratio (throughput-report.ts).
    const figures = (r: CaseResult | undefined) => {
      if (!r) return { text: '-', ok: false, makespan: Number.NaN, calls: Number.NaN, throttled: Number.NaN };
      const boundMs = Math.max((minCalls / cell.qps) * 1000, r.longestCriticalMs ?? 0);
      return batchFigures({ ...r, jobs: r.spec.jobs, failures: withSucceeded(r) }, boundMs, minCalls);
    };
    const learned = figures(of('learned'));
    // The bound's tasks: learned's, else the oracle's, else those of whichever build ran (`--cases`).
    const r = of('learned') ?? of('oracle') ?? engines.map(of).find((x) => x !== undefined);
    // Makespan over the chain+budget bound (throughput-bound.ts), of each build's own tasks.
    const overChain = (x: CaseResult | undefined) =>
      x?.chainBoundMs && !failedText(x.spec.jobs, withSucceeded(x), x.timedOut)
        ? (x.wallMs / x.chainBoundMs).toFixed(2)
        : '-';
    const boundS = Math.max(minCalls / cell.qps, (r?.longestCriticalMs ?? 0) / 1000);
    const meets = meetsBatchGoals(learned);
    if (of('learned')) {
      measured++;
      if (meets) met++;
    }
    rows.push([
      cellName(cell),
      String(seedOf.get(cellName(cell))),
      `${boundS.toFixed(0)} (${(minCalls / cell.qps).toFixed(0)}|${((r?.longestCriticalMs ?? 0) / 1000).toFixed(0)})`,
      ...engines.map((engine) => figures(of(engine)).text),
      `${((r?.chainBoundMs ?? 0) / 1000).toFixed(1)}: ${engines
        .filter((engine) => engine === 'learned' || engine.endsWith('oracle') || engine.endsWith(' lf'))
        .map((engine) => overChain(of(engine)))
        .join(' ')}`,
      of('learned') ? (meets ? 'yes' : 'NO') : '-',
    ]);
  }
  return [
    `batch of ${jobs} novelty checks (${minCallsPerJob} calls each at least) per cell; each build: makespan/bound calls/min throttled%; ` +
      `bound s = max(min calls / QPS | the longest own tasks' time of a job); learned goals: <= 1.10, <= 1.05, <= 2%; ` +
      `chain+budget: that bound counting the calls and the chains together (throughput-bound.ts), s: learned's and oracle's makespan over it (with --orders also learned lf's and oracle lf's)`,
    table(['cell', 'seed', 'bound s', ...engines, 'chain+budget', 'learned meets goals'], rows),
    `learned meets the goals on ${met} of ${measured} cells`,
    ...(options.detail ? results.map((r) => r.detail ?? '') : []),
  ];
}

/**
 * One job at a time on an idle key (the key limited by the cell's limiter and QPS, nothing else on
 * it), every cell, every build: pooled time over the jobs' own tasks' time and calls over the
 * minimum; and learned's time over the oracle's. Goals: uniform and lognormal <= 1.4 of the tasks'
 * time with calls <= 1.3 of the minimum; heavy-tailed (pareto) within 1.15 of the oracle's time.
 */
async function loneSection(options: Options, baseSeed: number): Promise<string[]> {
  const jobs = options.idleJobs ?? 6;
  const warmup = 4;
  const list = cells();
  const specs: CaseSpec[] = [];
  list.forEach((cell, i) => {
    for (const engine of loneEngines)
      specs.push({
        label: `lone ${cellName(cell)} ${engine}`,
        engine,
        schedule: 'right',
        jobs,
        warmup,
        qps: cell.qps,
        oneAtATime: true,
        seed: baseSeed + 500 + i,
        family: cell.family,
        limiter: cell.limiter,
      });
  });
  const results = await runAll(specs, options);
  const sum = (values: number[]) => values.reduce((total, value) => total + value, 0);
  const rows: string[][] = [];
  const verdicts: string[] = [];
  list.forEach((cell, i) => {
    const of = (engine: string) => results.find((r) => r.spec.label === `lone ${cellName(cell)} ${engine}`);
    if (!loneEngines.some((engine) => of(engine))) return;
    const pooled = (r: CaseResult | undefined) => {
      const perJob = r?.perJob ?? [];
      if (perJob.length === 0) return { time: Number.NaN, calls: Number.NaN, ms: Number.NaN };
      return {
        time: sum(perJob.map((job) => job.jobMs)) / Math.max(1, sum(perJob.map((job) => job.criticalMs))),
        calls: sum(perJob.map((job) => job.calls)) / (perJob.length * minCallsPerJob),
        ms: sum(perJob.map((job) => job.jobMs)),
      };
    };
    // A build whose jobs did not all succeed prints as failed, no ratio, and misses the goals.
    const failed = (r: CaseResult | undefined) => r && failedText(r.spec.jobs, withSucceeded(r), r.timedOut);
    const learned = pooled(of('learned'));
    const oracle = pooled(of('oracle'));
    // The least time over the tasks' time of a client spacing calls at the rate (the oracle's tasks).
    const floorJobs = of('oracle')?.perJob ?? of('learned')?.perJob ?? [];
    const floor =
      sum(floorJobs.map((job) => job.chainMs ?? Number.NaN)) /
      Math.max(1, sum(floorJobs.map((job) => job.criticalMs)));
    const anyFailed = loneEngines.some((engine) => failed(of(engine)) !== undefined);
    // A build not run (`--cases` left it out) prints '-', as does a ratio or verdict it would decide.
    const vsOracle = learned.ms / oracle.ms;
    let verdict = '-';
    if (cell.family === 'uniform' || cell.family === 'lognormal')
      verdict = !failed(of('learned')) && learned.time <= 1.4 && learned.calls <= 1.3 ? 'yes' : 'NO';
    else if (cell.family === 'pareto' && Number.isFinite(vsOracle))
      verdict = !anyFailed && vsOracle <= 1.15 ? 'yes' : 'NO';
    if (verdict !== '-' && of('learned')) verdicts.push(verdict);
    rows.push([
      cellName(cell),
      String(baseSeed + 500 + i),
      ...loneEngines.map((engine) => {
        if (!of(engine)) return '-';
        const p = pooled(of(engine));
        return failed(of(engine)) ?? `${p.time.toFixed(2)} ${p.calls.toFixed(2)}`;
      }),
      anyFailed || !Number.isFinite(vsOracle) ? '-' : vsOracle.toFixed(2),
      Number.isFinite(floor) ? floor.toFixed(2) : '-',
      verdict,
    ]);
  });
  return [
    `lone job: ${jobs} novelty checks one after another, each alone on the cell's key (after ${warmup} earlier ones on the same database); ` +
      `each build: pooled time / own tasks' time, calls / ${minCallsPerJob}; goals: uniform and lognormal <= 1.4 and <= 1.3, pareto learned/oracle time <= 1.15; ` +
      `floor: the tasks plus a token interval per other gap of the chain, over the tasks (no client spacing calls at the rate does better)`,
    table(['cell', 'seed', ...loneEngines, 'learned/oracle', 'floor', 'learned meets goals'], rows),
    `learned meets the goals on ${verdicts.filter((v) => v === 'yes').length} of ${verdicts.length} cells with a goal`,
    ...(options.detail ? results.flatMap(loneDetail) : []),
  ];
}

await main();
