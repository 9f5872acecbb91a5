/**
 * Fairness benchmark: does a `high` job go ahead of a saturated batch, and does each tenant get its
 * configured share of a key when several have work?
 *
 * Everything is real and in one process, as in bench/throughput.ts: the built-in sandbox on
 * 127.0.0.1 (its key limited to Q calls per second; tasks of 1 to 3 s, most near 1 s), the local
 * runtime as `opflow run` builds it (SQLite file, report folder, HTTP client, limiter, worker pool),
 * on a virtual clock that jumps to the next due time whenever every worker is idle. The seed sets
 * the sandbox's task times, the engine's random numbers (spreads, jitter) and the clock's start, so
 * a run does the same as another of its seed, whatever the machine's load. Each call is told
 * apart by the job that made it (its commits and reads). Cases run one after another and print
 * side by side; nothing here asserts.
 *
 *   npx tsx bench/fairness.ts [--limit=5] [--batch=300] [--jobs=60] [--seed=7] [--pace=on|off] [--only=priority|shares]
 *                             [--aws=on|off] [--aws-jobs=115]
 *
 * - priority: a batch of `--batch` novelty checks saturates the key; 60 s in, one more check is
 *   submitted, `normal` or `high` (and `high` without the cut-in, to show what it adds). Each of its
 *   calls' wait (from the step that found it due to the call) is divided by the token interval.
 * - shares: three tenants on one key (weights 1, 1, 2; `--jobs` checks each for the first two,
 *   twice that for the third, submitted in that order) with fair shares off and on. Each tenant's
 *   share of the calls in every 60 s window (stepped by 10 s), against its configured share: while
 *   every tenant has a check waiting to start (each could use more than its share), and on to the
 *   first tenant's last finish (its last checks' polls then cannot use its share).
 * - shares on aws (`--aws=on`, the default with the shares part): the same three tenants and weights
 *   on one key of the simulated aws deployment (bench/fairness-aws.ts, run by vitest: the bundled
 *   api and step worker, the key's bucket item in DynamoDB Local, whose ledger every function
 *   charges), `--aws-jobs` patent counts per unit of weight (one call each), shares on and off;
 *   printed in the same table. Its clock is the harness's, not this one's seed: not seeded.
 * - each case's calls against the key's limit: the most in any 1 s and 20 s, as the sandbox saw
 *   them and as counted from the jobs' usage (with and without downloads, which take no token),
 *   and the sandbox's throttled answers.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import * as z from 'zod';
import { openLocalDatabaseToRead, type SqliteRateLimiter } from '../shared/backends/local';
import { readTokenGrants } from '../shared/backends/local/sqlite-rate-limiter';
import { isTerminal, type Job, keyFingerprint } from '../shared/engine';
import { tokensWaited } from '../shared/engine/admission/priority-lane';
import type { LocalPipeline } from '../shared/runtime/local/pipeline';
import { SANDBOX_API_KEY } from '../shared/sandbox';
import { noveltyCheck } from '../shared/workflows';
import type { AwsSharesResult } from '../test/e2e/aws/harness/fair-shares-scenario';
import { benchPipeline, submitCheck, table } from './throughput-setup';

const optionsSchema = z.object({
  limit: z.coerce.number().positive().max(100),
  batch: z.coerce.number().int().min(10).max(5_000),
  jobs: z.coerce.number().int().min(10).max(2_000),
  only: z.enum(['all', 'priority', 'shares']),
  seed: z.coerce.number().int().min(0),
  pace: z.enum(['on', 'off']),
  aws: z.enum(['on', 'off']),
  'aws-jobs': z.coerce.number().int().min(10).max(2_000),
});
type Options = z.infer<typeof optionsSchema>;

function readOptions(): Options {
  const { values } = parseArgs({
    options: {
      limit: { type: 'string', default: '5' },
      batch: { type: 'string', default: '300' },
      jobs: { type: 'string', default: '60' },
      only: { type: 'string', default: 'all' },
      seed: { type: 'string', default: '7' },
      pace: { type: 'string', default: 'on' },
      aws: { type: 'string', default: 'on' },
      'aws-jobs': { type: 'string', default: '115' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    process.stdout.write(
      'npx tsx bench/fairness.ts [--limit=5] [--batch=300] [--jobs=60] [--seed=7] [--pace=on|off] [--only=all|priority|shares] [--aws=on|off] [--aws-jobs=115]\n',
    );
    process.exit(0);
  }
  const parsed = optionsSchema.safeParse(values);
  if (!parsed.success) {
    process.stderr.write(
      `fairness: ${parsed.error.issues.map((issue) => `--${issue.path.join('.')}: ${issue.message}`).join('; ')}\n`,
    );
    process.exit(2);
  }
  return parsed.data;
}

/** What each job did: when it was first due for each call, each call's token wait, and every call. */
interface Trace {
  dueAt: Map<string, number>;
  waits: Map<string, number[]>;
  calls: { jobId: string; tenant: string; at: number; download: boolean }[];
}

/**
 * A pipeline on the virtual clock whose calls are traced per job: a step that reads its job due
 * starts the wait for the call's token (the first since the job's last call), and a commit whose
 * job counts one call more ends it (on the virtual clock a call takes no time). A download takes no
 * token and has no wait; its call is in the jobs' usage, so it is in the shares' count, marked.
 */
async function tracedPipeline(dir: string, options: Options, env: Record<string, string>) {
  const pipeline = await benchPipeline({
    dir,
    qps: options.limit,
    virtual: true,
    sandboxSpeed: 10,
    seed: options.seed,
    engineSeed: options.seed,
    env,
  });
  // Without the pacing of held tokens (SqliteRateLimiter.pace), to see what it changes.
  if (options.pace === 'off') (pipeline.deps.rateLimiter as { pace?: unknown }).pace = undefined;
  const trace: Trace = { dueAt: new Map(), waits: new Map(), calls: [] };
  const now = () => pipeline.deps.clock.now();
  const fetchSteps = new Set(
    noveltyCheck.steps.filter((step) => step.kind === 'fetch').map((step) => step.name),
  );
  const counted = new Map<string, number>();
  // The step each job's read was for: a commit counting a call after a download step's read counts
  // a download (it takes no token; `usage.calls` counts it).
  const readStep = new Map<string, string>();
  pipeline.deps.onJobRead = (job) => {
    readStep.set(job.id, job.step);
    if (job.nextRunAt > now() + 1_000 || isTerminal(job.status) || fetchSteps.has(job.step)) return;
    if (!trace.dueAt.has(job.id)) trace.dueAt.set(job.id, now());
  };
  const unwatch = pipeline.onJobChange((job) => {
    const calls = job.usage.calls - (counted.get(job.id) ?? 0);
    if (calls <= 0) return;
    counted.set(job.id, job.usage.calls);
    const dueAt = trace.dueAt.get(job.id);
    trace.dueAt.delete(job.id);
    const download = fetchSteps.has(readStep.get(job.id) ?? '');
    for (let i = 0; i < calls; i++)
      trace.calls.push({ jobId: job.id, tenant: job.tenant, at: job.updatedAt, download });
    if (dueAt !== undefined)
      trace.waits.set(job.id, [...(trace.waits.get(job.id) ?? []), Math.max(0, job.updatedAt - dueAt)]);
  });
  return { pipeline, trace, unwatch };
}

/** The most of `times` (sorted) in any window of `windowMs` that starts at one of them. */
function busiest(times: number[], windowMs: number): number {
  let most = 0;
  let from = 0;
  for (let to = 0; to < times.length; to++) {
    while ((times[to] as number) - (times[from] as number) >= windowMs) from++;
    most = Math.max(most, to - from + 1);
  }
  return most;
}

/**
 * The key's calls as the sandbox saw them (its ledger, on the same clock), against the trace's
 * count from the jobs' usage: the most in any 1 s and any 20 s, and the throttled answers.
 */
interface RateCheck {
  calls: number;
  downloads: number;
  throttled: number;
  sandbox1s: number;
  sandbox20s: number;
  usage1s: number;
  usage20s: number;
  /** The same without the downloads. */
  tokens1s: number;
  tokens20s: number;
}

function rateCheck(pipeline: LocalPipeline, trace: Trace): RateCheck {
  const ledger = pipeline.sandbox?.server.ledger.entries() ?? [];
  const entries = ledger.filter((entry) => entry.operationId !== 'download');
  const atSandbox = entries.map((entry) => entry.time).sort((a, b) => a - b);
  const fromUsage = trace.calls.map((call) => call.at).sort((a, b) => a - b);
  const tokenCalls = trace.calls
    .filter((call) => !call.download)
    .map((call) => call.at)
    .sort((a, b) => a - b);
  return {
    calls: entries.length,
    downloads: ledger.length - entries.length,
    throttled: entries.filter((entry) => entry.httpStatus === 429).length,
    sandbox1s: busiest(atSandbox, 1_000),
    sandbox20s: busiest(atSandbox, 20_000),
    usage1s: busiest(fromUsage, 1_000),
    usage20s: busiest(fromUsage, 20_000),
    tokens1s: busiest(tokenCalls, 1_000),
    tokens20s: busiest(tokenCalls, 20_000),
  };
}

const rateHeaders = [
  'calls',
  'downloads',
  'throttled',
  'most in 1 s / 20 s (sandbox)',
  'most in 1 s / 20 s (usage)',
  '(usage, downloads out)',
];
const rateCells = (r: RateCheck) => [
  String(r.calls),
  String(r.downloads),
  String(r.throttled),
  `${r.sandbox1s} / ${r.sandbox20s}`,
  `${r.usage1s} / ${r.usage20s}`,
  `${r.tokens1s} / ${r.tokens20s}`,
];

const submit = (pipeline: LocalPipeline, i: number, extra: Record<string, unknown> = {}) =>
  submitCheck(pipeline, i, extra).then(({ job }) => job);

/** Waits (in real time) until the virtual clock has reached `at`. */
async function untilClock(pipeline: LocalPipeline, at: number): Promise<void> {
  while (pipeline.deps.clock.now() < at) await new Promise((resolve) => setTimeout(resolve, 20));
}

interface PriorityResult {
  label: string;
  calls: number;
  intervalMs: number;
  waits: number[];
  /** Each call's tokens of other jobs between its first ask and its token (the grant log). */
  tokens: number[];
  spanMs: number;
  rate: RateCheck;
}

async function priorityCase(options: Options, label: string, priority: 'normal' | 'high', lane: boolean) {
  const dir = mkdtempSync(join(tmpdir(), 'opflow-bench-fairness-'));
  const { pipeline, trace } = await tracedPipeline(dir, options, {});
  try {
    if (!lane) (pipeline.deps.rateLimiter as { cutIn?: unknown }).cutIn = undefined;
    const startedAt = pipeline.deps.clock.now();
    for (let i = 0; i < options.batch; i++) await submit(pipeline, i, { batchId: 'bulk' });
    pipeline.start();
    await untilClock(pipeline, startedAt + 60_000);
    const probe = await submit(pipeline, 100_000, { priority, label: 'the attorney check' });
    const [done] = await pipeline.waitForJobs([probe.id], { signal: AbortSignal.timeout(900_000) });
    await pipeline.stop();
    const rate = (pipeline.deps.rateLimiter as SqliteRateLimiter).currentRate(
      keyFingerprint(SANDBOX_API_KEY),
    );
    const waits = trace.waits.get(probe.id) ?? [];
    // Counted on the key's grant log in the database file (every token given, in grant order).
    const db = openLocalDatabaseToRead(join(dir, 'opflow.db'));
    const grants = readTokenGrants(db).get(keyFingerprint(SANDBOX_API_KEY)) ?? [];
    db.close();
    return {
      tokens: tokensWaited(grants, probe.id),
      label,
      calls: waits.length,
      intervalMs: 1000 / rate,
      waits,
      spanMs: ((done as Job).finishedAt ?? 0) - probe.createdAt,
      rate: rateCheck(pipeline, trace),
    } satisfies PriorityResult;
  } finally {
    await pipeline.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const tenantsOfShares = [
  { tenant: 'alpha', weight: 1 },
  { tenant: 'beta', weight: 1 },
  { tenant: 'gamma', weight: 2 },
] as const;

/** Each tenant's share of the calls in every 60 s window (stepped by 10 s) of a span. */
interface SpanShares {
  span: string;
  windows: number;
  /** Per tenant: configured share, and the least and most it got in a window. */
  rows: { tenant: string; configured: number; min: number; max: number; worst: number }[];
}

interface SharesResult {
  label: string;
  spans: SpanShares[];
  rate: RateCheck;
}

function spanShares(span: string, calls: Trace['calls'], from: number, to: number): SpanShares {
  const total = tenantsOfShares.reduce((sum, t) => sum + t.weight, 0);
  const seen = new Map<string, number[]>(tenantsOfShares.map((t) => [t.tenant, []]));
  let windows = 0;
  for (let start = from; start + 60_000 <= to; start += 10_000) {
    const inWindow = calls.filter((call) => call.at >= start && call.at < start + 60_000);
    if (inWindow.length === 0) continue;
    windows++;
    for (const { tenant } of tenantsOfShares) {
      const mine = inWindow.filter((call) => call.tenant === tenant).length;
      seen.get(tenant)?.push(mine / inWindow.length);
    }
  }
  return {
    span,
    windows,
    rows: tenantsOfShares.map(({ tenant, weight }) => {
      const shares = seen.get(tenant) ?? [];
      const configured = weight / total;
      const min = Math.min(...shares);
      const max = Math.max(...shares);
      return {
        tenant,
        configured,
        min,
        max,
        worst: Math.max(configured - min, max - configured) / configured,
      };
    }),
  };
}

async function sharesCase(options: Options, label: string, on: boolean): Promise<SharesResult> {
  const dir = mkdtempSync(join(tmpdir(), 'opflow-bench-fairness-'));
  const env = { OPFLOW_SHARES: on ? tenantsOfShares.map((t) => `${t.tenant}=${t.weight}`).join(',') : 'off' };
  const { pipeline, trace } = await tracedPipeline(dir, options, env);
  try {
    const ids: string[] = [];
    let n = 0;
    for (const { tenant, weight } of tenantsOfShares)
      for (let i = 0; i < options.jobs * weight; i++) {
        ids.push((await submit(pipeline, n++, { tenant })).id);
      }
    pipeline.start();
    const jobs = await pipeline.waitForJobs(ids, { signal: AbortSignal.timeout(3_600_000) });
    await pipeline.stop();
    // Each tenant's last job's first call (until then it has a job waiting to start), and its last finish.
    const firstCall = new Map<string, number>();
    for (const call of trace.calls) if (!firstCall.has(call.jobId)) firstCall.set(call.jobId, call.at);
    const lastStart = new Map<string, number>();
    const lastFinish = new Map<string, number>();
    for (const job of jobs) {
      lastStart.set(job.tenant, Math.max(lastStart.get(job.tenant) ?? 0, firstCall.get(job.id) ?? 0));
      lastFinish.set(job.tenant, Math.max(lastFinish.get(job.tenant) ?? 0, job.finishedAt ?? job.updatedAt));
    }
    const from = Math.min(...trace.calls.map((call) => call.at));
    return {
      label,
      spans: [
        spanShares('all waiting', trace.calls, from, Math.min(...lastStart.values())),
        spanShares('to 1st finish', trace.calls, from, Math.min(...lastFinish.values())),
      ],
      rate: rateCheck(pipeline, trace),
    };
  } finally {
    await pipeline.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const pct = (x: number) => `${(100 * x).toFixed(1)} %`;

/**
 * The aws leg (bench/fairness-aws.ts) under vitest, whose fake clock the simulated deployment
 * needs; its results come back as JSON. Shares on, then off.
 */
function awsSharesCases(options: Options): AwsSharesResult[] {
  const dir = mkdtempSync(join(tmpdir(), 'opflow-bench-fairness-aws-'));
  const out = join(dir, 'results.json');
  try {
    const tenants = tenantsOfShares.map(({ tenant, weight }) => ({
      tenant,
      weight,
      jobs: weight * options['aws-jobs'],
    }));
    const run = spawnSync('npx', ['vitest', 'run', '--config', 'bench/fairness-aws.config.ts'], {
      stdio: ['ignore', 'ignore', 'inherit'],
      env: {
        ...process.env,
        OPFLOW_BENCH_FAIRNESS_OUT: out,
        OPFLOW_BENCH_FAIRNESS_TENANTS: JSON.stringify(tenants),
        OPFLOW_BENCH_FAIRNESS_QPS: String(options.limit),
      },
    });
    if (run.status !== 0) throw new Error(`the aws leg (bench/fairness-aws.ts) exited with ${run.status}`);
    return JSON.parse(readFileSync(out, 'utf8')) as AwsSharesResult[];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const options = readOptions();
  const rates: { label: string; rate: RateCheck }[] = [];
  // Each part is printed as soon as it is measured.
  const out = { push: (...lines: string[]) => process.stdout.write(`${lines.join('\n')}\n`) };
  out.push(`fairness bench: key limit ${options.limit} calls/s, virtual clock`);
  if (options.only !== 'shares') {
    const results: PriorityResult[] = [];
    for (const [label, priority, lane] of [
      ['normal', 'normal', true],
      ['high, no cut-in', 'high', false],
      ['high', 'high', true],
    ] as const) {
      process.stderr.write(`  priority: ${label}...\n`);
      results.push(await priorityCase(options, label, priority, lane));
    }
    rates.push(...results.map((r) => ({ label: `priority: ${r.label}`, rate: r.rate })));
    out.push(
      '',
      `(a) one check submitted 60 s into a saturated batch of ${options.batch}: each call's token wait / token interval`,
      table(
        [
          'probe',
          'calls',
          'interval',
          'max wait',
          'max wait / interval',
          'mean wait / interval',
          'tokens waited: max / mean (goal <= 1)',
          'span',
        ],
        results.map((r) => [
          r.label,
          String(r.calls),
          `${r.intervalMs.toFixed(0)} ms`,
          `${(Math.max(0, ...r.waits) / 1000).toFixed(2)} s`,
          (Math.max(0, ...r.waits) / r.intervalMs).toFixed(2),
          (r.waits.reduce((a, b) => a + b, 0) / Math.max(1, r.waits.length) / r.intervalMs).toFixed(2),
          `${Math.max(0, ...r.tokens)} / ${(r.tokens.reduce((a, b) => a + b, 0) / Math.max(1, r.tokens.length)).toFixed(2)}`,
          `${(r.spanMs / 1000).toFixed(1)} s`,
        ]),
        'end',
      ),
    );
  }
  if (options.only !== 'priority') {
    const results: SharesResult[] = [];
    for (const [label, on] of [
      ['shares off', false],
      ['shares on', true],
    ] as const) {
      process.stderr.write(`  shares: ${label}...\n`);
      results.push(await sharesCase(options, label, on));
    }
    rates.push(...results.map((r) => ({ label: `shares: ${r.label}`, rate: r.rate })));
    let aws: AwsSharesResult[] = [];
    if (options.aws === 'on') {
      process.stderr.write('  shares on aws (vitest, the simulated deployment)...\n');
      aws = awsSharesCases(options);
    }
    const awsRows = aws.flatMap((r) =>
      r.rows.map((row) => [
        r.label,
        'all waiting',
        String(r.windows),
        row.tenant,
        pct(row.configured),
        pct(row.min),
        pct(row.max),
        pct(row.worst),
      ]),
    );
    out.push(
      '',
      `(b) three tenants on one key (weights 1, 1, 2; ${options.jobs}, ${options.jobs}, ${2 * options.jobs} checks submitted in that order), share of calls per 60 s window: while every tenant has a check waiting to start (all waiting), and on to the first tenant's last finish, its tail included (to 1st finish)`,
      table(
        ['case', 'span', 'windows', 'tenant', 'configured', 'least', 'most', 'worst off / configured'],
        results
          .flatMap((r) =>
            r.spans.flatMap((span) =>
              span.rows.map((row) => [
                r.label,
                span.span,
                String(span.windows),
                row.tenant,
                pct(row.configured),
                pct(row.min),
                pct(row.max),
                pct(row.worst),
              ]),
            ),
          )
          .concat(awsRows),
        'end',
      ),
    );
    if (aws.length > 0)
      out.push(
        '',
        `(b, aws) ${options['aws-jobs']}, ${options['aws-jobs']}, ${2 * options['aws-jobs']} patent counts (one call each) submitted through the job API in that order, on the simulated aws deployment; the span is up to the first tenant's last call`,
        table(
          ['case', 'span', 'calls', 'throttled', 'failed', 'bucket item (JSON)', 'wall time'],
          aws.map((r) => [
            r.label,
            `${(r.spanMs / 1000).toFixed(0)} s`,
            String(r.calls),
            String(r.throttled),
            String(r.failed),
            `${r.bucketBytes} B`,
            `${(r.wallMs / 1000).toFixed(0)} s`,
          ]),
          'end',
        ),
      );
    for (const r of aws)
      if (r.perWindow && r.perWindow.length > 0)
        out.push(
          '',
          `(b, aws) ${r.label}: each window's shares`,
          table(
            ['window', 'calls', ...r.rows.map((row) => `${row.tenant} (${pct(row.configured)})`)],
            r.perWindow.map((w) => [
              `+${(w.startMs / 1000).toFixed(0)} s`,
              String(w.calls),
              ...r.rows.map((row) => pct(w.shares[row.tenant] ?? 0)),
            ]),
            'end',
          ),
        );
  }
  out.push(
    '',
    `(c) the key's calls against its limit of ${options.limit}/s: as the sandbox saw them (its ledger), and as counted from the jobs' usage at their commits (the trace above)`,
    table(
      ['case', ...rateHeaders],
      rates.map((r) => [r.label, ...rateCells(r.rate)]),
      'end',
    ),
  );
}

main().catch((error) => {
  process.stderr.write(
    `fairness: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});
