/**
 * Throughput benchmark (admission and learned poll timing): does a batch under a key's rate limit finish near the time the
 * limit allows, with few wasted calls, whatever the declared poll schedules say; and does one job
 * on an idle key finish near the upstream's own task time?
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
  silentLogger,
  submitJob,
  type Workflow,
  type WorkflowRegistry,
} from '../shared/engine';
import { createLocalPipeline } from '../shared/runtime/local/pipeline';
import { ManualClock, skippingTime } from '../shared/runtime/time';
import { type LedgerEntry, PlatformCode, SANDBOX_API_KEY } from '../shared/sandbox';
import { noveltyCheck, workflows } from '../shared/workflows';

const optionsSchema = z.object({
  jobs: z.coerce.number().int().min(1).max(10_000),
  /** Jobs measured one after another in each idle-key case. */
  idleJobs: z.coerce.number().int().min(1).max(1_000),
  /** The sandbox's seed in the idle-key cases (default: a random one, printed). */
  seed: z.coerce.number().int().min(0).optional(),
  limit: z.coerce.number().positive().max(1_000),
  only: z.enum(['batch', 'idle', 'all']),
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
      'idle-jobs': { type: 'string', default: '15' },
      seed: { type: 'string' },
      limit: { type: 'string', default: '5' },
      only: { type: 'string', default: 'all' },
      sequential: { type: 'boolean', default: false },
      cases: { type: 'string', default: '' },
      trace: { type: 'boolean', default: false },
      detail: { type: 'boolean', default: false },
      clock: { type: 'string', default: 'wall' },
      dir: { type: 'string' },
      'in-process': { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
      'case-spec': { type: 'string' },
      'result-file': { type: 'string' },
    },
  });
  const parsed = optionsSchema.safeParse({
    ...values,
    inProcess: values['in-process'],
    idleJobs: values['idle-jobs'],
    caseSpec: values['case-spec'],
    resultFile: values['result-file'],
  });
  if (!parsed.success) throw new Error(`bad flags: ${z.prettifyError(parsed.error)}\n\n${usage}`);
  return parsed.data;
}

const usage = `Usage: npx tsx bench/throughput.ts [options]   (npm run bench -- [options])

A batch of novelty checks under a key limit, and one job on an idle key, with learned poll timing,
the fixed declared schedules and a naive poll-every-second build side by side (bench/README.md).

Options:
  --jobs=N           novelty checks in the batch (default 30; 300 for the large batch)
  --idle-jobs=N      novelty checks measured one after another in each idle-key case (default 15)
  --seed=N           the sandbox's seed in the idle-key cases (default: random, printed): the same
                     seed draws the same task durations again
  --limit=Q          the key's limit at the sandbox and opflow's --qps, calls/s (default 5)
  --only=WHAT        batch, idle or all (default all)
  --cases=TEXT       only the cases whose label contains TEXT (e.g. "learned right")
  --clock=CLOCK      wall (real time, default) or virtual (a clock that stands still while steps run
                     and jumps to the next due time when every worker is idle: CPU starvation on a
                     shared machine costs no clock time)
  --sequential       cases one after another instead of all at once
  --in-process       all cases in this process (one event loop) instead of a process each
  --dir=FOLDER       where each case keeps its database, reports and sandbox state (default: with
                     --clock=virtual /dev/shm when it exists, a memory file system, as disk writes
                     cost no clock time there; otherwise the system's temporary folder)
  --detail           per case: calls beyond one per step, budget used per 5 s, when the last job
                     made its first call, when jobs finished, the scheduler's rounds
  --trace            every 5 s of real time: the limiter's rate, calls of the last 5 s, the queue
  -h, --help         this text
`;

/** Where cases keep their files: `--dir`, else a memory file system for a virtual clock. */
function workFolder(options: Options): string {
  if (options.dir !== undefined) return options.dir;
  if (options.clock === 'virtual' && existsSync('/dev/shm')) return '/dev/shm';
  return tmpdir();
}

type Engine = 'learned' | 'fixed' | 'naive';
/** How many times faster than declared the tasks run: 10 is about right for 1–3 s tasks. */
const schedules = { right: 10, '10x slow': 1, '10x fast': 100 } as const;
type Schedule = keyof typeof schedules;

/** Task times at the sandbox: 1 to 3 s, most near 1 s. */
const taskDuration = { meanMs: 2_000, spreadMs: 1_000, shape: 'skewed' as const };
/** Calls of one novelty check when every poll finds its task done (the download is not counted). */
const minCallsPerJob = noveltyCheck.steps.filter((step) => step.kind !== 'fetch').length;

const noveltyText = (i: number) =>
  [
    `Electrodynamic dust shield in the anti-reflective coating of solar module ${i + 1}.`,
    'Transparent interdigitated electrodes inside the coating are driven by a three-phase high-voltage signal.',
    'The travelling electric field lifts charged dust particles and moves them to the lower edge of the module.',
    'A soiling sensor under a clear cover starts a thirty-second cleaning cycle when the loss exceeds two percent.',
  ].join(' ');

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
  /** With --detail: where the calls and the time went. */
  detail?: string | undefined;
  /** With `oneAtATime`: each measured job's figures, in order. */
  perJob?: JobFigures[] | undefined;
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
  const clock = virtual ? new ManualClock(Date.now()) : undefined;
  const pipeline = await createLocalPipeline({
    ...(clock ? { time: skippingTime(clock) } : {}),
    config: {
      qps,
      concurrency: 8,
      dbPath: join(dir, 'opflow.db'),
      outDir: join(dir, 'out'),
      sandboxSpeed: schedules[spec.schedule],
    },
    workflows: spec.engine === 'naive' ? pollEverySecond(workflows) : workflows,
    env: {},
    announce: () => undefined,
    log: silentLogger,
    ...(spec.fill === false ? { fill: false } : {}),
    sandbox: {
      keys: [{ key: SANDBOX_API_KEY, ...(spec.qps === undefined ? {} : { qps: spec.qps }) }],
      ...(spec.seed === undefined ? {} : { seed: spec.seed }),
      taskDurations: {},
      defaultTaskDuration: taskDuration,
      streamChunkDelayMs: 0,
    },
  });
  if (spec.engine !== 'learned') {
    // The engine without admission: the declared schedules, and waiting jobs bounce for the next token.
    pipeline.deps.pollStats = undefined;
    pipeline.deps.reserveHorizonMs = 0;
  }
  try {
    const sandbox = pipeline.sandbox;
    if (!sandbox) throw new Error('the benchmark expects the built-in sandbox');
    const submit = async (i: number) =>
      (
        await submitJob(pipeline.deps, {
          workflow: 'novelty-check',
          input: { text: noveltyText(i), title: `Dust shield ${i + 1}` },
        })
      ).job.id;
    pipeline.start();
    for (let i = 0; i < spec.warmup; i++) await pipeline.waitForJobs([await submit(1_000 + i)]);
    const ledger = sandbox.server.ledger;
    const seen = ledger.entries().length;
    const started = performance.now();
    const startedAt = pipeline.deps.clock.now();
    const ids: string[] = [];
    const perJob: JobFigures[] = [];
    if (spec.oneAtATime) {
      for (let i = 0; i < spec.jobs; i++) {
        const before = ledger.entries().length;
        const id = await submit(i);
        ids.push(id);
        const [job] = await pipeline.waitForJobs([id], { signal: AbortSignal.timeout(600_000) });
        if (!job) throw new Error(`job ${id} vanished`);
        perJob.push(jobFigures(job, ledger.entries().slice(before)));
      }
    } else for (let i = 0; i < spec.jobs; i++) ids.push(await submit(i));
    const boundMs = ((spec.jobs * minCallsPerJob) / qps) * 1000;
    const bucket = keyFingerprint(SANDBOX_API_KEY);
    // When the scheduler turned the key's order to longest remaining work first (learned only).
    let endgameAt: number | undefined;
    const unwatch = pipeline.onJobChange(() => {
      if (endgameAt === undefined && pipeline.deps.callOrder?.(bucket) === 'longest-first')
        endgameAt = pipeline.deps.clock.now();
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
    const abort = AbortSignal.timeout(Math.max(300_000, 8 * boundMs));
    let jobs: Job[] = [];
    let timedOut = false;
    try {
      jobs = await pipeline.waitForJobs(ids, { signal: abort });
    } catch (error) {
      if (!abort.aborted) throw error;
      timedOut = true;
      jobs = (await Promise.all(ids.map((id) => pipeline.deps.store.get(id)))).filter(
        (job): job is Job => job !== undefined,
      );
    }
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
    const learnedNow = detailed ? await learnedTimes(pipeline.deps) : '';
    const detail = detailed
      ? `${describe(spec, calls, jobs, startedAt, qps)}\n    learned at the end: ${learnedNow}\n    order longest-first from ${endgameAt === undefined ? '(never)' : `${((endgameAt - startedAt) / 1000).toFixed(1)} s`}; scheduler: ${fills.rounds} rounds, ${(fills.ms / Math.max(1, fills.rounds)).toFixed(2)} ms each (real time), ${(fills.ms / 1000).toFixed(1)} s in all`
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
      detail,
      ...(spec.oneAtATime ? { perJob } : {}),
    };
  } finally {
    await pipeline.close();
    rmSync(dir, { recursive: true, force: true });
  }
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
function jobFigures(job: Job, calls: readonly LedgerEntry[]): JobFigures {
  const operations = calls.filter((entry) => entry.operationId !== 'download');
  return {
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
  const binMs = 5_000;
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
    `    budget used per 5 s (%): ${timeline}`,
    `    throttled at (s, with the admitted calls of the second before, ms): ${throttledAt.join('; ')}`,
    `    last first call at ${(lastAdmitted / 1000).toFixed(1)} s; jobs finished: first ${at(0)} s, median ${at(0.5)} s, 90% ${at(0.9)} s, last ${at(1)} s`,
  ].join('\n');
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
  return [
    r.spec.label,
    `${r.succeeded}/${jobs}${r.timedOut ? ' (timed out)' : ''}`,
    spread(critical.map((ms) => ms / 1000)),
    spread(perJob.map((job) => job.jobMs / Math.max(1, job.criticalMs))),
    ratio(sum(perJob.map((job) => job.jobMs)), sum(critical)),
    spread(perJob.map((job) => job.calls / minCallsPerJob)),
    ratio(sum(perJob.map((job) => job.calls)), perJob.length * minCallsPerJob),
  ];
}

function table(headers: string[], rows: string[][]): string {
  const widths = headers.map((header, i) =>
    Math.max(header.length, ...rows.map((row) => (row[i] ?? '').length)),
  );
  const line = (cells: string[]) => cells.map((cell, i) => cell.padStart(widths[i] ?? 0)).join('  ');
  return [line(headers), widths.map((width) => '-'.repeat(width)).join('  '), ...rows.map(line)].join('\n');
}

const ratio = (a: number, b: number) => (b === 0 ? '-' : (a / b).toFixed(2));

async function runAll(all: CaseSpec[], options: Options): Promise<CaseResult[]> {
  const filter = options.cases;
  const specs = filter ? all.filter((spec) => spec.label.includes(filter)) : all;
  const run = options.inProcess ? runCase : (spec: CaseSpec) => runCaseInChild(spec, options);
  process.stderr.write(
    `${specs.length} case${specs.length === 1 ? '' : 's'} ${options.sequential ? 'one after another' : 'side by side'}...\n`,
  );
  if (!options.sequential) return Promise.all(specs.map(run));
  const results: CaseResult[] = [];
  for (const spec of specs) results.push(await run(spec));
  return results;
}

const caseResultSchema = z.looseObject({
  wallMs: z.number(),
  calls: z.number(),
  throttled: z.number(),
  succeeded: z.number(),
  medianJobMs: z.number(),
  timedOut: z.boolean(),
  detail: z.string().optional(),
  perJob: z
    .array(
      z.object({
        jobMs: z.number(),
        criticalMs: z.number(),
        calls: z.number(),
        timeline: z.string().optional(),
      }),
    )
    .optional(),
});

/**
 * Runs one case in a process of its own (this script with `--case-spec`, under the same loader), so
 * cases side by side use every core instead of sharing this process's one thread. Its stderr (the
 * trace) comes through; its result comes back in a file.
 */
async function runCaseInChild(spec: CaseSpec, options: Options): Promise<CaseResult> {
  const script = process.argv[1];
  if (script === undefined) throw new Error('cannot tell which script to run for a case');
  const folder = mkdtempSync(join(tmpdir(), 'opflow-bench-case-'));
  const resultFile = join(folder, 'result.json');
  try {
    const args = [
      ...process.execArgv,
      script,
      `--clock=${options.clock}`,
      `--dir=${workFolder(options)}`,
      ...(options.trace ? ['--trace'] : []),
      ...(options.detail ? ['--detail'] : []),
      `--case-spec=${JSON.stringify(spec)}`,
      `--result-file=${resultFile}`,
    ];
    const code = await new Promise<number | null>((resolve, reject) => {
      const child = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'inherit'] });
      child.on('error', reject);
      child.on('exit', (exitCode) => resolve(exitCode));
    });
    if (code !== 0) throw new Error(`case "${spec.label}" ended with exit code ${code}`);
    const parsed = caseResultSchema.safeParse(JSON.parse(readFileSync(resultFile, 'utf8')));
    if (!parsed.success)
      throw new Error(`case "${spec.label}": unreadable result: ${z.prettifyError(parsed.error)}`);
    return { ...parsed.data, spec };
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

const caseSpecSchema = z.object({
  label: z.string(),
  engine: z.enum(['learned', 'fixed', 'naive']),
  schedule: z.enum(Object.keys(schedules) as [Schedule, ...Schedule[]]),
  jobs: z.number().int().min(1),
  warmup: z.number().int().min(0),
  qps: z.number().positive().optional(),
  oneAtATime: z.boolean().optional(),
  fill: z.boolean().optional(),
  seed: z.number().int().optional(),
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
    const spec = caseSpecSchema.parse(JSON.parse(options.caseSpec));
    const result = await runCase({ ...spec, qps: spec.qps });
    writeFileSync(options.resultFile, JSON.stringify(result));
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
  if (options.only !== 'idle') {
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
        results.map((r) => [
          r.spec.label,
          `${r.succeeded}/${r.spec.jobs}${r.timedOut ? ' (timed out)' : ''}`,
          (r.wallMs / 1000).toFixed(1),
          ratio(r.wallMs, boundMs),
          String(r.calls),
          ratio(r.calls, minCalls),
          String(r.throttled),
          `${((100 * r.throttled) / Math.max(1, r.calls)).toFixed(1)}%`,
        ]),
      ),
      ...(options.detail ? results.map((r) => r.detail ?? '') : []),
      '',
    );
    process.stdout.write(`${out.splice(0).join('\n')}\n`);
  }
  if (options.only !== 'batch') {
    // One job at a time on an idle key, each measured against its own tasks' drawn times. Every case
    // runs the same warm-up and the same sandbox seed, so the measured jobs' tasks draw the same
    // durations in every case of the run.
    const seed = options.seed ?? Math.floor(Math.random() * 1_000_000);
    const warmup = 5;
    const specs: CaseSpec[] = [];
    const idle = (label: string, engine: CaseSpec['engine'], schedule: Schedule, fill?: false): CaseSpec => ({
      label,
      engine,
      schedule,
      jobs: options.idleJobs,
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
      `idle key: ${options.idleJobs} novelty checks one after another (each alone, after ${warmup} earlier ones on the same database), ` +
        `no limit, sandbox seed ${seed}; per job: time / its own critical path (the ${noveltyCheck.steps.filter((step) => step.poll).length} task durations the sandbox drew for it, ` +
        `1-3 s each), calls / ${minCallsPerJob}; median [min-max], and all jobs pooled (sum / sum)`,
      table(
        ['case', 'ok', 'critical s', 'job/critical path', 'pooled', 'calls/min', 'pooled'],
        results.map((r) => idleRow(r, options.idleJobs)),
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
    `(real time of the whole run: ${((performance.now() - benchStarted) / 1000).toFixed(0)} s)\n`,
  );
}

await main();
