/**
 * Filler benchmark ("a batch of 10,000"): what one round of the local budget filler (the
 * shared/engine/admission/budget-filler.ts) and its count of the unfinished work cost against a
 * SQLite job store holding a backlog of 300, 3,000 and 10,000 unfinished jobs.
 *
 *   npm run bench:filler -- [--jobs=300,3000,10000] [--rounds=40] [--dir=/dev/shm]
 *   npm run bench:filler -- --help
 *
 * Everything is real: the database file as `opflow run` opens it (WAL), the store, the work queue,
 * the limiter, the learned poll timing (SQLite, behind the pipeline's 1 s cache), the
 * novelty check workflow. Jobs are written in the states a long batch holds them in (see `states`),
 * with bodies of the size real ones reach (context, outputs, usage: about 2 to 3 KB).
 *
 * Two backlogs per size:
 * - `saturated`: a key at 5 calls/s with a line of new jobs due (the budget has no room: a round
 *   only re-aims); 40 % not started, 35 % polling, 10 % waiting their turn at a call, 15 % done;
 * - `roomy`: the same jobs on a key at 200 calls/s with nothing due (a round pulls polls forward
 *   into the spare calls: its moves are commits and messages, up to what the budget takes).
 * Per round the clock moves 250 ms, as the worker pool calls it, and the budget's calls of those
 * 250 ms are made (see `work`); every 2 s of clock time a round also counts the work (`scanWork`,
 * timed on its own too: `count`, the groups alone, as the filler reads them while every key finishes
 * jobs first; `+new`, with the oldest 1,000 new jobs, as it reads them near the end of a key's work).
 *
 * Printed side by side in one run, as ratios to a trivial baseline measured interleaved with the
 * rounds: reading one job by id (`store.get`, one indexed row parsed). Nothing here asserts a time.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { ulid } from 'ulid';
import * as z from 'zod';
import { createLocalBackend } from '../shared/backends/local/create-local-backend';
import {
  BudgetFiller,
  CachedPollStats,
  type EngineDeps,
  emptyUsage,
  type Job,
  pollStatsKey,
  type Workflow,
} from '../shared/engine';
import { ManualClock } from '../shared/runtime/time';
import { SeededRandom } from '../shared/sandbox/seeded';
import { noveltyCheck, workflows } from '../shared/workflows';
import { makeJob } from '../test/support/factories';

const optionsSchema = z.object({
  jobs: z
    .string()
    .transform((text) => text.split(',').map((part) => Number(part.trim())))
    .pipe(z.array(z.number().int().min(1).max(100_000)).min(1)),
  rounds: z.coerce.number().int().min(8).max(10_000),
  dir: z.string().min(1).optional(),
  help: z.boolean(),
});

const help = `npm run bench:filler -- [options]

Times one round of the budget filler (and its count of the unfinished work) against a SQLite store
holding a backlog of unfinished jobs, beside reading one job by id, and prints the ratios.

  --jobs=N[,N...]   backlog sizes (jobs in the store). Default: 300,3000,10000
  --rounds=N        filler rounds per backlog, at least 8 (the clock moves 250 ms a round). Default: 40
  --dir=PATH        where the databases are written (default: /dev/shm if present, else the temp folder)
  -h, --help        this text
`;

function readOptions() {
  const { values } = parseArgs({
    options: {
      jobs: { type: 'string', default: '300,3000,10000' },
      rounds: { type: 'string', default: '40' },
      dir: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  const parsed = optionsSchema.safeParse(values);
  if (!parsed.success) {
    console.error(`bench/filler.ts: ${z.prettifyError(parsed.error)}\n\n${help}`);
    process.exit(2);
  }
  return parsed.data;
}

const start = Date.UTC(2026, 10, 24, 1, 0, 0);
const scope = 'http://127.0.0.1:9/bench';
const key = 'sk-bench-filler';

/** A seeded generator (the sandbox's mulberry32): the same numbers on every run. */
function seeded(seed: number): () => number {
  const random = new SeededRandom(seed);
  return () => random.next();
}

/**
 * A job as a long batch holds it. `kind`: not started (QUEUED at the first step, due now or sent
 * back a little), polling a task (WAITING at a polled step, started 0 to 4 s ago, its poll aimed
 * 1 to 3 s after the start; one in ten still on the declared prior, 15 s out), waiting its turn at
 * a call (WAITING at a call step, due within a few seconds), or done.
 */
function jobOf(
  workflow: Workflow,
  index: number,
  kind: 'queued' | 'polling' | 'turn' | 'done',
  random: () => number,
  now: number,
  dueSpreadMs: number,
): Job {
  const polled = workflow.steps.filter((step) => step.poll && step.kind !== 'fetch');
  const calls = workflow.steps.filter((step) => !step.poll && step.kind !== 'fetch');
  const id = ulid(start - 3_600_000 + index);
  const base = makeJob({
    id,
    workflow: workflow.name,
    step: workflow.steps[0]?.name ?? 'submit',
    input: {
      inline: { text: `Invention disclosure ${index}: a hinge that folds twice and locks flat. `.repeat(24) },
    },
    label: `disclosure-${String(index).padStart(5, '0')}.txt`,
    nextRunAt: now,
    deadlineAt: now + 6 * 3_600_000,
    source: 'bulk',
    batchId: 'bench-batch',
    createdAt: start - 3_600_000,
    updatedAt: now,
  });
  const done = Math.floor(random() * 5);
  const progressed = (): Partial<Job> => ({
    version: 4 + done * 3,
    context: Object.fromEntries(
      Array.from({ length: done + 1 }, (_, i) => [`task_${i}`, `${ulid()}-${ulid()}`]),
    ),
    intents: Object.fromEntries(calls.slice(0, done + 1).map((step) => [step.name, 1])),
    outputs: Array.from({ length: (done + 1) * 2 }, (_, i) => `reports/${id}/steps/${i}-${ulid()}.json`),
    usage: { ...emptyUsage(), calls: 3 + done * 2, billedUnits: 2 + done, callMs: 900 * (done + 1) },
  });
  switch (kind) {
    case 'queued': {
      const nextRunAt = now - 60_000 + random() * (60_000 + dueSpreadMs);
      return { ...base, nextRunAt, ...(random() < 0.03 ? { tokenAt: nextRunAt } : {}) };
    }
    case 'polling': {
      const step = polled[Math.min(polled.length - 1, done)] ?? polled[0];
      const pollStartedAt = now - random() * 4_000;
      const prior = random() < 0.1;
      const polls = Math.floor(random() * 2);
      return {
        ...base,
        ...progressed(),
        status: 'WAITING',
        step: step?.name ?? base.step,
        polls,
        pollStartedAt,
        ...(polls > 0 ? { lastPolledAt: pollStartedAt + 800 } : {}),
        nextRunAt: Math.max(now + 300, pollStartedAt + (prior ? 15_000 : 1_000 + random() * 2_000)),
      };
    }
    case 'turn': {
      const step = calls[Math.min(calls.length - 1, done + 1)] ?? calls[0];
      return {
        ...base,
        ...progressed(),
        status: 'WAITING',
        step: step?.name ?? base.step,
        nextRunAt: now + random() * dueSpreadMs,
      };
    }
    case 'done':
      return { ...base, ...progressed(), status: 'SUCCEEDED', nextRunAt: now, finishedAt: now - 1_000 };
  }
}

interface Measured {
  jobs: number;
  backlog: 'saturated' | 'roomy';
  rounds: number;
  roundMs: number[];
  getMs: number[];
  countMs: number[];
  /** The count with the oldest 1,000 new jobs (what a key near the end of its work reads). */
  newMs: number[];
  moved: number;
  bodyBytes: number;
}

async function measure(dir: string, jobs: number, backlog: Measured['backlog'], rounds: number) {
  const clock = new ManualClock(start);
  const folder = mkdtempSync(join(dir, `opflow-bench-filler-${jobs}-`));
  const local = createLocalBackend({
    dbPath: join(folder, 'opflow.db'),
    outDir: join(folder, 'out'),
    clock,
    fallbackKey: key,
    env: {},
    ratePerSecond: backlog === 'saturated' ? 5 : 200,
  });
  try {
    const random = seeded(jobs * 7 + (backlog === 'roomy' ? 1 : 0));
    const now = clock.now();
    // Learned timing of every polled operation: tasks of 1 to 3 s, most near 1 s.
    for (const step of noveltyCheck.steps) {
      if (!step.poll || step.kind === 'fetch' || step.operation === undefined) continue;
      for (let i = 0; i < 40; i++) {
        const ms = 1_000 + 2_000 * random() ** 2;
        await local.pollStats.record(pollStatsKey(scope, step.operation), ms - 400, ms, now - 60_000 + i);
      }
    }
    const kinds =
      backlog === 'saturated'
        ? ([
            ['queued', 0.4],
            ['polling', 0.35],
            ['turn', 0.1],
            ['done', 0.15],
          ] as const)
        : ([
            ['polling', 0.85],
            ['done', 0.15],
          ] as const);
    let bodyBytes = 0;
    const insert = local.db.transaction((list: Job[]) => {
      for (const job of list) void local.store.create(job);
    });
    const list: Job[] = [];
    let index = 0;
    for (const [kind, share] of kinds) {
      const count = Math.round(jobs * share);
      for (let i = 0; i < count; i++) {
        const job = jobOf(
          noveltyCheck as Workflow,
          index++,
          kind,
          random,
          now,
          backlog === 'saturated' ? 30_000 : 0,
        );
        if (backlog === 'roomy' && job.status !== 'SUCCEEDED')
          job.nextRunAt = Math.max(job.nextRunAt, now + 2_000);
        bodyBytes += JSON.stringify(job).length;
        list.push(job);
      }
    }
    insert(list);
    const ids = list.map((job) => job.id);

    const notUsed = (what: string) =>
      new Proxy(
        {},
        {
          get: () => {
            throw new Error(`bench/filler.ts: the filler used ${what}`);
          },
        },
      );
    const deps: EngineDeps = {
      store: local.store,
      queue: local.queue,
      reports: local.reports,
      keys: local.keys,
      rateLimiter: local.rateLimiter,
      clock,
      random,
      client: notUsed('the upstream client') as EngineDeps['client'],
      workflows,
      writeReport: notUsed('the report writer') as EngineDeps['writeReport'],
      pollStats: new CachedPollStats(local.pollStats, { now: () => clock.now(), ttlMs: 1_000 }),
      pollStatsScope: scope,
    };
    const filler = new BudgetFiller(deps);
    const measured: Measured = {
      jobs,
      backlog,
      rounds,
      roundMs: [],
      getMs: [],
      countMs: [],
      newMs: [],
      moved: 0,
      bodyBytes: bodyBytes / list.length,
    };
    // Between rounds the key's budget is spent as workers would (not timed): its rate x 250 ms of
    // the due jobs, soonest first, each committed a step on (a new job starts its first task, a
    // poll finds its task running and polls again 0.5 to 2 s later, a poll found done or a call
    // starts the next task), so the backlog keeps its shape instead of draining.
    const polled = noveltyCheck.steps.filter((step) => step.poll && step.kind !== 'fetch');
    let credit = 0;
    const work = async () => {
      credit += (backlog === 'saturated' ? 5 : 200) * 0.25;
      const take = Math.floor(credit);
      credit -= take;
      const at = clock.now();
      for (const job of await local.store.listDue(at, take)) {
        const again = job.status === 'WAITING' && job.pollStartedAt !== undefined && random() < 0.5;
        const next = polled[Math.floor(random() * polled.length)] ?? polled[0];
        const moved: Job = again
          ? { ...job, polls: job.polls + 1, lastPolledAt: at, nextRunAt: at + 500 + random() * 1_500 }
          : {
              ...job,
              status: 'WAITING',
              step: next?.name ?? job.step,
              polls: 0,
              pollStartedAt: at,
              lastPolledAt: undefined,
              tokenAt: undefined,
              nextRunAt: at + 1_000 + random() * 2_000,
            };
        await local.store.commit({ ...moved, version: job.version + 1, updatedAt: at }, job.version);
      }
    };
    // One round unmeasured (statements prepared, caches filled), then the rounds.
    await filler.fill();
    for (let round = 0; round < rounds; round++) {
      clock.set(clock.now() + 250);
      await work();
      const id = ids[Math.floor(random() * ids.length)] ?? '';
      let t = performance.now();
      await local.store.get(id);
      measured.getMs.push(performance.now() - t);
      t = performance.now();
      const result = await filler.fill();
      measured.roundMs.push(performance.now() - t);
      measured.moved += result.pulled + result.probed + result.reaimed + (result.admitted ?? 0);
      if (round % 8 === 0 && local.store.scanWork) {
        t = performance.now();
        await local.store.scanWork({ queuedLimit: 0 });
        measured.countMs.push(performance.now() - t);
        t = performance.now();
        await local.store.scanWork({ queuedLimit: 1_000 });
        measured.newMs.push(performance.now() - t);
      }
    }
    return measured;
  } finally {
    local.close();
    rmSync(folder, { recursive: true, force: true });
  }
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length === 0
    ? Number.NaN
    : sorted.length % 2
      ? (sorted[mid] ?? 0)
      : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
}

function quantile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
}

async function main() {
  const options = readOptions();
  if (options.help) {
    process.stdout.write(help);
    return;
  }
  const dir = options.dir ?? (process.platform === 'linux' ? '/dev/shm' : tmpdir());
  const results: Measured[] = [];
  for (const jobs of options.jobs) {
    for (const backlog of ['saturated', 'roomy'] as const) {
      results.push(await measure(dir, jobs, backlog, options.rounds));
    }
  }
  const pad = (text: string | number, width: number) => String(text).padStart(width);
  const fixed = (value: number, digits = 2) => (Number.isFinite(value) ? value.toFixed(digits) : '-');
  console.log(
    `filler: one round (clock +250 ms) and one count of the work, ${options.rounds} rounds each; baseline = one store.get (same loop)`,
  );
  console.log(
    [
      pad('jobs', 6),
      pad('backlog', 9),
      pad('body B', 7),
      pad('get ms', 7),
      pad('round ms', 9),
      pad('p90 ms', 7),
      pad('round/get', 10),
      pad('count ms', 9),
      pad('count/get', 10),
      pad('+new ms', 8),
      pad('moved', 6),
    ].join('  '),
  );
  for (const r of results) {
    const get = median(r.getMs);
    const round = median(r.roundMs);
    const count = median(r.countMs);
    console.log(
      [
        pad(r.jobs, 6),
        pad(r.backlog, 9),
        pad(Math.round(r.bodyBytes), 7),
        pad(fixed(get, 3), 7),
        pad(fixed(round), 9),
        pad(fixed(quantile(r.roundMs, 0.9)), 7),
        pad(fixed(round / get, 0), 10),
        pad(fixed(count), 9),
        pad(fixed(count / get, 0), 10),
        pad(fixed(median(r.newMs)), 8),
        pad(r.moved, 6),
      ].join('  '),
    );
  }
}

await main();
