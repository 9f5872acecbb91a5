/**
 * One measure of `npm run bench:aws-cost` (bench/aws-cost.ts): a simulated deployment
 * (test/e2e/aws/harness/aws-world.ts) whose sandbox draws the task times of one family and counts
 * the key's QPS with one limiter, behind counting proxies (bench/aws-cost-accounting.ts); novelty
 * checks run alone one after another, or all at once as a backlog; what they cost is counted.
 */
import { performance } from 'node:perf_hooks';
import { scanItems } from '../shared/backends/aws/dynamodb-pages';
import { isTerminal, type Job } from '../shared/engine/job-record';
import { AwsWorld, TENANT_KEY } from '../test/e2e/aws/harness/aws-world';
import {
  type CostCounts,
  type CountingProxy,
  type DynamoTally,
  dynamoCountingProxy,
  type SqsTally,
  sqsCountingProxy,
} from './aws-cost-accounting';
import { type Family, families, type Limiter, worldKey } from './throughput-worlds';

export interface MeasureOptions {
  family: Family;
  limiter: Limiter;
  /** The key's limit at the sandbox, and opflow's OPFLOW_QPS. */
  qps: number;
  seed: number;
  /** Novelty checks run alone first, not counted. */
  warmup: number;
  /** The step workers' OPFLOW_ADMISSION. */
  admission: 'on' | 'off';
  jobs: number;
  /** One after another on an idle key, or all at once. */
  alone: boolean;
}

export interface CostWorld {
  counts: CostCounts;
  /** What the step worker did with each message (`step done`: outcome, reason), and parked jobs released. */
  outcomes: Record<string, number>;
  /** Write units by the kind of item written. */
  writesByKind: Record<string, number>;
  /** Real seconds the measure took (warm-up included). */
  realSeconds: number;
  /** Simulated seconds: a backlog's makespan, or the jobs' mean time alone. */
  simulatedSeconds: number;
}

export const noveltyCheck = {
  workflow: 'novelty-check',
  input: {
    text: 'A foldable phone hinge with two rotation axes and a friction damper that holds any opening angle.',
  },
};

/** Invocations of a function and the real milliseconds they took. */
interface Timed {
  runs: number;
  ms: number;
  records: number;
}

/** The deployment of a measure, with its counters. */
export interface CountedWorld {
  world: AwsWorld;
  dynamo: CountingProxy<DynamoTally>;
  sqs: CountingProxy<SqsTally>;
  worker: Timed;
  sweeper: Timed;
  stop(): Promise<void>;
}

/** Starts a simulated deployment on the world's upstream, every function's DynamoDB and SQS calls counted. */
export async function countedWorld(options: {
  family: Family;
  limiter: Limiter;
  qps: number;
  seed: number;
  admission: 'on' | 'off';
}): Promise<CountedWorld> {
  let dynamo: CountingProxy<DynamoTally> | undefined;
  let sqs: CountingProxy<SqsTally> | undefined;
  const worker: Timed = { runs: 0, ms: 0, records: 0 };
  const sweeper: Timed = { runs: 0, ms: 0, records: 0 };
  const { qps: _qps, key: _key, ...limiter } = worldKey(TENANT_KEY, options.limiter, options.qps);
  const world = await AwsWorld.start({
    workers: 2,
    keyQps: options.qps,
    keyLimiter: limiter,
    sandbox: { seed: options.seed, taskDurations: {}, defaultTaskDuration: families[options.family] },
    env: async (env) => {
      dynamo = await dynamoCountingProxy(env.AWS_ENDPOINT_URL_DYNAMODB as string);
      sqs = await sqsCountingProxy(env.AWS_ENDPOINT_URL_SQS as string);
      return {
        ...env,
        OPFLOW_QPS: String(options.qps),
        OPFLOW_ADMISSION: options.admission,
        AWS_ENDPOINT_URL_DYNAMODB: dynamo.url,
        AWS_ENDPOINT_URL_SQS: sqs.url,
      };
    },
    workerFactory: async (w) => {
      const { handler } = await w.bundles.load<{ handler: Parameters<typeof Object>[0] }>('worker');
      const run = handler as (event: { Records: unknown[] }, context: unknown) => Promise<never>;
      return (async (event: { Records: unknown[] }, context: unknown) => {
        worker.runs += 1;
        worker.records += event.Records.length;
        const start = performance.now();
        try {
          return await run(event, context);
        } finally {
          worker.ms += performance.now() - start;
        }
      }) as never;
    },
  });
  const sweep = world.sweeper;
  world.sweeper = async (event, context) => {
    sweeper.runs += 1;
    const start = performance.now();
    try {
      return await sweep(event, context);
    } finally {
      sweeper.ms += performance.now() - start;
    }
  };
  return {
    world,
    dynamo: dynamo!,
    sqs: sqs!,
    worker,
    sweeper,
    async stop() {
      await world.stop();
      await Promise.all([dynamo?.close(), sqs?.close()]);
    },
  };
}

/** Everything counted so far, as one object (to subtract the warm-up). */
export function countsOf(counted: CountedWorld, jobs: number, finished: readonly Job[]): CostCounts {
  const { dynamo, sqs, worker, sweeper } = counted;
  return {
    jobs,
    messagesReceived: worker.records,
    messagesSent: sqs.tally.messagesSent,
    sqsRequests: Object.values(sqs.tally.byAction).reduce((a, b) => a + b, 0),
    writeUnits: dynamo.tally.writes.total,
    indexWriteUnits: Object.values(dynamo.tally.writes.indexes).reduce((a, b) => a + b, 0),
    conditionFailures: dynamo.tally.conditionFailures,
    readUnits: dynamo.tally.reads.total,
    workerRuns: worker.runs,
    sweeperRuns: sweeper.runs,
    workerMs: worker.ms,
    sweeperMs: sweeper.ms,
    upstreamCalls: finished.reduce((sum, job) => sum + (job.usage?.calls ?? 0), 0),
  };
}

function minus<T extends object>(after: T, before: T): T {
  return Object.fromEntries(
    Object.entries(after).map(([key, value]) => [
      key,
      typeof value === 'number' ? value - ((before as Record<string, number>)[key] ?? 0) : value,
    ]),
  ) as T;
}

/** One job alone on an idle key: submitted a minute after the last one ended (its bucket full again). */
export async function runAlone(world: AwsWorld, label: string): Promise<{ job: Job; ms: number }> {
  world.advanceTo(world.now() + 60_000);
  const started = world.now();
  const id = await world.submit({ ...noveltyCheck, label });
  const [job] = await world.settle([id], { maxRounds: 20_000, drain: true });
  return { job: job!, ms: world.now() - started };
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

/** What the step worker did with each message since log line `from`, counted by outcome. */
export function outcomesSince(world: AwsWorld, from: number): Record<string, number> {
  const outcomes: Record<string, number> = {};
  const add = (name: string, n: number) => {
    outcomes[name] = (outcomes[name] ?? 0) + n;
  };
  for (const line of world.logLines().slice(from)) {
    if (line.message === 'parked jobs released' && typeof line.released === 'number')
      add('(released by a round)', line.released);
    if (line.message === 'sweep done' && typeof line.nudged === 'number' && line.nudged > 0)
      add('(unparked by the sweeper)', line.nudged);
    if (line.message !== 'step done') continue;
    const name = [
      line.outcome,
      line.reason,
      line.reserved === true ? 'reserved' : undefined,
      line.parked === true ? 'parked' : undefined,
    ]
      .filter((part) => typeof part === 'string')
      .join(' ');
    add(name, 1);
  }
  return outcomes;
}

/**
 * Delivers work until every job of a backlog has ended and the queue is empty: AwsWorld.settle with
 * `drain`, round for round (the same deliveries, clock jumps and sweeper minutes, on the world's own
 * sweep schedule), but without reading every job from the table each round. That read made a backlog
 * quadratic (300 jobs: about 4,500 rounds of 300 reads from DynamoDB Local, the bulk of the bench's
 * time); here a job counts as ended from the step worker's `job succeeded` / `job failed` line, and
 * the table is read only when the queue is empty, for the jobs still open (a job could end without
 * such a line). The bench's own reads go to the emulator directly, so they were never counted.
 */
export async function settleBacklog(
  world: AwsWorld,
  ids: readonly string[],
  maxRounds = 1_000_000,
): Promise<Job[]> {
  // The world's sweep schedule (AwsWorld.settle keeps it there), so both loops sweep on the same minutes.
  const schedule = world as unknown as { nextSweepAt: number };
  const open = new Set(ids);
  let read = 0;
  const endedByLines = () => {
    for (; read < world.lines.length; read++) {
      const line = world.lines[read]!;
      if (
        (line.message === 'job succeeded' || line.message === 'job failed') &&
        typeof line.jobId === 'string'
      )
        open.delete(line.jobId);
    }
    return open.size === 0;
  };
  const readAll = async () => (await Promise.all(ids.map((id) => world.store.get(id)))) as Job[];
  for (let round = 0; round < maxRounds; round++) {
    const queue = world.queueState();
    if (queue.ready > 0) {
      await world.deliverOnce();
      continue;
    }
    let settled = endedByLines();
    if (queue.total === 0) {
      for (const job of await Promise.all([...open].map((id) => world.store.get(id))))
        if (job && (isTerminal(job.status) || job.status === 'AWAITING_INPUT')) open.delete(job.id);
      settled = open.size === 0;
      if (settled) return readAll();
    }
    const next = Math.min(queue.nextAt, settled ? Number.POSITIVE_INFINITY : schedule.nextSweepAt);
    if (!Number.isFinite(next)) return readAll();
    world.advanceTo(next);
    if (!settled && world.now() >= schedule.nextSweepAt) {
      await world.sweep();
      schedule.nextSweepAt = world.now() + 60_000;
    }
  }
  throw new Error(
    `the backlog did not settle in ${maxRounds} rounds: ${open.size} of ${ids.length} jobs still open`,
  );
}

/** Runs `jobs` novelty checks on a fresh deployment of the world (after the warm-up) and counts their cost. */
export async function measure(options: MeasureOptions): Promise<CostWorld> {
  const realStart = performance.now();
  const counted = await countedWorld(options);
  const { world } = counted;
  try {
    for (let i = 0; i < options.warmup; i++) await runAlone(world, `warm-up-${i}.md`);
    const before = countsOf(counted, 0, []);
    const writesBefore = { ...counted.dynamo.tally.writes.byKind };
    const linesBefore = world.logLines().length;
    const finished: Job[] = [];
    let simulatedMs = 0;
    if (options.alone) {
      for (let i = 0; i < options.jobs; i++) {
        // Cold (no warm-up): each job alone starts from nothing learned, as the backlog's jobs do.
        if (options.warmup === 0) await forgetPollTiming(world);
        const { job, ms } = await runAlone(world, `hinge-${i}.md`);
        finished.push(job);
        simulatedMs += ms / options.jobs;
      }
    } else {
      const started = world.now();
      const ids: string[] = [];
      for (let i = 0; i < options.jobs; i++)
        ids.push(await world.submit({ ...noveltyCheck, label: `hinge-${i}.md` }));
      finished.push(...(await settleBacklog(world, ids)));
      simulatedMs = world.now() - started;
    }
    const failed = finished.filter((job) => job.status !== 'SUCCEEDED');
    if (failed.length > 0) {
      throw new Error(
        `${failed.length} of ${options.jobs} jobs did not succeed: ${failed[0]?.lastError?.message ?? ''}`,
      );
    }
    const counts = minus(countsOf(counted, options.jobs, finished), { ...before, jobs: 0, upstreamCalls: 0 });
    // Every message sent is received once at least (the queue is drained); more is a redelivery.
    if (counts.messagesReceived < counts.messagesSent) {
      throw new Error(
        `the functions sent ${counts.messagesSent} messages and the step worker received only ${counts.messagesReceived}`,
      );
    }
    return {
      counts,
      outcomes: outcomesSince(world, linesBefore),
      writesByKind: minus(counted.dynamo.tally.writes.byKind, writesBefore),
      realSeconds: (performance.now() - realStart) / 1000,
      simulatedSeconds: simulatedMs / 1000,
    };
  } finally {
    await counted.stop();
  }
}
