/**
 * Benchmark of the local runtime against a rate-limited key: does a run of many jobs finish close to
 * the time the key's limit allows, with few throttled calls, and does a waiting job hold no worker?
 *
 * Everything is real and in one process: the built-in sandbox on 127.0.0.1 (its key limited to Q
 * calls per second, over it answered 67200002 in a 200 or as a 429), the local runtime (SQLite file
 * and report folder in a temporary directory per case, the Open Platform client over HTTP, the
 * adaptive limiter in the database file) and the real wall clock. The rate cases run side by side (each has its
 * own sandbox, key and limiter) and everything is printed as ratios, since the machine is shared and
 * noisy; nothing here asserts a time.
 *
 *   npx tsx bench/rate-limit.ts [--limit=4] [--jobs=60] [--novelty-jobs=10] [--waiting-jobs=24]
 *     [--concurrency=8] [--speed=30] [--only=rate|waiting|bucket] [--sequential] [--trace]
 *
 * See bench/rate-limit.md for what each column means.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import * as z from 'zod';
import { openLocalDatabase, SqliteRateLimiter } from '../shared/backends/local';
import { type Job, keyFingerprint, silentLogger, submitJob } from '../shared/engine';
import type { RateLimiter } from '../shared/engine/ports';
import { createLocalPipeline } from '../shared/runtime/local/pipeline';
import { type LedgerEntry, PlatformCode, SANDBOX_API_KEY, type SandboxKey } from '../shared/sandbox';
import { workflows } from '../shared/workflows';

const optionsSchema = z.object({
  limit: z.coerce.number().positive().max(1_000),
  jobs: z.coerce.number().int().min(1).max(100_000),
  noveltyJobs: z.coerce.number().int().min(0).max(10_000),
  waitingJobs: z.coerce.number().int().min(0).max(10_000),
  concurrency: z.coerce.number().int().min(1).max(256),
  speed: z.coerce.number().min(1).max(100_000),
  only: z.enum(['rate', 'waiting', 'bucket', 'all']),
  trace: z.boolean(),
  sequential: z.boolean(),
});
type BenchOptions = z.infer<typeof optionsSchema>;

function readOptions(): BenchOptions {
  const { values } = parseArgs({
    options: {
      limit: { type: 'string', default: '4' },
      jobs: { type: 'string', default: '60' },
      'novelty-jobs': { type: 'string', default: '10' },
      'waiting-jobs': { type: 'string', default: '24' },
      concurrency: { type: 'string', default: '8' },
      speed: { type: 'string', default: '30' },
      only: { type: 'string', default: 'all' },
      trace: { type: 'boolean', default: false },
      sequential: { type: 'boolean', default: false },
    },
  });
  const parsed = optionsSchema.safeParse({
    limit: values.limit,
    jobs: values.jobs,
    noveltyJobs: values['novelty-jobs'],
    waitingJobs: values['waiting-jobs'],
    concurrency: values.concurrency,
    speed: values.speed,
    only: values.only,
    trace: values.trace,
    sequential: values.sequential,
  });
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `--${issue.path.join('.')}: ${issue.message}`);
    throw new Error(`bad flags: ${problems.join('; ')}`);
  }
  return parsed.data;
}

type Workload = 'patent-count' | 'novelty-check';

interface CaseSpec {
  label: string;
  workload: Workload;
  jobs: number;
  /** The key's limit at the sandbox; undefined: no limit. */
  keyQps: number | undefined;
  answeredAs: NonNullable<SandboxKey['qpsExceededAs']>;
  /** opflow's --qps. */
  opflowQps: number;
  concurrency: number;
  speed: number;
}

interface CaseResult {
  spec: CaseSpec;
  wallMs: number;
  /** Calls the sandbox admitted (the work itself: what the limit has to let through). */
  admitted: number;
  /** Calls answered 67200002 (in a 200 or a 429). */
  throttled: number;
  succeeded: number;
  failed: number;
  timedOut: boolean;
  /** The limiter's rate for the key when the run ended, in calls per second. */
  finalRate: number;
  /** Median time from the first to the last change of a job (how long one job takes). */
  medianJobMs: number;
  /** Why jobs did not succeed: "<step> <error kind>" with a count. */
  failures: Map<string, number>;
  trace: string[];
}

const noveltyText = (i: number) =>
  [
    `Electrodynamic dust shield in the anti-reflective coating of solar module ${i + 1}.`,
    'Transparent interdigitated electrodes inside the coating are driven by a three-phase high-voltage signal.',
    'The travelling electric field lifts charged dust particles and moves them to the lower edge of the module.',
    'A soiling sensor under a clear cover starts a thirty-second cleaning cycle when the loss exceeds two percent.',
    `The electrodes are aluminium-doped zinc oxide with a pitch of ${(1 + i / 100).toFixed(2)} millimetres.`,
  ].join(' ');

function inputFor(workload: Workload, i: number): unknown {
  return workload === 'patent-count'
    ? { query: `TACD:(lithium battery AND cathode ${i + 1})` }
    : { text: noveltyText(i), title: `Dust shield ${i + 1}` };
}

/** Temporary directories of cases in progress, removed even when the run is interrupted. */
const liveDirs = new Set<string>();

/** Runs one case on a fresh database, report folder and sandbox; everything is removed afterwards. */
async function runCase(spec: CaseSpec, traceEnabled: boolean): Promise<CaseResult> {
  const dir = mkdtempSync(join(tmpdir(), 'opflow-bench-rate-'));
  liveDirs.add(dir);
  const key: SandboxKey = { key: SANDBOX_API_KEY, qpsExceededAs: spec.answeredAs };
  if (spec.keyQps !== undefined) key.qps = spec.keyQps;
  const pipeline = await createLocalPipeline({
    config: {
      qps: spec.opflowQps,
      concurrency: spec.concurrency,
      dbPath: join(dir, 'opflow.db'),
      outDir: join(dir, 'out'),
      sandboxSpeed: spec.speed,
    },
    workflows,
    // No OPFLOW_API_KEY from this shell: the built-in sandbox, always.
    env: {},
    announce: () => undefined,
    log: silentLogger,
    sandbox: { keys: [key], streamChunkDelayMs: 0 },
  });
  const trace: string[] = [];
  let sampler: NodeJS.Timeout | undefined;
  try {
    const sandbox = pipeline.sandbox;
    if (!sandbox) throw new Error('the benchmark expects the built-in sandbox');
    const ids: string[] = [];
    for (let i = 0; i < spec.jobs; i += 1) {
      const { job } = await submitJob(pipeline.deps, {
        workflow: spec.workload,
        input: inputFor(spec.workload, i),
        label: `bench ${i + 1}`,
      });
      ids.push(job.id);
    }
    const bucket = keyFingerprint(SANDBOX_API_KEY);
    const ledger = sandbox.server.ledger;
    const started = performance.now();
    const startedAt = Date.now();
    if (traceEnabled) {
      let seen = 0;
      sampler = setInterval(() => {
        const entries = ledger.entries().slice(seen);
        seen += entries.length;
        const throttled = entries.filter((entry) => entry.errorCode === PlatformCode.throttled).length;
        const t = ((performance.now() - started) / 1000).toFixed(1).padStart(5);
        trace.push(
          `${t}s  rate ${pipeline.local.rateLimiter.currentRate(bucket).toFixed(2).padStart(6)}/s  ` +
            `calls ${String(entries.length).padStart(3)}  throttled ${throttled}`,
        );
      }, 1_000);
    }
    // Bounded: a case that cannot finish in many times its ideal time is reported as timed out.
    const pace = Math.min(spec.keyQps ?? Number.POSITIVE_INFINITY, spec.opflowQps);
    const idealGuessMs = (spec.jobs * callsPerJobGuess(spec.workload) * 1000) / pace;
    const timeoutMs = Math.ceil(Math.max(60_000, 4 * idealGuessMs));
    const abort = AbortSignal.timeout(timeoutMs);
    pipeline.start();
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
    const wallMs = performance.now() - started;
    clearInterval(sampler);
    await pipeline.stop();

    const calls = ledger.entries().filter((entry) => entry.operationId !== 'download');
    const throttled = calls.filter((entry) => entry.errorCode === PlatformCode.throttled).length;
    if (traceEnabled && spec.keyQps !== undefined)
      trace.push(...explainThrottles(calls, spec.keyQps, startedAt));
    const durations = jobs.map((job) => job.updatedAt - job.createdAt).sort((a, b) => a - b);
    const failures = new Map<string, number>();
    for (const job of jobs) {
      if (job.status === 'SUCCEEDED') continue;
      const why = job.lastError ? `${job.lastError.step} ${job.lastError.kind}` : job.status;
      failures.set(why, (failures.get(why) ?? 0) + 1);
    }
    return {
      spec,
      wallMs,
      admitted: calls.length - throttled,
      throttled,
      succeeded: jobs.filter((job) => job.status === 'SUCCEEDED').length,
      failed: jobs.filter((job) => job.status !== 'SUCCEEDED').length,
      timedOut,
      finalRate: pipeline.local.rateLimiter.currentRate(bucket),
      medianJobMs: durations[Math.floor(durations.length / 2)] ?? 0,
      failures,
      trace,
    };
  } finally {
    clearInterval(sampler);
    await pipeline.close();
    rmSync(dir, { recursive: true, force: true });
    liveDirs.delete(dir);
  }
}

/**
 * For each throttled answer: how long before it the key's previous `limit` admitted calls arrived.
 * Just under 1000 ms is a call that came a few milliseconds early (jitter); far under is a burst.
 */
function explainThrottles(calls: LedgerEntry[], limit: number, startedAt: number): string[] {
  const lines: string[] = [];
  const admitted: number[] = [];
  for (const entry of calls) {
    if (entry.errorCode !== PlatformCode.throttled) {
      admitted.push(entry.time);
      continue;
    }
    const window = admitted.slice(-Math.ceil(limit));
    const span = window.length > 0 ? `${entry.time - window[0]!} ms` : '-';
    lines.push(
      `throttled at ${((entry.time - startedAt) / 1000).toFixed(2)} s: ` +
        `the ${window.length} admitted calls before it arrived within ${span}`,
    );
  }
  return lines.length > 12 ? [...lines.slice(0, 12), `... ${lines.length - 12} more`] : lines;
}

/** Only to bound a case's run time; the printed ideal uses the calls actually admitted. */
function callsPerJobGuess(workload: Workload): number {
  return workload === 'patent-count' ? 1 : 25;
}

const seconds = (ms: number) => (ms / 1000).toFixed(1);
const percent = (part: number, whole: number) =>
  whole === 0 ? '-' : `${((100 * part) / whole).toFixed(1)}%`;

function table(headers: string[], rows: string[][]): string {
  const widths = headers.map((header, i) =>
    Math.max(header.length, ...rows.map((row) => (row[i] ?? '').length)),
  );
  const line = (cells: string[]) => cells.map((cell, i) => cell.padStart(widths[i] ?? 0)).join('  ');
  return [line(headers), widths.map((width) => '-'.repeat(width)).join('  '), ...rows.map(line)].join('\n');
}

function jobsCell(result: CaseResult): string {
  const failed = result.failed > 0 ? ` (${result.failed} failed${result.timedOut ? ', timed out' : ''})` : '';
  return `${result.spec.jobs} ${result.spec.workload === 'patent-count' ? 'count' : 'novelty'}${failed}`;
}

/**
 * One row of the rate table. `paced` is the same jobs with the upstream unlimited and opflow at
 * --qps Q: the best this runtime does at that rate when nothing is ever throttled.
 */
function rateRow(result: CaseResult, limit: number, paced: CaseResult | undefined): string[] {
  const idealMs = (result.admitted / limit) * 1000;
  const calls = result.admitted + result.throttled;
  return [
    result.spec.label,
    jobsCell(result),
    result.spec.keyQps === undefined ? '-' : result.spec.answeredAs === 'http-429' ? '429' : '200/67200002',
    String(result.spec.opflowQps),
    seconds(result.wallMs),
    seconds(idealMs),
    (result.wallMs / idealMs).toFixed(2),
    paced && paced !== result ? (result.wallMs / paced.wallMs).toFixed(2) : '-',
    String(calls),
    String(result.throttled),
    percent(result.throttled, calls),
    result.finalRate.toFixed(2),
  ];
}

async function rateScenario(options: BenchOptions, log: (line: string) => void): Promise<string> {
  const q = options.limit;
  const base = { concurrency: options.concurrency, speed: options.speed };
  const specs: CaseSpec[] = [];
  const workloads: { workload: Workload; name: string; jobs: number; variants: CaseSpec['answeredAs'][] }[] =
    [
      { workload: 'patent-count', name: 'count', jobs: options.jobs, variants: ['envelope', 'http-429'] },
      { workload: 'novelty-check', name: 'novelty', jobs: options.noveltyJobs, variants: ['envelope'] },
    ];
  for (const { workload, name, jobs, variants } of workloads) {
    if (jobs === 0) continue;
    const common = { ...base, workload, jobs };
    // The yardstick: nothing at the upstream to discover, opflow pacing at exactly Q.
    specs.push({
      ...common,
      label: `${name} paced`,
      keyQps: undefined,
      answeredAs: 'envelope',
      opflowQps: q,
    });
    for (const answeredAs of variants) {
      const suffix = answeredAs === 'http-429' ? ' 429' : '';
      const limited = { ...common, keyQps: q, answeredAs };
      specs.push({ ...limited, label: `${name} a at limit${suffix}`, opflowQps: q });
      // Not one of the three asked for: what a small margin under the limit buys.
      if (answeredAs === 'envelope')
        specs.push({ ...limited, label: `${name} a- 5% under`, opflowQps: 0.95 * q });
      specs.push({ ...limited, label: `${name} b 3x over${suffix}`, opflowQps: 3 * q });
      specs.push({ ...limited, label: `${name} c unlimited${suffix}`, opflowQps: 1000 });
    }
  }

  const run = (spec: CaseSpec) => {
    log(
      `  ${spec.label}: ${spec.jobs} ${spec.workload} jobs, key ${spec.keyQps ?? '-'}/s, --qps ${spec.opflowQps}`,
    );
    return runCase(spec, options.trace);
  };
  // Each case has its own sandbox, key, database and limiter, and spends its time waiting for the
  // limit, so running them together costs little and exposes them all to the same noise.
  const results: CaseResult[] = [];
  if (options.sequential) for (const spec of specs) results.push(await run(spec));
  else {
    // Every case closes its sandbox and removes its folder before a failure is reported.
    const settled = await Promise.allSettled(specs.map(run));
    for (const outcome of settled) {
      if (outcome.status === 'rejected') throw outcome.reason;
      results.push(outcome.value);
    }
  }

  const pacedFor = (workload: Workload) =>
    results.find((result) => result.spec.workload === workload && result.spec.keyQps === undefined);
  const rows = results.map((result) => rateRow(result, q, pacedFor(result.spec.workload)));
  const failures = results.flatMap((result) =>
    result.failures.size > 0
      ? [
          `${result.spec.label}: ${[...result.failures].map(([why, count]) => `${count} × ${why}`).join(', ')}`,
        ]
      : [],
  );
  const traces = results.flatMap((result) =>
    result.trace.length > 0 ? [`${result.spec.label}:`, ...result.trace.map((line) => `  ${line}`)] : [],
  );
  const header = [
    'case',
    'jobs',
    'throttled as',
    '--qps',
    'wall s',
    'ideal s',
    'wall/ideal',
    'wall/paced',
    'calls',
    'throttled',
    'thr %',
    'end rate/s',
  ];
  return [
    `rate: key limited to ${q} calls/s, ${options.concurrency} workers, ${options.speed}x sandbox speed, ` +
      `cases run ${options.sequential ? 'one after another' : 'side by side'}`,
    `ideal = calls admitted / ${q}; paced = the same jobs with no limit at the upstream and --qps ${q}`,
    table(header, rows),
    ...(failures.length > 0
      ? ['jobs that did not succeed (last step, error kind):', ...failures.map((line) => `  ${line}`)]
      : []),
    ...(traces.length > 0
      ? ['', 'trace (per second: limiter rate, calls, throttled answers):', ...traces]
      : []),
  ].join('\n');
}

async function waitingScenario(options: BenchOptions, log: (line: string) => void): Promise<string> {
  const results: CaseResult[] = [];
  for (const concurrency of [2, 16]) {
    log(`  waiting: ${options.waitingJobs} novelty-check jobs, concurrency ${concurrency}`);
    results.push(
      await runCase(
        {
          label: `concurrency ${concurrency}`,
          workload: 'novelty-check',
          jobs: options.waitingJobs,
          keyQps: undefined,
          answeredAs: 'envelope',
          opflowQps: 1000,
          concurrency,
          speed: options.speed,
        },
        false,
      ),
    );
  }
  const [two, sixteen] = results as [CaseResult, CaseResult];
  // Were a job to hold its worker from start to end, 2 workers would run the jobs 2 at a time.
  const heldMs = (options.waitingJobs / 2) * sixteen.medianJobMs;
  const rows = results.map((result) => [
    result.spec.label,
    jobsCell(result),
    seconds(result.wallMs),
    seconds(result.medianJobMs),
    String(result.admitted + result.throttled),
  ]);
  return [
    `waiting holds no worker: ${options.waitingJobs} novelty-check jobs at ${options.speed}x sandbox speed, no limit`,
    table(['case', 'jobs', 'wall s', 'median job s', 'calls'], rows),
    `wall(2) / wall(16) = ${(two.wallMs / sixteen.wallMs).toFixed(2)}  ` +
      `(if waiting held a worker, concurrency 2 would need about ${seconds(heldMs)} s, ` +
      `${(heldMs / sixteen.wallMs).toFixed(1)}x concurrency 16)`,
  ].join('\n');
}

/**
 * What one call costs its key's bucket, per limiter: a take (reserving within 2 s, as a batch's
 * calls do) and the success after the call, on a line kept full, at 5 and 20 calls/s of virtual
 * time. The limiter on the database file and on an in-memory database side by side, alternating
 * rounds, in microseconds of wall time per call.
 */
async function bucketScenario(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'opflow-bench-bucket-'));
  liveDirs.add(dir);
  const db = openLocalDatabase(join(dir, 'opflow.db'));
  try {
    const perCall = async (limiter: RateLimiter, rate: number, bucket: string): Promise<number> => {
      const calls = 4_000;
      let now = Date.UTC(2026, 0, 1);
      const started = performance.now();
      for (let i = 0; i < calls; i++) {
        // Two asks per token interval: half are granted or reserved, the line stays about 2 s long.
        now += 500 / rate;
        // Named by a job, as the engine's asks are (one of 40 jobs, in turn): the grant log records its ask.
        const share = { tenant: 'default', jobId: `job-${i % 40}` };
        const decision = await limiter.take(bucket, now, { reserveWithinMs: 2_000, share });
        if (decision.granted) await limiter.succeeded(bucket, now);
        else if (decision.reserved) await limiter.pace?.(bucket, decision.retryAtMs, decision.retryAtMs);
      }
      return ((performance.now() - started) * 1_000) / calls;
    };
    const rows: string[][] = [];
    for (const rate of [5, 20]) {
      const memory = SqliteRateLimiter.inMemory({ ratePerSecond: rate });
      const sqlite = new SqliteRateLimiter(db, { ratePerSecond: rate });
      const times = { memory: [] as number[], sqlite: [] as number[] };
      for (let round = 0; round < 3; round++) {
        times.memory.push(await perCall(memory, rate, `memory-${rate}-${round}`));
        times.sqlite.push(await perCall(sqlite, rate, `sqlite-${rate}-${round}`));
      }
      const median = (values: number[]) => [...values].sort((a, b) => a - b)[1] ?? 0;
      const [m, q] = [median(times.memory), median(times.sqlite)];
      rows.push([
        `${rate}/s`,
        m.toFixed(1),
        q.toFixed(1),
        (q / m).toFixed(1),
        `${((100 * (q * 2 * rate)) / 1_000_000).toFixed(2)}%`,
      ]);
    }
    return [
      'bucket: what an ask costs the key bucket (take, then success or pace), median of 3 rounds of 4,000 asks;',
      'two asks per token interval, so a saturated key at its rate spends the last column of one core',
      table(['rate', 'in-memory db us/ask', 'file us/ask', 'ratio', 'file share of a core'], rows),
    ].join('\n');
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
    liveDirs.delete(dir);
  }
}

async function main(): Promise<void> {
  const options = readOptions();
  const log = (line: string) => process.stderr.write(`${line}\n`);
  const sections: string[] = [];
  const started = performance.now();
  if (options.only === 'all' || options.only === 'bucket') {
    log('bucket scenario');
    sections.push(await bucketScenario());
  }
  if (options.only === 'all' || options.only === 'rate') {
    log('rate scenario');
    sections.push(await rateScenario(options, log));
  }
  if ((options.only === 'all' || options.only === 'waiting') && options.waitingJobs > 0) {
    log('waiting scenario');
    sections.push(await waitingScenario(options, log));
  }
  process.stdout.write(`\n${sections.join('\n\n')}\n\n(total ${seconds(performance.now() - started)} s)\n`);
}

process.once('SIGINT', () => {
  for (const dir of liveDirs) rmSync(dir, { recursive: true, force: true });
  process.exit(130);
});

main().catch((error: unknown) => {
  process.stderr.write(
    `bench/rate-limit: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exitCode = 1;
});
