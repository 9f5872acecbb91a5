/**
 * What a novelty check costs on the aws backend, without and with a backlog waiting for tokens
 * (parked for admission), measured on the emulators: SQS messages, step-worker Lambda runs and DynamoDB write
 * units per completed job, printed side by side with their ratio.
 *
 * Run: `npm run bench:aws-cost` (vitest runs this file: the simulated deployment of
 * test/e2e/aws/harness/aws-world.ts moves one fake clock, so a minute of polling takes no waiting).
 * Options through the environment: OPFLOW_BENCH_JOBS (backlog size, default 20), OPFLOW_BENCH_QPS
 * (the key's calls per second, opflow's and the sandbox's, default 2), OPFLOW_BENCH_ALONE (jobs
 * measured alone, one after another, default as many as the backlog: the "alone" column is their
 * mean), OPFLOW_BENCH_SEED (the sandbox's seed, default random, printed), OPFLOW_BENCH_WARMUP
 * (novelty checks run alone before the warm measures, default 5), OPFLOW_BENCH_ADMISSION (the step
 * workers' OPFLOW_ADMISSION, default on as deployed; off: jobs waiting for a token are sent back
 * to ask again, the behaviour before admission).
 *
 * Cold and warm: a deployment learns its upstream's task times (`POLLSTAT#` items) and keeps them.
 * A backlog on a fresh deployment polls on the workflow's declared schedule until its first tasks
 * finish; one on a deployment that has run novelty checks before polls on what it learned. Each is
 * compared with jobs alone in the same state: cold, the learned timing is deleted before each job
 * alone; warm, both run after the same warm-up jobs.
 *
 * Paired: every world of a run starts the sandbox with the same seed, and a novelty check's task
 * durations are drawn from the seed and its task's id (the sandbox's seeded id sequence, one id per
 * job). So the jobs alone and the backlog's jobs run the same set of tasks, and a ratio measures
 * what the backlog changes, not which tasks the run happened to draw (unpaired, the alone column
 * went from 14.3 to 20.0 calls per job between runs of the same code).
 *
 * - Messages: the work messages the step worker received (every send of the api, the worker and the
 *   sweeper is received once: the bench's workers never let a visibility timeout lapse).
 * - Lambda runs: step-worker invocations (SQS batches of up to 10) and sweeper runs, apart.
 * - Write units: what DynamoDB Local reports as consumed (ReturnConsumedCapacity INDEXES, added by
 *   a proxy in front of it) for every write of every function, indexes included.
 * A figure, not a test: nothing here asserts; the rule it measures is tested in
 * test/unit/engine/backlog.test.ts.
 */
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { it } from 'vitest';
import * as z from 'zod';
import { scanItems } from '../shared/backends/aws/dynamodb-pages';
import { AwsWorld } from '../test/e2e/aws/harness/aws-world';

/** The bench's options, from the environment (see the header); a bad value stops it, named. */
const options = (() => {
  const whole = (least: number) =>
    z.coerce.number({ error: 'not a number' }).int('not a whole number').min(least, `less than ${least}`);
  const parsed = z
    .object({
      OPFLOW_BENCH_JOBS: whole(1).default(20),
      OPFLOW_BENCH_QPS: z.coerce.number({ error: 'not a number' }).positive('not above 0').default(2),
      OPFLOW_BENCH_ALONE: whole(1).optional(),
      OPFLOW_BENCH_SEED: whole(0).optional(),
      OPFLOW_BENCH_WARMUP: whole(1).default(5),
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
const backlogJobs = options.OPFLOW_BENCH_JOBS;
const qps = options.OPFLOW_BENCH_QPS;
/**
 * Jobs measured alone, one after another (default: as many as the backlog, so both draw the same
 * tasks); the per-job figure alone is their mean.
 */
const aloneJobs = options.OPFLOW_BENCH_ALONE ?? backlogJobs;
/** The sandbox's seed in every world of the run (ids, so task durations); printed. */
const seed = options.OPFLOW_BENCH_SEED ?? Math.floor(Math.random() * 1_000_000);
/** Novelty checks run alone before the warm measures, not counted. */
const warmupJobs = options.OPFLOW_BENCH_WARMUP;
/** The step workers' admission (`OPFLOW_ADMISSION`; on, as deployed, unless set). */
const admission = options.OPFLOW_BENCH_ADMISSION;

const novelty = {
  workflow: 'novelty-check',
  input: {
    text: 'A foldable phone hinge with two rotation axes and a friction damper that holds any opening angle.',
  },
};

interface Units {
  total: number;
  table: number;
  indexes: Record<string, number>;
  writes: number;
  /** Units by the kind of item written (the prefix of its PK: JOB, HIST, RATE, WAITKEYS, ...). */
  byKind: Record<string, number>;
}

/** The kind of item a write request writes: the prefix of its (first) item's PK. */
function kindOf(request: Record<string, unknown>): string {
  const first = (
    request.TransactItems as Record<string, { Item?: unknown; Key?: unknown }>[] | undefined
  )?.[0];
  const part = first ? Object.values(first)[0] : request;
  const pk = ((part?.Item ?? part?.Key) as { PK?: { S?: string } } | undefined)?.PK?.S;
  return pk ? (pk.split('#')[0] ?? 'other') : 'other';
}

const writeTargets = /\.(PutItem|UpdateItem|DeleteItem|TransactWriteItems|BatchWriteItem)$/;

/** An HTTP proxy in front of DynamoDB Local that asks every write what it consumed, and sums it. */
async function capacityProxy(target: string): Promise<{ url: string; units: Units; close(): Promise<void> }> {
  const units: Units = { total: 0, table: 0, indexes: {}, writes: 0, byKind: {} };
  const upstream = new URL(target);
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      let body = Buffer.concat(chunks);
      const write = writeTargets.test(String(req.headers['x-amz-target'] ?? ''));
      let kind = 'other';
      if (write) {
        const parsed = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
        kind = kindOf(parsed);
        parsed.ReturnConsumedCapacity = 'INDEXES';
        body = Buffer.from(JSON.stringify(parsed));
      }
      const forward = httpRequest(
        {
          host: upstream.hostname,
          port: upstream.port,
          method: req.method,
          path: req.url,
          headers: { ...req.headers, 'content-length': String(body.length), host: upstream.host },
        },
        (answer) => {
          const parts: Buffer[] = [];
          answer.on('data', (chunk: Buffer) => parts.push(chunk));
          answer.on('end', () => {
            const text = Buffer.concat(parts);
            if (write && (answer.statusCode ?? 500) < 300) {
              const consumed = (JSON.parse(text.toString('utf8')) as { ConsumedCapacity?: unknown })
                .ConsumedCapacity;
              units.writes += 1;
              for (const entry of (Array.isArray(consumed) ? consumed : consumed ? [consumed] : []) as {
                CapacityUnits?: number;
                Table?: { CapacityUnits?: number };
                GlobalSecondaryIndexes?: Record<string, { CapacityUnits?: number }>;
              }[]) {
                units.total += entry.CapacityUnits ?? 0;
                units.byKind[kind] = (units.byKind[kind] ?? 0) + (entry.CapacityUnits ?? 0);
                units.table += entry.Table?.CapacityUnits ?? 0;
                for (const [name, index] of Object.entries(entry.GlobalSecondaryIndexes ?? {})) {
                  units.indexes[name] = (units.indexes[name] ?? 0) + (index.CapacityUnits ?? 0);
                }
              }
            }
            res.writeHead(answer.statusCode ?? 500, answer.headers);
            res.end(text);
          });
        },
      );
      forward.on('error', (error) => {
        res.writeHead(502);
        res.end(String(error));
      });
      forward.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    units,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

interface Cost {
  jobs: number;
  messages: number;
  workerRuns: number;
  sweeps: number;
  writeUnits: number;
  indexUnits: Record<string, number>;
  unitsByKind: Record<string, number>;
  upstreamCalls: number;
  simulatedSeconds: number;
  /** What the step worker did with each message ('step done' log lines: outcome, reason). */
  outcomes: Record<string, number>;
}

/** How much the deployment has learned of the novelty check's task times when the measure starts. */
type Learned = 'cold' | 'warm';

/** The counters that grow with every job, read before the measured jobs to subtract (warm-up). */
function snapshot(units: Units, messages: number, workerRuns: number, lines: number, sweeps: number) {
  return { units: structuredClone(units), messages, workerRuns, lines, sweeps };
}

function minus(after: Record<string, number>, before: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(after).map(([key, value]) => [key, value - (before[key] ?? 0)]));
}

/**
 * Runs `jobs` novelty checks against a key of `qps` calls per second: submitted at once (a
 * backlog), or `alone`, one after another. `cold`: a fresh deployment, nothing learned of the task
 * times (alone, the learned timing is deleted before each job, so each is a first job too). `warm`:
 * `warmupJobs` novelty checks ran alone first (not counted), as a deployment that has run some
 * keeps what it learned (its `POLLSTAT#` items).
 */
async function measure(jobs: number, alone: boolean, learned: Learned): Promise<Cost> {
  let proxy: Awaited<ReturnType<typeof capacityProxy>> | undefined;
  let messages = 0;
  let workerRuns = 0;
  const world = await AwsWorld.start({
    workers: 2,
    keyQps: qps,
    sandbox: { seed },
    env: async (env) => {
      proxy = await capacityProxy(env.AWS_ENDPOINT_URL_DYNAMODB as string);
      return {
        ...env,
        OPFLOW_QPS: String(qps),
        OPFLOW_ADMISSION: admission,
        AWS_ENDPOINT_URL_DYNAMODB: proxy.url,
      };
    },
    workerFactory: async (w) => {
      const { handler } = await w.bundles.load<{ handler: Parameters<typeof Object>[0] }>('worker');
      const worker = handler as (event: { Records: unknown[] }, context: unknown) => Promise<never>;
      return (async (event: { Records: unknown[] }, context: unknown) => {
        workerRuns += 1;
        messages += event.Records.length;
        return worker(event, context);
      }) as never;
    },
  });
  // One job alone on the key: submitted once the one before has finished and a minute more has
  // passed (its bucket full again), so none waits for another's token.
  const runAlone = async (label: string) => {
    world.advanceTo(world.now() + 60_000);
    const started = world.now();
    const id = await world.submit({ ...novelty, label });
    const done = await world.settle([id], { maxRounds: 20_000, drain: true });
    return { done, ms: world.now() - started };
  };
  try {
    for (let i = 0; i < (learned === 'warm' ? warmupJobs : 0); i++) await runAlone(`warm-up-${i}.md`);
    const before = snapshot(proxy!.units, messages, workerRuns, world.logLines().length, world.sweeps);
    let simulatedMs = 0;
    const finished: Awaited<ReturnType<AwsWorld['settle']>> = [];
    if (alone) {
      for (let i = 0; i < jobs; i++) {
        if (learned === 'cold') await forgetPollTiming(world);
        const { done, ms } = await runAlone(`hinge-${i}.md`);
        finished.push(...done);
        simulatedMs += ms;
      }
    } else {
      const started = world.now();
      const ids: string[] = [];
      for (let i = 0; i < jobs; i++) {
        ids.push(await world.submit({ ...novelty, label: `hinge-${i}.md` }));
      }
      finished.push(...(await world.settle(ids, { maxRounds: 20_000, drain: true })));
      simulatedMs = world.now() - started;
    }
    const failed = finished.filter((job) => job.status !== 'SUCCEEDED');
    if (failed.length > 0) {
      throw new Error(`${failed.length} of ${jobs} jobs did not succeed: ${failed[0]?.lastError ?? ''}`);
    }
    const units = proxy!.units;
    const outcomes: Record<string, number> = {};
    for (const line of world.logLines().slice(before.lines)) {
      // Parked jobs released by the step workers' rounds, and unparked by the sweeper.
      if (line.message === 'parked jobs released' && typeof line.released === 'number')
        outcomes['(released by a round)'] = (outcomes['(released by a round)'] ?? 0) + line.released;
      if (line.message === 'sweep done' && typeof line.nudged === 'number' && line.nudged > 0)
        outcomes['(unparked by the sweeper)'] = (outcomes['(unparked by the sweeper)'] ?? 0) + line.nudged;
      if (line.message !== 'step done') continue;
      const name = [
        line.outcome,
        line.reason,
        line.reserved === true ? 'reserved' : undefined,
        line.parked === true ? 'parked' : undefined,
      ]
        .filter((part) => typeof part === 'string')
        .join(' ');
      outcomes[name] = (outcomes[name] ?? 0) + 1;
    }
    return {
      outcomes,
      jobs,
      messages: messages - before.messages,
      workerRuns: workerRuns - before.workerRuns,
      sweeps: world.sweeps - before.sweeps,
      writeUnits: units.total - before.units.total,
      indexUnits: minus(units.indexes, before.units.indexes),
      unitsByKind: minus(units.byKind, before.units.byKind),
      upstreamCalls: finished.reduce((sum, job) => sum + (job.usage?.calls ?? 0), 0),
      // A backlog's makespan; for jobs one at a time, the mean of their times.
      simulatedSeconds: simulatedMs / 1000 / (alone ? jobs : 1),
    };
  } finally {
    await world.stop();
    await proxy?.close();
  }
}

/** Deletes the learned task times (`POLLSTAT#` items), as in a deployment that has run nothing yet. */
async function forgetPollTiming(world: AwsWorld): Promise<void> {
  const { DeleteCommand } = await import('@aws-sdk/lib-dynamodb');
  const client = world.emulators.clients.documents;
  const TableName = world.env.OPFLOW_TABLE_NAME as string;
  const keys = await scanItems(client, {
    TableName,
    FilterExpression: 'begins_with(PK, :prefix)',
    ExpressionAttributeValues: { ':prefix': 'POLLSTAT#' },
    ProjectionExpression: 'PK, SK',
  });
  for (const key of keys) await client.send(new DeleteCommand({ TableName, Key: key }));
}

const per = (cost: Cost, value: number) => value / cost.jobs;

it(`aws cost per novelty check: ${aloneJobs} jobs alone vs a backlog of ${backlogJobs} at ${qps} calls/s, cold and warm`, async () => {
  const cold = {
    alone: await measure(aloneJobs, true, 'cold'),
    backlog: await measure(backlogJobs, false, 'cold'),
  };
  const warm = {
    alone: await measure(aloneJobs, true, 'warm'),
    backlog: await measure(backlogJobs, false, 'warm'),
  };
  const rows: [string, (cost: Cost) => number][] = [
    ['SQS messages', (c) => per(c, c.messages)],
    ['step-worker runs', (c) => per(c, c.workerRuns)],
    ['DynamoDB write units', (c) => per(c, c.writeUnits)],
    [
      '  of which indexes',
      (c) =>
        per(
          c,
          Object.values(c.indexUnits).reduce((a, b) => a + b, 0),
        ),
    ],
    ['upstream calls', (c) => per(c, c.upstreamCalls)],
    // A job's calls vary with its task times (polls): per call, that part is gone.
    ['messages per call', (c) => c.messages / c.upstreamCalls],
    ['write units per call', (c) => c.writeUnits / c.upstreamCalls],
    ['simulated seconds', (c) => c.simulatedSeconds],
  ];
  const cell = (value: number, width: number, digits = 1) => value.toFixed(digits).padStart(width);
  const pairs = [
    ['cold', cold],
    ['warm', warm],
  ] as const;
  const lines = [
    '',
    `aws cost per completed novelty check (${new Date().toISOString()}, load ${(await import('node:os')).loadavg()[0]?.toFixed(1)}, admission ${admission}, sandbox seed ${seed}: OPFLOW_BENCH_SEED=${seed} draws the same tasks again)`,
    `cold: nothing learned of the task times (alone: forgotten before each job); warm: after ${warmupJobs} novelty checks alone`,
    `${''.padEnd(22)}${'cold'.padStart(28)}${'warm'.padStart(28)}`,
    `${'per job'.padEnd(22)}${'alone'.padStart(10)}${`${backlogJobs} jobs`.padStart(10)}${'ratio'.padStart(8)}` +
      `${'alone'.padStart(10)}${`${backlogJobs} jobs`.padStart(10)}${'ratio'.padStart(8)}`,
    ...rows.map(([name, of]) => {
      const [a, b, c, d] = [of(cold.alone), of(cold.backlog), of(warm.alone), of(warm.backlog)];
      return `${name.padEnd(22)}${cell(a, 10)}${cell(b, 10)}${cell(b / a, 8, 2)}${cell(c, 10)}${cell(d, 10)}${cell(d / c, 8, 2)}`;
    }),
    `sweeper runs (cold, warm): ${cold.alone.sweeps} / ${cold.backlog.sweeps}, ${warm.alone.sweeps} / ${warm.backlog.sweeps}; ` +
      `bound of the backlog ${((warm.backlog.upstreamCalls / qps) | 0).toString()} s (its upstream calls / qps)`,
    ...pairs.flatMap(([label, pair]) =>
      [pair.alone, pair.backlog].map(
        (cost) =>
          `${label}, messages per job by outcome, ${cost === pair.alone ? `${cost.jobs} alone` : `${cost.jobs} at once`}: ${JSON.stringify(Object.fromEntries(Object.entries(cost.outcomes).map(([k, v]) => [k, +(v / cost.jobs).toFixed(2)])))}`,
      ),
    ),
    ...pairs.flatMap(([label, pair]) =>
      [pair.alone, pair.backlog].map(
        (cost) =>
          `${label}, write units per job by item, ${cost === pair.alone ? `${cost.jobs} alone` : `${cost.jobs} at once`}: ${JSON.stringify(Object.fromEntries(Object.entries(cost.unitsByKind).map(([k, v]) => [k, +(v / cost.jobs).toFixed(1)])))}`,
      ),
    ),
    '',
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
});
