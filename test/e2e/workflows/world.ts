/**
 * The world of the workflow end-to-end tests: the sandbox and the local runtime (SQLite job store
 * and queue, reports on disk, the real Open Platform client over HTTP) sharing one manual clock that
 * jumps whenever every worker is idle, so hours of upstream work pass in milliseconds.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  answerSelection,
  type Job,
  reportKeys,
  type SelectionPolicy,
  silentLogger,
  submitJob,
} from '../../../shared/engine';
import { createLocalPipeline, type LocalPipeline } from '../../../shared/runtime/local/pipeline';
import { ManualClock, skippingTime } from '../../../shared/runtime/time';
import { type Sandbox, type SandboxOptions, startSandbox } from '../../../shared/sandbox';
import { workflows } from '../../../shared/workflows';

export interface JobReport {
  markdown: string;
  html: string;
  result: {
    steps: Record<string, unknown>;
    attachments: { fileName: string; contentType: string }[];
    summary?: string;
    selections: Record<string, string[]>;
    usage: { calls: number; billedUnits: number; tokens: number; taskCost?: number };
  };
}

export interface World {
  clock: ManualClock;
  sandbox: Sandbox;
  pipeline: LocalPipeline;
  /** Submit a job and wait until it is settled (finished, or waiting for a selection). */
  run(workflow: string, input: unknown, selection?: SelectionPolicy): Promise<Job>;
  /** Answer a job's selection and wait until it is settled again. */
  answer(jobId: string, chosen: string[]): Promise<Job>;
  report(jobId: string): Promise<JobReport>;
  /** An attachment's bytes, as kept in the report store. */
  attachment(jobId: string, fileName: string): Promise<Uint8Array | undefined>;
  close(): Promise<void>;
}

export interface WorldOptions {
  /** Where the clock starts (default: ManualClock's). */
  startAt?: number;
  /** A report folder the caller owns (kept on close); default: a fresh one, removed on close. */
  outDir?: string;
}

export async function startWorld(
  sandboxOptions: SandboxOptions = {},
  options: WorldOptions = {},
): Promise<World> {
  const clock = options.startAt === undefined ? new ManualClock() : new ManualClock(options.startAt);
  const sandbox = await startSandbox({ now: () => clock.now(), streamChunkDelayMs: 0, ...sandboxOptions });
  const outDir = options.outDir ?? mkdtempSync(join(tmpdir(), 'opflow-e2e-workflows-'));
  const pipeline = await createLocalPipeline({
    // A loopback base URL without a key: the sandbox's well-known key is used.
    config: { qps: 1_000, concurrency: 4, dbPath: ':memory:', outDir, baseUrl: sandbox.url },
    workflows,
    env: {},
    time: skippingTime(clock),
    random: () => 0.5,
    announce: () => {},
    log: silentLogger,
  });
  const { deps } = pipeline;

  // A waiting selection holds no message, so an idle pool would race the clock to the deadline:
  // the pool runs only while a test waits for jobs.
  const settle = async (id: string) => {
    pipeline.start();
    try {
      const [job] = await pipeline.waitForJobs([id]);
      return job!;
    } finally {
      await pipeline.stop();
    }
  };

  const text = async (key: string) => {
    const stored = await deps.reports.get(key);
    if (!stored) throw new Error(`nothing stored at ${key}`);
    return Buffer.from(stored.body).toString('utf8');
  };

  return {
    clock,
    sandbox,
    pipeline,
    run: async (workflow, input, selection = { mode: 'auto' }) => {
      const { job } = await submitJob(deps, { workflow, input, selection, deadlineMs: 7 * 24 * 60 * 60_000 });
      return settle(job.id);
    },
    answer: async (jobId, chosen) => {
      await answerSelection(deps, jobId, chosen);
      return settle(jobId);
    },
    report: async (jobId) => {
      const keys = reportKeys(jobId);
      return {
        markdown: await text(keys.markdown),
        html: await text(keys.html),
        result: JSON.parse(await text(keys.result)),
      };
    },
    attachment: async (jobId, fileName) =>
      (await deps.reports.get(`reports/${jobId}/attachments/${fileName}`))?.body,
    close: async () => {
      await pipeline.close();
      await sandbox.close();
      if (options.outDir === undefined) rmSync(outDir, { recursive: true, force: true });
    },
  };
}

/** The options a job awaiting input offers, as `id: label` lines (for readable assertions). */
export function offered(job: Job): string[] {
  return (job.pending?.options ?? []).map((option) => `${option.id}: ${option.label}`);
}

/**
 * The calls the sandbox answered after ledger entry `afterSeq`, as short operation names (`ai35-1`,
 * `download` for a fetched document) with a polled operation's repeats collapsed into one: the
 * workflow's sequence as the upstream saw it.
 */
export function callSequence(world: Pick<World, 'sandbox'>, afterSeq: number): string[] {
  const sequence: string[] = [];
  for (const entry of world.sandbox.ledger.entries({ outcome: 'ok' })) {
    if (entry.seq <= afterSeq) continue;
    const name = /^(ai\d+(?:-\d+)?|p\d+)/.exec(entry.operationId)?.[1] ?? entry.operationId;
    if (sequence.at(-1) !== name) sequence.push(name);
  }
  return sequence;
}

/** The last ledger entry's number, to read the calls of the next job with {@link callSequence}. */
export const lastSeq = (world: Pick<World, 'sandbox'>): number =>
  world.sandbox.ledger.entries().at(-1)?.seq ?? 0;
