// A batch's totals follow its jobs on both backends (SQLite; DynamoDB Local): a view reads the jobs
// admission has not counted yet as they are (a job ended since counts by its end, a running one's
// usage shows), and a job run again by retryJob leaves the counts of finished jobs until it ends;
// a finished batch whose job ran again finished when that job ended, not at its first finish.
// A call that comes back after its job was cancelled adds its cost to the batch's settled totals in
// the same write as to the job (runner.ts recordLateUsage), whether admission counted the job before.
// A bulk redrive from the start (POST /jobs/bulk, opflow bulk redrive --from-start: runBulk) of a
// finished batch's failed item runs it again from its first step, and the batch follows it.
// A task the platform forgets mid-poll ("task ... not found") is created again from the step that
// created it, by the real runner on the real store: counted as a paid repeat, named by `opflow
// status` and the job API's view, and nothing else is called again.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AwsEmulators } from '../../../scripts/emulators/aws-emulators';
import { describeJob } from '../../../shared/cli/format';
import { submitJob } from '../../../shared/engine';
import type { BatchSource } from '../../../shared/engine/batch-store';
import type { EngineDeps } from '../../../shared/engine/deps';
import { cancelJob } from '../../../shared/engine/job-commands';
import { isTerminal } from '../../../shared/engine/job-record';
import { retryJob } from '../../../shared/engine/retry';
import { runStep } from '../../../shared/engine/runner';
import { jobView } from '../../../shared/http/job-routes';
import { admitBatch } from '../../../shared/ingest/admission';
import { currentViewOf } from '../../../shared/ingest/batch-view';
import { ingest, openBatch } from '../../../shared/ingest/ingest';
import { localIngestSource } from '../../../shared/ingest/local-source';
import { batchOutputKeys, writeBatchOutputs } from '../../../shared/ingest/outputs';
import { previewBulk, runBulk } from '../../../shared/runtime/bulk';
import { bulkRequestSchema } from '../../../shared/runtime/bulk-request';
import { FakeClock } from '../../support/memory-ports';
import { ScriptedClient, upstreamError } from '../../support/scripted-client';
import { demo } from '../../unit/engine/fixtures';
import { awsWorld, type IngestWorld, localWorld, startAwsEmulators } from './backends';

let emulators: AwsEmulators | undefined;
const backends: [string, () => Promise<IngestWorld>][] = [
  ['local', async () => localWorld()],
  [
    'aws',
    async () => {
      emulators ??= await startAwsEmulators({ secretsManager: false });
      return awsWorld(emulators);
    },
  ],
];

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'opflow-batch-totals-'));
});
afterAll(async () => {
  await emulators?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe.each(backends)('batch totals (%s)', (backend, makeWorld) => {
  let world: IngestWorld;
  beforeAll(async () => {
    world = await makeWorld();
  }, 120_000);
  afterAll(async () => world?.close());

  /** A batch of patent counts (one per id) read from its file and released: its id, its jobs' ids. */
  async function releasedBatch(name: string, ids: string[]): Promise<{ batchId: string; jobIds: string[] }> {
    const path = join(dir, `${backend}${name}.jsonl`);
    writeFileSync(path, ids.map((id) => JSON.stringify({ id, query: `TTL:(${id})` })).join('\n'));
    const source: BatchSource = { kind: 'jsonl', uri: path };
    const { batch: opened } = await openBatch(world.deps, source, {
      tenant: 'default',
      workflow: 'patent-count',
      options: { selection: 'auto', inFlight: 10 },
    });
    await ingest(world.deps, localIngestSource(source), opened.id);
    await admitBatch(world.deps, opened.id);
    return { batchId: opened.id, jobIds: (await world.deps.batches.get(opened.id))!.inFlight };
  }

  it('follow the jobs, whatever changes them', async () => {
    const { batchId, jobIds } = await releasedBatch('', ['a', 'b', 'c']);
    const [done, failed, running] = jobIds;
    const { store } = world.deps.engine;
    const view = async () => currentViewOf(store, (await world.deps.batches.get(batchId))!, Date.now());

    await world.finish(done!, 'SUCCEEDED');
    await world.finish(failed!, 'FAILED');
    // The third has made a call and runs on.
    const job = (await store.get(running!))!;
    await store.commit(
      {
        ...job,
        version: job.version + 1,
        status: 'RUNNING',
        usage: { ...job.usage, calls: 1, billedUnits: 1 },
      },
      job.version,
    );
    // Before admission counts anything: by the jobs as they are.
    expect(await view()).toMatchObject({
      status: 'RUNNING',
      totals: { succeeded: 1, failed: 1, running: 1 },
      calls: 5,
      billedUnits: 7,
    });
    await admitBatch(world.deps, batchId);
    expect((await world.deps.batches.get(batchId))!.settled).toMatchObject({ succeeded: 1, failed: 1 });
    expect(await view()).toMatchObject({ totals: { succeeded: 1, failed: 1, running: 1 }, calls: 5 });

    // The failed one is retried: it runs again (not failed), its usage is counted once.
    await retryJob({ ...world.deps.engine, batches: world.deps.batches }, failed!);
    expect(await view()).toMatchObject({ totals: { succeeded: 1, failed: 0, running: 2 }, calls: 5 });
    await world.finish(failed!, 'FAILED');
    await world.finish(running!, 'SUCCEEDED');
    // Ended since admission looked: counted by their ends before admission runs, and after.
    expect(await view()).toMatchObject({ totals: { succeeded: 2, failed: 1, running: 0 }, failures: 1 });
    const finished = (await admitBatch(world.deps, batchId))!.batch;
    expect(finished.status).toBe('FINISHED');
    expect(finished.settled).toMatchObject({ succeeded: 2, failed: 1, calls: 6, billedUnits: 9 });
    expect(await view()).toMatchObject({ status: 'FINISHED', totals: { succeeded: 2, failed: 1 }, calls: 6 });

    // A retry after the batch finished (opflow retry): it shows running, then succeeded, not failed.
    await retryJob({ ...world.deps.engine, batches: world.deps.batches }, failed!);
    expect(await view()).toMatchObject({
      status: 'RUNNING',
      totals: { succeeded: 2, failed: 0, running: 1 },
    });
    await world.finish(failed!, 'SUCCEEDED');
    expect(await view()).toMatchObject({
      status: 'FINISHED',
      totals: { succeeded: 3, failed: 0, running: 0 },
      failures: 0,
      calls: 6,
    });
  }, 120_000);

  it('move the finish time of a finished batch to when its retried job ended', async () => {
    const { batchId, jobIds } = await releasedBatch('-finish', ['f', 'g']);
    const [ok, bad] = jobIds;
    const { store } = world.deps.engine;
    await world.finish(ok!, 'SUCCEEDED');
    await world.finish(bad!, 'FAILED');
    const finished = (await admitBatch(world.deps, batchId))!.batch;
    expect(finished.status).toBe('FINISHED');
    const firstFinish = finished.finishedAt!;
    const view = async () => currentViewOf(store, (await world.deps.batches.get(batchId))!, Date.now());
    expect(await view()).toMatchObject({
      finishedAt: new Date(firstFinish).toISOString(),
      elapsedMs: firstFinish - finished.runStartedAt,
    });

    // opflow retry of its failed item: not finished while it runs.
    await retryJob({ ...world.deps.engine, batches: world.deps.batches }, bad!);
    const running = await view();
    expect(running).toMatchObject({ status: 'RUNNING', totals: { running: 1 } });
    expect(running.finishedAt).toBeUndefined();

    // It ends an hour after the batch's first finish: the batch finished then, and took that long.
    const retried = (await store.get(bad!))!;
    const lastEnd = firstFinish + 3_600_000;
    await store.commit(
      {
        ...retried,
        version: retried.version + 1,
        status: 'SUCCEEDED',
        finishedAt: lastEnd,
        updatedAt: lastEnd,
      },
      retried.version,
    );
    const after = await view();
    expect(after).toMatchObject({
      status: 'FINISHED',
      totals: { succeeded: 2, failed: 0, running: 0 },
      finishedAt: new Date(lastEnd).toISOString(),
      elapsedMs: lastEnd - finished.runStartedAt,
    });
    // The listing (opflow batch, GET /batches) says the same.
    const listed = (await world.deps.batches.list({ limit: 20 })).batches.find((one) => one.id === batchId)!;
    expect((await currentViewOf(store, listed, Date.now())).finishedAt).toBe(after.finishedAt);
  }, 120_000);

  it('say "finished, writing outputs" until the outputs are written from the finished batch', async () => {
    const { batchId, jobIds } = await releasedBatch('-outputs', ['p', 'q']);
    const { batches } = world.deps;
    const view = async () =>
      currentViewOf(world.deps.engine.store, (await batches.get(batchId))!, Date.now());
    expect(await view()).toMatchObject({ status: 'RUNNING', writingOutputs: false, outputsFinal: false });
    expect((await view()).outputsAt).toBeUndefined();
    // Outputs written while it runs: there, but not the final ones.
    await writeBatchOutputs(world.deps, (await batches.get(batchId))!);
    const interim = await view();
    expect(interim).toMatchObject({ writingOutputs: false, outputsFinal: false });
    expect(Date.parse(interim.outputsAt!)).toBeGreaterThan(0);
    for (const id of jobIds) await world.finish(id, 'SUCCEEDED');
    // Admission finishes the batch: its outputs are still those written while it ran.
    const finished = (await admitBatch(world.deps, batchId))!.batch;
    expect(finished.status).toBe('FINISHED');
    expect(await view()).toMatchObject({ status: 'FINISHED', writingOutputs: true, outputsFinal: false });
    const summaryKey = batchOutputKeys(batchId).summary;
    const rowsOf = async () =>
      new TextDecoder()
        .decode((await world.deps.engine.reports.get(summaryKey))!.body)
        .trim()
        .split('\n')
        .slice(1);
    expect((await rowsOf()).every((row) => !row.includes('SUCCEEDED'))).toBe(true);
    // Outputs written from a snapshot read before the finish do not count as the final ones.
    await writeBatchOutputs(world.deps, { ...finished, status: 'RUNNING', finishedAt: undefined });
    expect(await view()).toMatchObject({ writingOutputs: true, outputsFinal: false });
    await writeBatchOutputs(world.deps, finished);
    const done = await view();
    expect(done).toMatchObject({ status: 'FINISHED', writingOutputs: false, outputsFinal: true });
    expect(Date.parse(done.outputsAt!)).toBeGreaterThanOrEqual(Date.parse(done.finishedAt!));
    expect((await rowsOf()).filter((row) => row.includes('SUCCEEDED'))).toHaveLength(2);
    // Recording it kept the batch's own figures.
    expect((await batches.get(batchId))!).toMatchObject({
      status: 'FINISHED',
      settled: finished.settled,
      finishedAt: finished.finishedAt,
    });
  }, 120_000);

  it('carry the upstreams its jobs ran on, recorded in the batch as admission counts them', async () => {
    const { batchId, jobIds } = await releasedBatch('-upstreams', ['a', 'b']);
    const [onSandbox, onPlatform] = jobIds;
    const { store } = world.deps.engine;
    const view = async () => currentViewOf(store, (await world.deps.batches.get(batchId))!, Date.now());
    // Before any call: no upstream, not marked.
    expect(await view()).toMatchObject({ upstreams: [], sandbox: false });
    const platform = {
      kind: 'platform' as const,
      baseUrl: 'https://op.example',
      keyFingerprint: 'ab12cd34ef567890',
    };
    for (const [jobId, upstream] of [
      [onSandbox!, { kind: 'sandbox' as const }],
      [onPlatform!, platform],
    ] as const) {
      const job = (await store.get(jobId))!;
      await store.commit({ ...job, version: job.version + 1, status: 'RUNNING', upstream }, job.version);
    }
    // Running jobs that made a call count already (read as they are; DynamoDB's batch read answers
    // in no set order, so neither are they).
    const running = await view();
    expect(running.sandbox).toBe(true);
    expect(running.upstreams).toHaveLength(2);
    expect(running.upstreams).toEqual(expect.arrayContaining([{ kind: 'sandbox' }, platform]));
    await world.finish(onSandbox!, 'SUCCEEDED');
    await world.finish(onPlatform!, 'SUCCEEDED');
    const finished = (await admitBatch(world.deps, batchId))!.batch;
    expect(finished.status).toBe('FINISHED');
    // Kept in the stored batch, once each, with no job left to read.
    const stored = (await world.deps.batches.get(batchId))!;
    expect(stored.inFlight).toEqual([]);
    const both = [{ kind: 'sandbox' }, platform];
    expect(stored.upstreams).toHaveLength(2);
    expect(stored.upstreams).toEqual(expect.arrayContaining(both));
    expect(await view()).toMatchObject({ sandbox: true, upstreams: stored.upstreams });
    // The listing carries it too.
    const listed = (await world.deps.batches.list({ limit: 10 })).batches.find((one) => one.id === batchId);
    expect(listed?.upstreams).toEqual(stored.upstreams);
  }, 120_000);

  it("add the cost of a call that came back after its job was cancelled, in the same write as the job's", async () => {
    const { batchId, jobIds } = await releasedBatch('-late', ['p', 'q']);
    const [counted, uncounted] = jobIds;

    // Each count call stays open until the test lets it answer.
    const releases: (() => void)[] = [];
    const client = new ScriptedClient(async () => {
      await new Promise<void>((resolve) => releases.push(resolve));
      return { total_search_result_count: 12 };
    });
    const deps: EngineDeps = {
      // The world's engine is a whole EngineDeps (backends.ts), typed as the ingestion's JobDeps.
      ...(world.deps.engine as EngineDeps),
      batches: world.deps.batches,
      client,
      keys: { getKey: async () => 'sk-test-key', refresh: async () => 'sk-test-key' },
    };
    const { store } = deps;
    const cancelledMidCall = async (jobId: string) => {
      const calls = client.calls.length;
      const running = runStep(deps, { jobId, version: (await store.get(jobId))!.version });
      for (let i = 0; i < 400 && client.calls.length === calls; i++)
        await new Promise((r) => setTimeout(r, 5));
      expect(client.calls.length).toBe(calls + 1);
      await cancelJob(deps, jobId);
      // Wrapped: an async function's returned promise would be awaited with it.
      return { running };
    };

    // Cancelled with its call open, and counted by admission as it was then: no calls.
    const first = (await cancelledMidCall(counted!)).running;
    await admitBatch(world.deps, batchId);
    const settled = (await world.deps.batches.get(batchId))!;
    expect(settled.inFlight).not.toContain(counted);
    expect(settled.settled).toMatchObject({ cancelled: 1, calls: 0, billedUnits: 0 });
    releases.shift()!();
    expect((await first).outcome).toBe('conflict');
    // The call's cost is the job's and the batch's, written together (the batch's version moved).
    expect((await store.get(counted!))!.usage).toMatchObject({ calls: 1, billedUnits: 1 });
    const after = (await world.deps.batches.get(batchId))!;
    expect(after.settled).toMatchObject({ cancelled: 1, calls: 1, billedUnits: 1 });
    expect(after.version).toBe(settled.version + 1);

    // Cancelled, and its call back before admission counted it: admission counts the job whole, once.
    const second = (await cancelledMidCall(uncounted!)).running;
    releases.shift()!();
    expect((await second).outcome).toBe('conflict');
    expect((await world.deps.batches.get(batchId))!.settled).toMatchObject({ cancelled: 1, calls: 1 });
    const finished = (await admitBatch(world.deps, batchId))!.batch;
    expect(finished.settled).toMatchObject({ cancelled: 2, calls: 2, billedUnits: 2 });
    expect(await currentViewOf(store, finished, Date.now())).toMatchObject({
      totals: { cancelled: 2 },
      calls: 2,
      billedUnits: 2,
    });
  }, 120_000);

  it('redrive in bulk from the start the failed item of a finished batch, whose totals follow it', async () => {
    const { batchId, jobIds } = await releasedBatch('-redrive', ['r', 's']);
    const [ok, bad] = jobIds;
    await world.finish(ok!, 'SUCCEEDED');
    await world.finish(bad!, 'FAILED');
    expect((await admitBatch(world.deps, batchId))!.batch).toMatchObject({
      status: 'FINISHED',
      settled: { succeeded: 1, failed: 1 },
    });

    const deps = { ...world.deps.engine, batches: world.deps.batches };
    const request = { action: 'redrive', where: { batchId }, options: { fromStart: true } };
    const preview = await previewBulk(deps, bulkRequestSchema.parse({ ...request, dryRun: true }));
    expect(preview.count).toBe(1);
    const outcome = await runBulk(
      deps,
      bulkRequestSchema.parse({
        ...request,
        confirm: { count: preview.count, selection: preview.selection },
      }),
    );
    expect(outcome).toMatchObject({ done: 1, skipped: 0, doneSample: [bad], batches: [batchId] });
    const again = (await deps.store.get(bad!))!;
    expect(again).toMatchObject({ status: 'QUEUED', step: 'count' });
    expect(again.runs).toEqual([expect.objectContaining({ status: 'FAILED', fromStart: true })]);
    const view = async () => currentViewOf(deps.store, (await world.deps.batches.get(batchId))!, Date.now());
    expect(await view()).toMatchObject({
      status: 'RUNNING',
      totals: { succeeded: 1, failed: 0, running: 1 },
    });

    await world.finish(bad!, 'SUCCEEDED');
    const finished = (await admitBatch(world.deps, batchId))!.batch;
    expect(finished).toMatchObject({ status: 'FINISHED', settled: { succeeded: 2, failed: 0 } });
    expect(await view()).toMatchObject({ totals: { succeeded: 2, failed: 0 }, failures: 0 });
  }, 120_000);

  it('create again a task the platform forgot mid-poll, from its creating step, counted as a paid repeat', async () => {
    // The upstream hands out task-1, task-2, ...; it forgets task-1 at its second poll.
    let created = 0;
    const polls = new Map<string, number>();
    const client = new ScriptedClient((op, body) => {
      const taskId = String((body as { task_id?: unknown }).task_id);
      switch (op) {
        case 'ai33-1Step1V3':
          return { task_id: `task-${++created}` };
        case 'ai33-2Step2V3': {
          const n = (polls.get(taskId) ?? 0) + 1;
          polls.set(taskId, n);
          if (taskId === 'task-1' && n === 2)
            throw upstreamError('not-found', { code: 67200101, httpStatus: 404, operationId: op });
          return n === 1 ? { status: 'RUNNING' } : { status: 'SUCCEED', recommend: ['alpha', 'beta'] };
        }
        case 'ai33-3Step3SubmitV3':
          return { task_id: taskId };
        case 'fetch':
          return '%PDF-1.4 demo';
        default:
          throw new Error(`unexpected ${op}`);
      }
    });
    const clock = new FakeClock(Date.now());
    const deps: EngineDeps = {
      ...(world.deps.engine as EngineDeps),
      client,
      clock,
      random: () => 0.5,
      workflows: new Map([[demo.name, demo]]),
      keys: { getKey: async () => 'sk-test-key', refresh: async () => 'sk-test-key' },
    };
    const { job } = await submitJob(deps, { workflow: 'demo', input: { issue: 'a hinge that locks' } });
    // Each message the queue would deliver, at its time, on the store's record.
    for (let steps = 0; ; steps++) {
      const now = (await deps.store.get(job.id))!;
      if (isTerminal(now.status)) break;
      expect(steps).toBeLessThan(20);
      clock.current = Math.max(clock.current, now.nextRunAt);
      await runStep(deps, { jobId: job.id, version: now.version });
    }
    const done = (await deps.store.get(job.id))!;
    expect(done).toMatchObject({
      status: 'SUCCEEDED',
      recreatedTasks: 1,
      usage: { duplicateCreates: 1, calls: client.calls.length },
    });
    // Created twice; the forgotten task polled twice, the new one to its end; the rest once, on task-2.
    expect(client.calls.map((call) => call.operationId)).toEqual([
      'ai33-1Step1V3',
      'ai33-2Step2V3',
      'ai33-2Step2V3',
      'ai33-1Step1V3',
      'ai33-2Step2V3',
      'ai33-2Step2V3',
      'ai33-3Step3SubmitV3',
      'fetch',
    ]);
    expect(client.calls.find((call) => call.operationId === 'ai33-3Step3SubmitV3')?.body).toMatchObject({
      task_id: 'task-2',
    });
    const status = describeJob(done, deps.workflows);
    expect(status).toContain('1 repeated creates');
    expect(status).toContain(
      'recreated 1 upstream task the platform no longer knew ("task not found"), from the step that created it: a paid repeat',
    );
    expect(jobView(done)).toMatchObject({ recreatedTasks: 1, usage: { duplicateCreates: 1 } });
  }, 120_000);
});
