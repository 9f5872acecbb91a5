// The batch side of `opflow serve` on the local backend (real SQLite): Cancel all counts the jobs it
// cancelled against the batch at once (admission rounds pass stopped batches by), and the runner's
// rounds keep counting the jobs that end in a paused or stopped batch, so its figures and outputs
// stay true after it stops releasing items.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { cancelBatch } from '../../../shared/dashboard/batch-routes';
import { type BatchRunner, startBatchRunner } from '../../../shared/dashboard/batch-runner';
import type { BatchOptions, BatchSource } from '../../../shared/engine/batch-store';
import { admitBatch } from '../../../shared/ingest/admission';
import { viewOf } from '../../../shared/ingest/batch-view';
import { ingest, openBatch } from '../../../shared/ingest/ingest';
import { localIngestSource } from '../../../shared/ingest/local-source';
import { type IngestWorld, localWorld } from '../ingest/backends';

let dir: string;
let world: IngestWorld;
let runner: BatchRunner | undefined;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'opflow-batch-runner-'));
  world = localWorld();
});
afterEach(async () => {
  await runner?.stop();
  runner = undefined;
});
afterAll(async () => {
  await world?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function batchOf(name: string, lines: number, options: Partial<BatchOptions>) {
  const path = join(dir, `${name}.jsonl`);
  writeFileSync(
    path,
    Array.from({ length: lines }, (_, i) =>
      JSON.stringify({ id: `${name}${i}`, query: `TTL:(${name} ${i})` }),
    ).join('\n'),
  );
  const source: BatchSource = { kind: 'jsonl', uri: path };
  const { batch } = await openBatch(world.deps, source, {
    tenant: 'default',
    workflow: 'patent-count',
    options: { selection: 'auto', inFlight: 1000, ...options },
  });
  return ingest(world.deps, localIngestSource(source), batch.id);
}

describe('batches under opflow serve', () => {
  it('Cancel all stops releasing items and counts the cancelled jobs at once', async () => {
    const batch = await batchOf('cancel', 3, { inFlight: 2 });
    expect((await admitBatch(world.deps, batch.id))!.batch.inFlight).toHaveLength(2);
    const { batch: stopped, cancelled } = await cancelBatch(world.deps, batch.id);
    expect(cancelled).toBe(2);
    expect(stopped.status).toBe('STOPPED');
    expect(viewOf(stopped, Date.now()).totals).toEqual({
      waiting: 1,
      running: 0,
      succeeded: 0,
      failed: 0,
      cancelled: 2,
    });
    // The third item is never released.
    expect((await admitBatch(world.deps, batch.id))!.batch.admitted).toBe(2);
  });

  it("the runner's rounds count a paused batch's jobs that end after it paused", async () => {
    // --max-units 3: the first job's 3 units pause the batch while the second still runs.
    const batch = await batchOf('paused', 4, { inFlight: 2, maxUnits: 3 });
    const [first, second] = (await admitBatch(world.deps, batch.id))!.batch.inFlight;
    await world.finish(first!, 'SUCCEEDED');
    const paused = (await admitBatch(world.deps, batch.id))!.batch;
    expect(paused.status).toBe('PAUSED');
    expect(paused.inFlight).toEqual([second]);

    await world.finish(second!, 'FAILED');
    runner = startBatchRunner({ deps: world.deps.engine, batches: world.deps.batches, intervalMs: 50 });
    await vi.waitFor(
      async () => {
        const now = (await world.deps.batches.get(batch.id))!;
        expect(now.inFlight).toEqual([]);
        expect(now.settled).toMatchObject({ succeeded: 1, failed: 1 });
      },
      { timeout: 20_000, interval: 50 },
    );
    expect((await world.deps.batches.get(batch.id))!.status).toBe('PAUSED');
  });
});
