// Fairness, end to end on the local runtime (real worker pool, real per-key rate limiter, a real
// sandbox): a large batch does not starve a second batch or a job started by hand. All of them go
// through the same limiter; admission keeps each batch to its in-flight limit, so the others wait
// behind a bounded number of its jobs, not behind all of them.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { silentLogger } from '../../../shared/engine/deps';
import { submitJob } from '../../../shared/engine/job-commands';
import { isTerminal } from '../../../shared/engine/job-record';
import { driveBatch } from '../../../shared/ingest/drive-batch';
import { ingest, openBatch } from '../../../shared/ingest/ingest';
import { localIngestSource } from '../../../shared/ingest/local-source';
import { createLocalPipeline, type LocalPipeline } from '../../../shared/runtime/local/pipeline';
import { type Sandbox, startSandbox } from '../../../shared/sandbox';
import { workflows } from '../../../shared/workflows';

let dir: string;
let sandbox: Sandbox;
let pipeline: LocalPipeline;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'opflow-fairness-'));
  sandbox = await startSandbox({ port: 0 });
  pipeline = await createLocalPipeline({
    config: {
      qps: 25,
      concurrency: 4,
      dbPath: join(dir, 'jobs.db'),
      outDir: join(dir, 'out'),
      baseUrl: sandbox.url,
    },
    workflows,
    env: {},
    announce: () => {},
    log: silentLogger,
  });
});
afterAll(async () => {
  await pipeline?.close();
  await sandbox?.close();
  rmSync(dir, { recursive: true, force: true });
});

it('gives a second batch and a hand-started job their turn while a large batch runs', async () => {
  const deps = { engine: pipeline.deps, batches: pipeline.local.batches };
  const manifest = (name: string, count: number) => {
    const path = join(dir, `${name}.jsonl`);
    writeFileSync(
      path,
      `${Array.from({ length: count }, (_, i) => JSON.stringify({ id: `${name}${i}`, query: `TTL:(${name} ${i})` })).join('\n')}\n`,
    );
    return path;
  };
  const read = async (name: string, count: number) => {
    const source = { kind: 'jsonl' as const, uri: manifest(name, count) };
    const { batch } = await openBatch(deps, source, {
      tenant: 'default',
      workflow: 'patent-count',
      batchName: name,
      options: { selection: 'auto', inFlight: 6 },
    });
    return ingest(deps, localIngestSource(source), batch.id);
  };
  const large = await read('large', 150);
  const second = await read('second', 30);

  // The order in which jobs finish, by who they belong to.
  const finished: string[] = [];
  const seen = new Set<string>();
  pipeline.onJobChange((job) => {
    if (!isTerminal(job.status) || seen.has(job.id)) return;
    seen.add(job.id);
    finished.push(job.batchId ?? 'hand');
  });
  pipeline.start();
  const driving = driveBatch(deps, undefined, large.id, {
    allBatches: true,
    roundMs: 100,
    wake: (listener) => pipeline.onJobChange(() => listener()),
  });
  // Started by hand once both batches are under way.
  while (finished.length < 10) await new Promise((resolve) => setTimeout(resolve, 50));
  const { job: hand } = await submitJob(pipeline.deps, {
    workflow: 'patent-count',
    input: { query: 'TTL:(by hand)' },
    source: 'cli',
  });
  const atSubmit = finished.length;
  const result = await driving;
  await pipeline.waitForJobs([hand.id]);
  await pipeline.stop();

  expect(result.end).toBe('finished');
  expect(finished.filter((who) => who === 'large')).toHaveLength(150);
  expect(finished.filter((who) => who === 'second')).toHaveLength(30);
  // The hand job waited behind at most the two batches' in-flight jobs (6 + 6), not behind the
  // 150 of the large one.
  expect(finished.indexOf('hand') - atSubmit).toBeLessThanOrEqual(12 + 4);
  // The second batch ran beside the large one: it was done long before the large one, having had
  // about half of the completions while both ran.
  const secondDone = finished.lastIndexOf('second');
  expect(secondDone).toBeLessThan(80);
  const whileBoth = finished.slice(0, secondDone + 1);
  expect(whileBoth.filter((who) => who === 'large').length).toBeLessThanOrEqual(
    whileBoth.filter((who) => who === 'second').length + 12,
  );
  expect((await deps.batches.get(second.id))?.status).toBe('FINISHED');
}, 300_000);
