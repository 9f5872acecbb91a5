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
 *   npx tsx bench/fairness.ts [--limit=5] [--batch=300] [--jobs=20] [--seed=7] [--pace=on|off] [--only=priority|shares]
 *                             [--aws=on|off] [--aws-jobs=40] [--shares=both|on|off]
 *                             [--order=alpha-first|gamma-first|interleaved] [--counts=weighted|equal]
 *
 * - priority: a batch of `--batch` novelty checks saturates the key; 60 s in, one more check is
 *   submitted, `normal` or `high` (and `high` without the cut-in, to show what it adds). Each of its
 *   calls' wait (from the step that found it due to the call) is divided by the token interval.
 * - shares: three tenants on one key (weights 5, 3, 2: configured shares 50/30/20 %; `--jobs`
 *   checks per unit of weight, submitted in that order, or gamma's first (`--order=gamma-first`),
 *   or one of each in turn (`interleaved`); or as many checks each as the first tenant has
 *   (`--counts=equal`); the first tenant's in two batches, 50/50 % within it)
 *   with fair shares off and on. Counted in tokens on the key's grant log (rate_grants,
 *   bench/fairness-windows.ts): each tenant's share of the tokens in every sliding 60 s window
 *   (every distinct one, not a step grid), and each batch's share of its tenant's, against the
 *   configured share, worst miss relative to it (the goal: within 10 %) and in points: while every
 *   tenant has a check waiting to start (each could use more than its share), and on to the first
 *   tenant's last token (its last checks' polls then cannot use its share).
 * - shares on aws (`--aws=on`, the default with the shares part): the same three tenants and weights
 *   on one key of the simulated aws deployment (bench/fairness-aws.ts, run by vitest: the bundled
 *   api and step worker, the key's bucket item in DynamoDB Local, whose ledger every function
 *   charges), `--aws-jobs` patent counts per unit of weight (one call each; at 5 calls/s 40 a unit
 *   are 80 s of tokens, so 60 s windows slide over 20 s), shares on and off (`--shares`); counted
 *   in tokens on the key's grant log (its bucket item's versions on the table's stream) in the
 *   same sliding windows. Its clock is the harness's, not this one's seed: not seeded.
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
import { openLocalDatabase, openLocalDatabaseToRead, type SqliteRateLimiter } from '../shared/backends/local';
import { readTokenGrants } from '../shared/backends/local/sqlite-rate-limiter';
import { isTerminal, type Job, keyFingerprint } from '../shared/engine';
import { tokensWaited } from '../shared/engine/admission/priority-lane';
import type { LocalPipeline } from '../shared/runtime/local/pipeline';
import { SANDBOX_API_KEY } from '../shared/sandbox';
import { noveltyCheck } from '../shared/workflows';
import type { AwsSharesResult } from '../test/e2e/aws/harness/fair-shares-scenario';
import {
  type FlowToken,
  keepGrantLog,
  readKeptGrants,
  sharesOfWeights,
  slidingShares,
  tokensOf,
  type WindowShares,
} from './fairness-windows';
import { benchPipeline, submitCheck, table } from './throughput-setup';

const optionsSchema = z.object({
  limit: z.coerce.number().positive().max(100),
  batch: z.coerce.number().int().min(10).max(5_000),
  jobs: z.coerce.number().int().min(2).max(2_000),
  only: z.enum(['all', 'priority', 'shares']),
  seed: z.coerce.number().int().min(0),
  pace: z.enum(['on', 'off']),
  aws: z.enum(['on', 'off']),
  'aws-jobs': z.coerce.number().int().min(2).max(2_000),
  shares: z.enum(['both', 'on', 'off']),
  order: z.enum(['alpha-first', 'gamma-first', 'interleaved']),
  counts: z.enum(['weighted', 'equal']),
});
type Options = z.infer<typeof optionsSchema>;

function readOptions(): Options {
  const { values } = parseArgs({
    options: {
      limit: { type: 'string', default: '5' },
      batch: { type: 'string', default: '300' },
      jobs: { type: 'string', default: '20' },
      only: { type: 'string', default: 'all' },
      seed: { type: 'string', default: '7' },
      pace: { type: 'string', default: 'on' },
      aws: { type: 'string', default: 'on' },
      'aws-jobs': { type: 'string', default: '40' },
      shares: { type: 'string', default: 'both' },
      order: { type: 'string', default: 'alpha-first' },
      counts: { type: 'string', default: 'weighted' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    process.stdout.write(
      'npx tsx bench/fairness.ts [--limit=5] [--batch=300] [--jobs=20] [--seed=7] [--pace=on|off] [--only=all|priority|shares] [--aws=on|off] [--aws-jobs=40] [--shares=both|on|off] [--order=alpha-first|gamma-first|interleaved] [--counts=weighted|equal]\n',
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

/** The three tenants of the shares part: configured shares 50/30/20 %. */
const tenantsOfShares = [
  { tenant: 'alpha', weight: 5 },
  { tenant: 'beta', weight: 3 },
  { tenant: 'gamma', weight: 2 },
] as const;
/** The first tenant's checks go in two batches of equal size: their shares within it are 50/50 %. */
const batchesOfAlpha = ['a1', 'a2'] as const;
const windowMs = 60_000;

/** Each flow's shares of the key's tokens in every sliding 60 s window of one span (bench/fairness-windows.ts). */
interface SpanShares extends WindowShares {
  span: string;
  /** What the shares are of: the key's tokens (tenants), or the first tenant's (its batches). */
  of: string;
  spanMs: number;
}

interface SharesResult {
  label: string;
  spans: SpanShares[];
  rate: RateCheck;
  /** The key's tokens (the grant log's, once each), and its first and last token's times. */
  tokens: number;
  firstTokenAt: number;
  lastTokenAt: number;
}

/**
 * The shares of the key's tokens (the grant log) in every sliding window of a span that starts at
 * the first token and ends when the first flow runs out: of work waiting to start (`all waiting`:
 * each flow's last job's first token), or of tokens at all (`all with work`: its last token).
 */
function spansOf(
  of: string,
  tokens: FlowToken[],
  configured: Record<string, number>,
  firstTokenOfJob: Map<string, { at: number; flow: string }>,
): SpanShares[] {
  if (tokens.length === 0) return [];
  const from = Math.min(...tokens.map((token) => token.at));
  const last = new Map<string, number>();
  for (const token of tokens) last.set(token.flow, Math.max(last.get(token.flow) ?? 0, token.at));
  const lastStart = new Map<string, number>();
  for (const { at, flow } of firstTokenOfJob.values())
    if (flow in configured) lastStart.set(flow, Math.max(lastStart.get(flow) ?? 0, at));
  const spans: [string, number][] = [
    ['all waiting', Math.min(...Object.keys(configured).map((flow) => lastStart.get(flow) ?? from))],
    ['all with work', Math.min(...Object.keys(configured).map((flow) => last.get(flow) ?? from))],
  ];
  return spans.map(([span, to]) => ({
    span,
    of,
    spanMs: to - from,
    ...slidingShares(tokens, configured, { windowMs, from, to }),
  }));
}

/**
 * How many checks a tenant of `weight` submits, `perUnit` a unit of weight: in proportion to its
 * weight (`--counts=weighted`), or as many as the heaviest tenant (`equal`: 100/100/100 at
 * `--jobs=20`, 200/200/200 at `--aws-jobs=40`), so the lighter tenants have more work than their
 * shares and their parked jobs outnumber their shares' turns.
 */
function checksOf(options: Options, perUnit: number, weight: number): number {
  const heaviest = Math.max(...tenantsOfShares.map((tenant) => tenant.weight));
  return perUnit * (options.counts === 'equal' ? heaviest : weight);
}

/**
 * The order the tenants' checks are submitted in (all in one instant): alpha's, then beta's, then
 * gamma's; gamma's first (then beta's, alpha's); or one of each tenant with checks left in turn.
 */
function submitOrder(options: Options): { tenant: string; i: number }[] {
  const each = tenantsOfShares.map(({ tenant, weight }) =>
    Array.from({ length: checksOf(options, options.jobs, weight) }, (_, i) => ({ tenant, i })),
  );
  if (options.order === 'alpha-first') return each.flat();
  if (options.order === 'gamma-first') return each.reverse().flat();
  const turns: { tenant: string; i: number }[] = [];
  for (let round = 0; turns.length < each.flat().length; round++)
    for (const checks of each)
      if (round < checks.length) turns.push(checks[round] as { tenant: string; i: number });
  return turns;
}

async function sharesCase(options: Options, label: string, on: boolean): Promise<SharesResult> {
  const dir = mkdtempSync(join(tmpdir(), 'opflow-bench-fairness-'));
  const env = { OPFLOW_SHARES: on ? tenantsOfShares.map((t) => `${t.tenant}=${t.weight}`).join(',') : 'off' };
  const { pipeline, trace } = await tracedPipeline(dir, options, env);
  // The limiter prunes its grant log after ten minutes: a copy keeps every token of a longer run.
  const keeper = openLocalDatabase(join(dir, 'opflow.db'));
  keepGrantLog(keeper);
  keeper.close();
  try {
    const ids: string[] = [];
    let n = 0;
    for (const { tenant, i } of submitOrder(options)) {
      const batchId = tenant === 'alpha' ? batchesOfAlpha[i % batchesOfAlpha.length] : undefined;
      ids.push((await submit(pipeline, n++, { tenant, ...(batchId ? { batchId } : {}) })).id);
    }
    pipeline.start();
    const jobs = await pipeline.waitForJobs(ids, { signal: AbortSignal.timeout(3_600_000) });
    await pipeline.stop();
    // Counted on the key's grant log in the database file (its copy, `keepGrantLog`): every token
    // given, once, at its time on the line.
    const db = openLocalDatabaseToRead(join(dir, 'opflow.db'));
    const grants = readKeptGrants(db).get(keyFingerprint(SANDBOX_API_KEY)) ?? [];
    db.close();
    const byId = new Map(jobs.map((job) => [job.id, job]));
    const tenantTokens = tokensOf(grants, (id) => byId.get(id)?.tenant);
    const batchTokens = tokensOf(grants, (id) => {
      const job = byId.get(id);
      return job?.tenant === 'alpha' ? job.batchId : undefined;
    });
    const firstToken = new Map<string, { at: number; flow: string }>();
    const firstBatchToken = new Map<string, { at: number; flow: string }>();
    for (const grant of grants) {
      const job = grant.by === undefined ? undefined : byId.get(grant.by);
      if (!job || grant.kind === 'refused' || firstToken.has(job.id)) continue;
      firstToken.set(job.id, { at: grant.tokenAt, flow: job.tenant });
      if (job.tenant === 'alpha' && job.batchId)
        firstBatchToken.set(job.id, { at: grant.tokenAt, flow: job.batchId });
    }
    return {
      label,
      spans: [
        ...spansOf(
          'tenants',
          tenantTokens,
          sharesOfWeights(Object.fromEntries(tenantsOfShares.map((t) => [t.tenant, t.weight]))),
          firstToken,
        ),
        ...spansOf(
          'alpha batches',
          batchTokens,
          sharesOfWeights(Object.fromEntries(batchesOfAlpha.map((batch) => [batch, 1]))),
          firstBatchToken,
        ),
      ],
      rate: rateCheck(pipeline, trace),
      tokens: tenantTokens.length,
      firstTokenAt: Math.min(...tenantTokens.map((token) => token.at)),
      lastTokenAt: Math.max(...tenantTokens.map((token) => token.at)),
    };
  } finally {
    await pipeline.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const pct = (x: number) => `${(100 * x).toFixed(1)} %`;

/** The columns of the shares tables, local and aws alike, so their rows compare. */
const shareHeaders = [
  'backend',
  'case',
  'span',
  'of',
  'windows',
  'fewest tokens',
  'flow',
  'configured',
  'least',
  'most',
  'worst miss (points)',
  'worst miss / configured',
  'worst window at',
];

/** A span's rows in the shares tables' columns (`shareHeaders`). */
function shareCells(backend: 'local' | 'aws', label: string, span: SpanShares): string[][] {
  return span.rows.map((row) => [
    backend,
    label,
    `${span.span} (${(span.spanMs / 1000).toFixed(0)} s)`,
    span.of,
    String(span.windows),
    String(span.fewestTokens),
    row.flow,
    pct(row.configured),
    pct(row.min),
    pct(row.max),
    pct(row.worstAbsolute),
    pct(row.worstRelative),
    `+${(row.worstAtMs / 1000).toFixed(1)} s`,
  ]);
}

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
      jobs: checksOf(options, options['aws-jobs'], weight),
    }));
    const run = spawnSync('npx', ['vitest', 'run', '--config', 'bench/fairness-aws.config.ts'], {
      stdio: ['ignore', 'ignore', 'inherit'],
      env: {
        ...process.env,
        OPFLOW_BENCH_FAIRNESS_OUT: out,
        OPFLOW_BENCH_FAIRNESS_TENANTS: JSON.stringify(tenants),
        OPFLOW_BENCH_FAIRNESS_QPS: String(options.limit),
        OPFLOW_BENCH_FAIRNESS_WINDOW_MS: String(windowMs),
        OPFLOW_BENCH_FAIRNESS_CASES: options.shares === 'both' ? 'on,off' : options.shares,
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
    for (const [label, on] of (
      [
        ['shares off', false],
        ['shares on', true],
      ] as const
    ).filter(([, on]) => options.shares === 'both' || (options.shares === 'on') === on)) {
      process.stderr.write(`  shares: ${label}...\n`);
      results.push(await sharesCase(options, label, on));
    }
    rates.push(...results.map((r) => ({ label: `shares: ${r.label}`, rate: r.rate })));
    let aws: AwsSharesResult[] = [];
    if (options.aws === 'on') {
      process.stderr.write('  shares on aws (vitest, the simulated deployment)...\n');
      aws = awsSharesCases(options);
    }
    const counts = tenantsOfShares.map((t) => checksOf(options, options.jobs, t.weight)).join(', ');
    out.push(
      '',
      `(b) three tenants on one key (weights 5, 3, 2: configured 50/30/20 %; ${counts} checks submitted ${options.order === 'alpha-first' ? 'in that order' : options.order === 'gamma-first' ? "gamma's first, then beta's, then alpha's" : 'one of each tenant in turn'}, alpha's in two batches a1/a2 taken in turn), each flow's share of the key's tokens (its grant log) in every sliding ${windowMs / 1000} s window: while every tenant has a check waiting to start (all waiting), and on to the first one's last token (all with work). The goal: within 10 % of the configured share, relative (worst miss / configured); the miss in points is beside it`,
      table(
        shareHeaders,
        results.flatMap((r) => r.spans.flatMap((span) => shareCells('local', r.label, span))),
        'end',
      ),
      '',
      table(
        ['case', 'tokens', "the key's last token (from its first)"],
        results.map((r) => [
          r.label,
          String(r.tokens),
          `+${((r.lastTokenAt - r.firstTokenAt) / 1000).toFixed(1)} s`,
        ]),
        'end',
      ),
    );
    if (aws.length > 0)
      out.push(
        '',
        `(b, aws) ${tenantsOfShares.map((t) => checksOf(options, options['aws-jobs'], t.weight)).join(', ')} patent counts (one call each) submitted through the job API in that order, on the simulated aws deployment: each tenant's share of the key's tokens (its grant log: the bucket item's versions on the table's stream) in every sliding ${windowMs / 1000} s window while every tenant has a job waiting for its token (all waiting: up to the first tenant's last token; each job makes one call), in the local table's columns`,
        table(
          shareHeaders,
          aws.flatMap((r) => shareCells('aws', r.label, { ...r, span: 'all waiting', of: 'tenants' })),
          'end',
        ),
        '',
        table(
          ['case', 'grants', 'calls', 'throttled', 'failed', 'bucket item (JSON)', 'wall time'],
          aws.map((r) => [
            r.label,
            String(r.grants),
            String(r.calls),
            String(r.throttled),
            String(r.failed),
            `${r.bucketBytes} B`,
            `${(r.wallMs / 1000).toFixed(0)} s`,
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
