/**
 * What a novelty check costs on the aws backend, alone and in a backlog waiting for tokens, on the
 * upstream worlds of the throughput matrix (bench/throughput-worlds.ts: task-time family, the key's
 * limiter, its QPS): SQS messages, DynamoDB write and read units, Lambda invocations and GB-s, and
 * dollars per completed job at list prices, printed side by side with the ratio backlog / alone.
 *
 * Run: `npm run bench:aws-cost` (vitest runs this file: the simulated deployment of
 * test/e2e/aws/harness/aws-world.ts moves one fake clock, so a minute of polling takes no waiting).
 * Options through the environment:
 * - OPFLOW_BENCH_CELLS: the worlds, `family/limiter/qps` separated by commas (families uniform,
 *   lognormal, bimodal, pareto, drift; limiters sliding, bucket, fixed; any QPS), or `all` (the
 *   whole matrix: hours). Default: `defaultCells` below.
 * - OPFLOW_BENCH_JOBS: the backlog, submitted at once (default 30).
 * - OPFLOW_BENCH_ALONE: jobs run alone, one after another, on an idle key (default 10).
 * - OPFLOW_BENCH_WARMUP: novelty checks run alone first in both worlds of a cell, not counted, so
 *   both measure a deployment that has learned its upstream's task times (default 3; 0: cold, and
 *   the learned times are deleted before each job alone, so each starts from nothing as well).
 * - OPFLOW_BENCH_SEED: the sandbox's seed (default random, printed).
 * - OPFLOW_BENCH_ADMISSION: the step workers' OPFLOW_ADMISSION (default on, as deployed).
 *
 * Paired: both worlds of a cell start the sandbox with the same seed, and a task's duration is drawn
 * from the seed and its id (one seeded id sequence), so the warm-up draws the same tasks in both and
 * the jobs alone run the first tasks the backlog runs (all of them when OPFLOW_BENCH_ALONE equals
 * OPFLOW_BENCH_JOBS). Unpaired, the alone column of one world moved by 40 % between runs.
 *
 * What is counted (bench/aws-cost-accounting.ts): messages the step worker received (and, checked
 * equal, those the functions sent), DynamoDB units as DynamoDB Local reports them consumed, the step
 * worker's and sweeper's invocations and their durations on this machine (emulators in the same
 * process, so GB-s is high against a real deployment: compare ratios, not the absolute figure).
 * Per cell: the verdict on the goal (a backlog's messages per job at most 1.15 times alone's) and the
 * same per upstream call, which takes out the draw (bench/aws-cost-report.ts); a cell whose jobs did
 * not all succeed prints as FAILED with why, no figure, and the run goes on to the next cell.
 * A figure, not a test: nothing here asserts; the accounting is tested in
 * test/e2e/aws/aws-cost-accounting.test.ts.
 */
import { loadavg } from 'node:os';
import { it } from 'vitest';
import * as z from 'zod';
import { synthesizedDevStage } from '../test/e2e/aws/harness/template-synth';
import { type CostCounts, dollars, type FunctionMemory, gbSeconds } from './aws-cost-accounting';
import { type CellOutcome, goalSummary, verdictLine } from './aws-cost-report';
import { type CostWorld, measure } from './aws-cost-world';
import { table } from './throughput-setup';
import { type Family, families, type Limiter, limiters, matrixQps } from './throughput-worlds';

/**
 * The cells a default run measures: the three families whose shapes differ most (even, a wide
 * spread, a heavy tail) on the two limiters that bound a backlog differently (a sliding window; a
 * bucket whose burst lets a backlog's first calls through at once) at 5/s, plus the fastest key on
 * times that drift under load. Seven cells at 30 jobs take about half an hour on these machines.
 */
const defaultCells = [
  'uniform/sliding/5',
  'uniform/bucket/5',
  'lognormal/sliding/5',
  'lognormal/bucket/5',
  'pareto/sliding/5',
  'pareto/bucket/5',
  'drift/sliding/20',
].join(',');

const cellSchema = z
  .string()
  .regex(/^[a-z]+\/[a-z]+\/[0-9.]+$/, 'not family/limiter/qps')
  .transform((text, context) => {
    const [family, limiter, qps] = text.split('/') as [string, string, string];
    if (!(family in families)) context.addIssue({ code: 'custom', message: `no family ${family}` });
    if (!(limiter in limiters)) context.addIssue({ code: 'custom', message: `no limiter ${limiter}` });
    if (!(Number(qps) > 0)) context.addIssue({ code: 'custom', message: `QPS ${qps} not above 0` });
    return { family: family as Family, limiter: limiter as Limiter, qps: Number(qps) };
  });

/** The bench's options, from the environment (see the header); a bad value stops it, named. */
const options = (() => {
  const whole = (least: number) =>
    z.coerce.number({ error: 'not a number' }).int('not a whole number').min(least, `less than ${least}`);
  const parsed = z
    .object({
      OPFLOW_BENCH_CELLS: z
        .string()
        .default(defaultCells)
        .transform((text) =>
          text === 'all'
            ? Object.keys(families).flatMap((f) =>
                Object.keys(limiters).flatMap((l) => matrixQps.map((q) => `${f}/${l}/${q}`)),
              )
            : text.split(',').map((cell) => cell.trim()),
        )
        .pipe(z.array(cellSchema).min(1)),
      OPFLOW_BENCH_JOBS: whole(1).default(30),
      OPFLOW_BENCH_ALONE: whole(1).default(10),
      OPFLOW_BENCH_SEED: whole(0).optional(),
      OPFLOW_BENCH_WARMUP: whole(0).default(3),
      OPFLOW_BENCH_ADMISSION: z.enum(['on', 'off'], { error: 'neither on nor off' }).default('on'),
    })
    .safeParse(process.env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => {
      const name = String(issue.path[0]);
      return `${name}=${JSON.stringify(process.env[name])}: ${issue.message}`;
    });
    throw new Error(`bench/aws-cost.ts: ${problems.join('; ')} (see the options in the file's header)`);
  }
  return parsed.data;
})();
const seed = options.OPFLOW_BENCH_SEED ?? Math.floor(Math.random() * 1_000_000);

const per = (counts: CostCounts, value: number) => value / counts.jobs;

/** The rows of the table: per completed job, each from a world's counts. */
function rows(memory: FunctionMemory): [string, (c: CostCounts) => number, number][] {
  return [
    ['SQS messages', (c) => per(c, c.messagesReceived), 1],
    ['DynamoDB write units', (c) => per(c, c.writeUnits + c.conditionFailures), 1],
    ['DynamoDB read units', (c) => per(c, c.readUnits), 1],
    ['Lambda invocations', (c) => per(c, c.workerRuns + c.sweeperRuns), 1],
    ['Lambda GB-s', (c) => per(c, gbSeconds(c, memory)), 3],
    ['dollars (1000 jobs)', (c) => per(c, 1000 * dollars(c, memory)), 3],
    ['upstream calls', (c) => per(c, c.upstreamCalls), 1],
  ];
}

it(`aws cost per novelty check on the throughput matrix: ${options.OPFLOW_BENCH_ALONE} alone vs ${options.OPFLOW_BENCH_JOBS} at once`, async () => {
  const { stack } = synthesizedDevStage();
  const memory: FunctionMemory = {
    workerMb: stack.config.worker.memoryMb,
    sweeperMb: stack.config.sweeper.memoryMb,
  };
  const started = Date.now();
  const results: { label: string; alone: CostWorld; backlog: CostWorld }[] = [];
  // Every cell, measured or failed: a cell whose jobs did not all succeed has no figure, and the run goes on.
  const outcomes: CellOutcome[] = [];
  for (const cell of options.OPFLOW_BENCH_CELLS) {
    const world = {
      ...cell,
      seed,
      warmup: options.OPFLOW_BENCH_WARMUP,
      admission: options.OPFLOW_BENCH_ADMISSION,
    };
    const label = `${cell.family} ${cell.limiter} ${cell.qps}/s`;
    let alone: CostWorld;
    let backlog: CostWorld;
    try {
      alone = await measure({ ...world, jobs: options.OPFLOW_BENCH_ALONE, alone: true });
      backlog = await measure({ ...world, jobs: options.OPFLOW_BENCH_JOBS, alone: false });
    } catch (error) {
      const failed = { label, failed: error instanceof Error ? error.message : String(error) };
      outcomes.push(failed);
      process.stdout.write(`${verdictLine(failed)} (seed ${seed})\n`);
      continue;
    }
    results.push({ label, alone, backlog });
    outcomes.push({ label, alone: alone.counts, backlog: backlog.counts });
    // Each cell as it ends, so a run stopped halfway keeps what it measured.
    const rowsOfCell = rows(memory).map(([name, of, digits]) => {
      const [a, b] = [of(alone.counts), of(backlog.counts)];
      return `${name} ${a.toFixed(digits)} / ${b.toFixed(digits)} (${(b / a).toFixed(2)})`;
    });
    // With why each message and the writes by item, so a cell's printout stands on its own.
    process.stdout.write(
      `${label} (seed ${seed}; ${new Date().toISOString()}, load ${loadavg()[0]?.toFixed(1)}; alone ${alone.realSeconds.toFixed(0)} s, backlog ${backlog.realSeconds.toFixed(0)} s of real time): ${rowsOfCell.join('; ')}\n` +
        `  ${verdictLine({ label, alone: alone.counts, backlog: backlog.counts })}\n` +
        `  why each message, alone: ${outcomesPerJob(alone)}; at once: ${outcomesPerJob(backlog)}\n` +
        `  write units by item, alone: ${perJob(alone.writesByKind, alone.counts.jobs)}; at once: ${perJob(backlog.writesByKind, backlog.counts.jobs)}\n`,
    );
  }
  const fixed = (value: number, digits: number) => value.toFixed(digits);
  const body = results.flatMap(({ label, alone, backlog }) =>
    rows(memory).map(([name, of, digits], i) => {
      const [a, b] = [of(alone.counts), of(backlog.counts)];
      return [i === 0 ? label : '', name, fixed(a, digits), fixed(b, digits), fixed(b / a, 2)];
    }),
  );
  const ratioOf = (pick: (c: CostCounts) => number) =>
    results.map(
      ({ alone, backlog }) =>
        per(backlog.counts, pick(backlog.counts)) / per(alone.counts, pick(alone.counts)),
    );
  const messageRatios = ratioOf((c) => c.messagesReceived);
  const lines = [
    '',
    `aws cost per completed novelty check (${new Date().toISOString()}, load ${loadavg()[0]?.toFixed(1)}, ` +
      `admission ${options.OPFLOW_BENCH_ADMISSION}, sandbox seed ${seed}: OPFLOW_BENCH_SEED=${seed} draws the same tasks again; ` +
      `${options.OPFLOW_BENCH_WARMUP} warm-up jobs; ${((Date.now() - started) / 60_000).toFixed(1)} min)`,
    `worker ${memory.workerMb} MB, sweeper ${memory.sweeperMb} MB on arm64; GB-s from this machine's run times`,
    table(['world', 'per job', 'alone', `${options.OPFLOW_BENCH_JOBS} at once`, 'ratio'], body, 'start'),
    `messages backlog / alone: ${messageRatios.map((r) => r.toFixed(2)).join(', ')} (worst ${Math.max(...messageRatios).toFixed(2)}; goal at most 1.15)`,
    ...outcomes.map(verdictLine),
    goalSummary(outcomes),
    '',
    "why each message (per job: the step worker's outcome; parked jobs released and unparked):",
    ...results.flatMap(({ label, alone, backlog }) =>
      [alone, backlog].map((w) => `  ${label}, ${w === alone ? 'alone' : 'at once'}: ${outcomesPerJob(w)}`),
    ),
    'write units per job by item:',
    ...results.flatMap(({ label, alone, backlog }) =>
      [alone, backlog].map(
        (w) => `  ${label}, ${w === alone ? 'alone' : 'at once'}: ${perJob(w.writesByKind, w.counts.jobs)}`,
      ),
    ),
    '',
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
});

const perJob = (values: Record<string, number>, jobs: number) =>
  JSON.stringify(Object.fromEntries(Object.entries(values).map(([k, v]) => [k, +(v / jobs).toFixed(2)])));

const outcomesPerJob = (w: CostWorld) => perJob(w.outcomes, w.counts.jobs);
