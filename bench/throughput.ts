/**
 * Throughput benchmark (issue 10): does a batch under a key's rate limit finish near the time the
 * limit allows, with few wasted calls, whatever the declared poll schedules say; and does one job
 * on an idle key finish near the upstream's own task time?
 *
 * Everything is real and in one process: the built-in sandbox on 127.0.0.1 (its key limited to Q
 * calls per second; every task takes 1 to 3 s, skewed: most near 1 s), the local runtime as
 * `opflow run` builds it (SQLite file, report folder, HTTP client, limiter, worker pool) and the wall
 * clock. Cases run side by side and everything is printed as ratios; nothing here asserts a time.
 *
 *   npx tsx bench/throughput.ts [--jobs=30] [--limit=5] [--only=batch|idle] [--sequential]
 *
 * Engines compared in each case:
 * - learned: this build (poll timing learned per operation, aimed at quantiles by the budget);
 * - fixed: as before issue 10: learning off (the workflows' declared schedules) and no token
 *   reservations (waiting jobs bounce for the next token, claims paused meanwhile);
 * - naive: the same, with every poll one second after the last (a poll-every-second build).
 * Schedules: `right` (declared delays about the tasks' times), `10x slow`, `10x fast`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import * as z from 'zod';
import {
  type Job,
  keyFingerprint,
  silentLogger,
  submitJob,
  type Workflow,
  type WorkflowRegistry,
} from '../shared/engine';
import { createLocalPipeline } from '../shared/runtime/local/pipeline';
import { ManualClock, skippingTime } from '../shared/runtime/time';
import { PlatformCode, SANDBOX_API_KEY } from '../shared/sandbox';
import { noveltyCheck, workflows } from '../shared/workflows';

const optionsSchema = z.object({
  jobs: z.coerce.number().int().min(1).max(10_000),
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
});
type Options = z.infer<typeof optionsSchema>;

function readOptions(): Options {
  const { values } = parseArgs({
    options: {
      jobs: { type: 'string', default: '30' },
      limit: { type: 'string', default: '5' },
      only: { type: 'string', default: 'all' },
      sequential: { type: 'boolean', default: false },
      cases: { type: 'string', default: '' },
      trace: { type: 'boolean', default: false },
      detail: { type: 'boolean', default: false },
      clock: { type: 'string', default: 'wall' },
    },
  });
  const parsed = optionsSchema.safeParse(values);
  if (!parsed.success) throw new Error(`bad flags: ${z.prettifyError(parsed.error)}`);
  return parsed.data;
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
}

let tracing = false;
let detailed = false;
let virtual = false;

async function runCase(spec: CaseSpec): Promise<CaseResult> {
  const dir = mkdtempSync(join(tmpdir(), 'opflow-bench-throughput-'));
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
    sandbox: {
      keys: [{ key: SANDBOX_API_KEY, ...(spec.qps === undefined ? {} : { qps: spec.qps }) }],
      taskDurations: {},
      defaultTaskDuration: taskDuration,
      streamChunkDelayMs: 0,
    },
  });
  if (spec.engine !== 'learned') {
    // As before issue 10: the declared schedules, and waiting jobs bounce for the next token.
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
    for (let i = 0; i < spec.jobs; i++) ids.push(await submit(i));
    const boundMs = ((spec.jobs * minCallsPerJob) / qps) * 1000;
    const bucket = keyFingerprint(SANDBOX_API_KEY);
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
    await pipeline.stop();
    const calls = ledger
      .entries()
      .slice(seen)
      .filter((entry) => entry.operationId !== 'download');
    const fills = pipeline.pool.fillRounds;
    const detail = detailed
      ? `${describe(spec, calls, jobs, startedAt, qps)}\n    scheduler: ${fills.rounds} rounds, ${(fills.ms / Math.max(1, fills.rounds)).toFixed(2)} ms each (real time), ${(fills.ms / 1000).toFixed(1)} s in all`
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
    };
  } finally {
    await pipeline.close();
    rmSync(dir, { recursive: true, force: true });
  }
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

function table(headers: string[], rows: string[][]): string {
  const widths = headers.map((header, i) =>
    Math.max(header.length, ...rows.map((row) => (row[i] ?? '').length)),
  );
  const line = (cells: string[]) => cells.map((cell, i) => cell.padStart(widths[i] ?? 0)).join('  ');
  return [line(headers), widths.map((width) => '-'.repeat(width)).join('  '), ...rows.map(line)].join('\n');
}

const ratio = (a: number, b: number) => (b === 0 ? '-' : (a / b).toFixed(2));

async function runAll(all: CaseSpec[], sequential: boolean): Promise<CaseResult[]> {
  const filter = readOptions().cases;
  const specs = filter ? all.filter((spec) => spec.label.includes(filter)) : all;
  if (!sequential) return Promise.all(specs.map(runCase));
  const results: CaseResult[] = [];
  for (const spec of specs) results.push(await runCase(spec));
  return results;
}

async function main(): Promise<void> {
  const options = readOptions();
  tracing = options.trace;
  detailed = options.detail;
  virtual = options.clock === 'virtual';
  process.stdout.write(
    virtual
      ? 'clock: VIRTUAL (the engine, sandbox and limiter on a clock that stands still while steps run and jumps when every worker is idle; times are clock times)\n'
      : 'clock: WALL (real time; CPU starvation on a shared machine inflates the times)\n',
  );
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
    process.stderr.write(`batch: ${specs.length} cases side by side...\n`);
    const results = await runAll(specs, options.sequential);
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
    // One job on an idle key: the critical path is the tasks' own time, 5 polled steps.
    const specs: CaseSpec[] = [];
    for (const engine of ['learned', 'fixed'] as const) {
      for (const schedule of ['right', '10x slow'] as const) {
        // Learning needs a few tasks seen first; the fixed schedules learn nothing from them.
        const warmup = engine === 'learned' ? 5 : 0;
        specs.push({ label: `${engine} ${schedule}`, engine, schedule, jobs: 1, warmup, qps: undefined });
      }
    }
    process.stderr.write(`idle key: ${specs.length} cases side by side...\n`);
    const results = await runAll(specs, options.sequential);
    const polled = noveltyCheck.steps.filter((step) => step.poll).length;
    // Mean task time of the skewed draw (mean - spread + 2/3 spread) along the polled steps.
    const criticalMs = polled * (taskDuration.meanMs - taskDuration.spreadMs / 3);
    out.push(
      `idle key: one novelty check (learned: after ${specs[0]?.warmup} earlier ones on the same database), no limit; ` +
        `critical path = ${polled} tasks x ${(criticalMs / polled / 1000).toFixed(2)} s mean = ${(criticalMs / 1000).toFixed(1)} s`,
      table(
        ['case', 'ok', 'job s', 'job/critical path', 'calls', 'calls/min'],
        results.map((r) => [
          r.spec.label,
          `${r.succeeded}/1`,
          (r.medianJobMs / 1000).toFixed(1),
          ratio(r.medianJobMs, criticalMs),
          String(r.calls),
          ratio(r.calls, minCallsPerJob),
        ]),
      ),
      '',
    );
  }
  process.stdout.write(`${out.join('\n')}\n`);
}

await main();
