// The ingestion core on both backends: a 1,000-line manifest with 20 bad lines of different kinds,
// as JSON Lines and as CSV, each to 980 jobs, summary.csv and failed.jsonl; a re-ingest creates nothing and a changed line one new item; an ingest
// stopped after any chunk resumes without duplicates; the failure budget stops a batch; admission
// keeps each batch to its in-flight limit and tops batches up in turn.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AwsEmulators, startAwsEmulators } from '../../../scripts/emulators/aws-emulators';
import type { Batch, BatchItem, BatchOptions, BatchSource } from '../../../shared/engine/batch-store';
import { admitAll, admitBatch } from '../../../shared/ingest/admission';
import { ingest, openBatch } from '../../../shared/ingest/ingest';
import { setMaxUnits } from '../../../shared/ingest/limits';
import { localIngestSource } from '../../../shared/ingest/local-source';
import { writeBatchOutputs } from '../../../shared/ingest/outputs';
import { csvManifest, jsonlManifest, manifestFiles } from '../../support/manifests';
import { awsWorld, type IngestWorld, localWorld } from './backends';

const options = (overrides: Partial<BatchOptions> = {}): BatchOptions => ({
  selection: 'auto',
  inFlight: 1000,
  ...overrides,
});

async function allItems(world: IngestWorld, batchId: string): Promise<BatchItem[]> {
  const items: BatchItem[] = [];
  for (let from = 0; ; ) {
    const page = await world.deps.batches.listItems(batchId, from, 300);
    items.push(...page);
    if (page.length < 300) return items;
    from = page[page.length - 1]!.seq + 1;
  }
}

async function ingestFile(
  world: IngestWorld,
  path: string,
  kind: BatchSource['kind'],
  overrides: Partial<BatchOptions> = {},
  batchName?: string,
) {
  const source: BatchSource = { kind, uri: path };
  const { batch } = await openBatch(world.deps, source, {
    tenant: 'default',
    workflow: 'patent-count',
    options: options(overrides),
    batchName,
  });
  return ingest(world.deps, localIngestSource(source), batch.id);
}

const backends: [string, () => Promise<IngestWorld>][] = [];
let emulators: AwsEmulators | undefined;
backends.push(['local', async () => localWorld()]);
backends.push([
  'aws',
  async () => {
    emulators ??= await startAwsEmulators({ secretsManager: false });
    return awsWorld(emulators);
  },
]);

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'opflow-manifests-'));
  for (const [name, body] of Object.entries(manifestFiles)) writeFileSync(join(dir, name), body);
});
afterAll(async () => {
  await emulators?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe.each(backends)('ingestion core (%s)', (backend, makeWorld) => {
  let world: IngestWorld;
  beforeAll(async () => {
    world = await makeWorld();
  }, 120_000);
  afterAll(async () => world?.close());

  it('turns a 1,000-line JSON Lines manifest with 20 bad lines into 980 items, each bad line reported by number and reason', async () => {
    const manifest = jsonlManifest(1000);
    const path = join(dir, `${backend}-disclosures.jsonl`);
    writeFileSync(path, manifest.text);
    const batch = await ingestFile(world, path, 'jsonl');
    expect(batch.cursor.done).toBe(true);
    expect(batch.counts).toEqual({ records: 1000, created: 980, existing: 0, invalid: 20 });
    const items = await allItems(world, batch.id);
    expect(items.map((item) => item.id)).toEqual(manifest.goodIds);
    expect(items.map((item) => item.seq)).toEqual(items.map((_, index) => index));
    expect(items.find((item) => item.id === 'd7')?.input).toEqual({
      inline: { input: { query: 'TTL:(file based query)', title: 'From a file' }, selection: 'auto' },
    });
    const problems = await world.deps.batches.listProblems(batch.id, batch.run);
    expect(problems.map((problem) => problem.record)).toEqual(manifest.bad.map((bad) => bad.at));
    for (const [index, bad] of manifest.bad.entries()) {
      expect(problems[index]?.position).toBe(`line ${bad.at}`);
      expect(problems[index]?.reason).toMatch(bad.reason);
    }

    // Release everything, finish it, and the outputs say it all.
    await admitBatch(world.deps, batch.id);
    const released = (await world.deps.batches.get(batch.id))!;
    expect(released.inFlight).toHaveLength(980);
    for (const [index, jobId] of released.inFlight.entries())
      await world.finish(jobId, index === 3 ? 'FAILED' : 'SUCCEEDED');
    const finished = (await admitBatch(world.deps, batch.id))!.batch;
    expect(finished.status).toBe('FINISHED');
    expect(finished.settled).toMatchObject({ succeeded: 979, failed: 1, calls: 1960, billedUnits: 2940 });
    const totals = await writeBatchOutputs(world.deps, finished);
    expect(totals).toMatchObject({
      items: 980,
      pending: 0,
      invalid: 20,
      byStatus: { SUCCEEDED: 979, FAILED: 1 },
    });
    const text = async (key: string) =>
      Buffer.from((await world.deps.engine.reports.get(key))!.body).toString('utf8');
    const summary = (await text(`batches/${batch.id}/summary.csv`)).trim().split('\n');
    expect(summary).toHaveLength(981);
    expect(summary[0]).toMatch(/^id,version,title,workflow,status,key_findings,references,closest/);
    expect(summary[1]).toMatch(/^d1,v1 \([0-9a-f]{8}\),Battery 1,patent-count,SUCCEEDED,/);
    const failed = (await text(`batches/${batch.id}/failed.jsonl`))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(failed).toHaveLength(21);
    expect(failed.slice(0, 20).map((entry) => entry.source)).toEqual(
      manifest.bad.map((bad) => `line ${bad.at}`),
    );
    expect(failed[20]).toMatchObject({ kind: 'job', id: 'd4', status: 'FAILED', reason: 'the task failed' });
    expect((await text(`batches/${batch.id}/results.jsonl`)).trim().split('\n')).toHaveLength(980);
    expect(await text(`batches/${batch.id}/index.html`)).toContain('<table id="items">');
  }, 300_000);

  it('reads the same 1,000 records as CSV (BOM, semicolons, quoted newlines), 20 refused with their record and line', async () => {
    const manifest = csvManifest(1000);
    const path = join(dir, `${backend}-disclosures.csv`);
    writeFileSync(path, manifest.text);
    const batch = await ingestFile(world, path, 'csv');
    expect(batch.counts).toEqual({ records: 1000, created: 980, existing: 0, invalid: 20 });
    const items = await allItems(world, batch.id);
    expect(items.map((item) => item.id)).toEqual(manifest.goodIds);
    expect(items.find((item) => item.id === 'c97')?.input).toEqual({
      inline: { input: { query: 'TTL:(wind\nturbine 97)', title: 'Wind; offshore' }, selection: 'auto' },
    });
    const problems = await world.deps.batches.listProblems(batch.id, batch.run);
    expect(problems.map((problem) => problem.record)).toEqual(manifest.bad.map((bad) => bad.at));
    for (const [index, bad] of manifest.bad.entries()) {
      expect(problems[index]?.position).toMatch(new RegExp(`^record ${bad.at} \\(line \\d+\\)$`));
      expect(problems[index]?.reason).toMatch(bad.reason);
    }

    // 980 jobs, finished, and the outputs: a row per item in record order, the 20 bad records.
    await admitBatch(world.deps, batch.id);
    const released = (await world.deps.batches.get(batch.id))!;
    expect(released.inFlight).toHaveLength(980);
    for (const jobId of released.inFlight) await world.finish(jobId, 'SUCCEEDED');
    const finished = (await admitBatch(world.deps, batch.id))!.batch;
    expect(finished).toMatchObject({ status: 'FINISHED', settled: { succeeded: 980, failed: 0 } });
    await writeBatchOutputs(world.deps, finished);
    const text = async (key: string) =>
      Buffer.from((await world.deps.engine.reports.get(key))!.body).toString('utf8');
    const rows = parse(await text(`batches/${batch.id}/summary.csv`), { columns: true }) as Record<
      string,
      string
    >[];
    expect(rows.map((row) => row.id)).toEqual(manifest.goodIds);
    expect(rows.every((row) => row.status === 'SUCCEEDED' && row.workflow === 'patent-count')).toBe(true);
    expect(rows.find((row) => row.id === 'c97')?.title).toBe('Wind; offshore');
    const failed = (await text(`batches/${batch.id}/failed.jsonl`))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(failed).toHaveLength(20);
    expect(failed.map((entry) => entry.source)).toEqual(problems.map((problem) => problem.position));
    for (const [index, bad] of manifest.bad.entries()) expect(failed[index].reason).toMatch(bad.reason);
  }, 300_000);

  it('creates nothing on a re-ingest, and one new item for a changed line', async () => {
    const path = join(dir, `${backend}-again.jsonl`);
    const lines = Array.from({ length: 30 }, (_, i) =>
      JSON.stringify({ id: `a${i}`, query: `TTL:(pump ${i})` }),
    );
    writeFileSync(path, `${lines.join('\n')}\n`);
    const first = await ingestFile(world, path, 'jsonl');
    expect(first.counts.created).toBe(30);
    const again = await ingestFile(world, path, 'jsonl');
    expect(again.run).toBe(2);
    expect(again.counts).toEqual({ records: 30, created: 0, existing: 30, invalid: 0 });
    lines[12] = JSON.stringify({ id: 'a12', query: 'TTL:(pump twelve, revised)' });
    writeFileSync(path, `${lines.join('\n')}\n`);
    const changed = await ingestFile(world, path, 'jsonl');
    expect(changed.counts).toEqual({ records: 30, created: 1, existing: 29, invalid: 0 });
    const items = await allItems(world, changed.id);
    expect(items).toHaveLength(31);
    const versions = items.filter((item) => item.id === 'a12');
    expect(versions).toHaveLength(2);
    expect(versions[0]!.contentHash).not.toBe(versions[1]!.contentHash);
    expect(new Set(items.map((item) => item.key)).size).toBe(31);
  }, 120_000);

  it('resumes an ingest stopped after any chunk from its committed position, without duplicates', async () => {
    const manifest = jsonlManifest(400);
    const path = join(dir, `${backend}-killed.jsonl`);
    writeFileSync(path, manifest.text);
    const source: BatchSource = { kind: 'jsonl', uri: path };
    const { batch } = await openBatch(world.deps, source, {
      tenant: 'default',
      workflow: 'patent-count',
      options: options(),
    });
    // A crash right after a chunk's commit, three times over, with chunks of 37 records.
    for (let crashes = 0; crashes < 3; crashes++) {
      let chunks = 0;
      await expect(
        ingest(world.deps, localIngestSource(source), batch.id, {
          chunkSize: 37,
          onChunk: () => {
            chunks += 1;
            if (chunks === 2) throw new Error('killed');
          },
        }),
      ).rejects.toThrow('killed');
    }
    const part = (await world.deps.batches.get(batch.id))!;
    expect(part.cursor.records).toBe(6 * 37);
    expect(part.cursor.done).toBe(false);
    // Reopening finds the unfinished run and resumes it (not a new run).
    const reopened = await openBatch(world.deps, source, {
      tenant: 'default',
      workflow: 'patent-count',
      options: options(),
    });
    expect(reopened.state).toBe('resumed');
    const done = await ingest(world.deps, localIngestSource(source), batch.id, { chunkSize: 37 });
    expect(done.cursor.done).toBe(true);
    expect(done.counts).toEqual({ records: 400, created: 380, existing: 0, invalid: 20 });
    const items = await allItems(world, batch.id);
    expect(items.map((item) => item.id)).toEqual(manifest.goodIds);
    expect((await world.deps.batches.listProblems(batch.id, 1)).map((p) => p.record)).toEqual(
      manifest.bad.map((b) => b.at),
    );
  }, 120_000);

  it('still reports a duplicate of an id read before the interruption, after a resume', async () => {
    const lines = Array.from({ length: 120 }, (_, i) =>
      JSON.stringify({ id: `r${i + 1}`, query: `TTL:(pump ${i})` }),
    );
    lines[2] = JSON.stringify({ id: 'dup', query: '' }); // line 3: refused, but its id is taken
    lines[99] = JSON.stringify({ id: 'dup', query: 'TTL:(gate)' }); // line 100
    lines[109] = JSON.stringify({ id: 'r5', query: 'TTL:(changed)' }); // line 110: r5 was line 5
    const path = join(dir, `${backend}-dup-resume.jsonl`);
    writeFileSync(path, `${lines.join('\n')}\n`);
    const source: BatchSource = { kind: 'jsonl', uri: path };
    const { batch } = await openBatch(world.deps, source, {
      tenant: 'default',
      workflow: 'patent-count',
      options: options(),
    });
    await expect(
      ingest(world.deps, localIngestSource(source), batch.id, {
        chunkSize: 37,
        onChunk: () => {
          throw new Error('killed');
        },
      }),
    ).rejects.toThrow('killed');
    expect((await world.deps.batches.get(batch.id))!.cursor.records).toBe(37);
    const done = await ingest(world.deps, localIngestSource(source), batch.id, { chunkSize: 37 });
    expect(done.counts).toEqual({ records: 120, created: 117, existing: 0, invalid: 3 });
    const reasons = (await world.deps.batches.listProblems(batch.id, 1)).map(
      (p) => `${p.position}: ${p.reason}`,
    );
    expect(reasons[1]).toBe('line 100: duplicate id "dup" (first at line 3)');
    expect(reasons[2]).toBe('line 110: duplicate id "r5" (first at line 5)');
  }, 120_000);

  it('continues a batch paused by --max-units once the limit is raised (opflow batch --max-units, or ingest again)', async () => {
    const path = join(dir, `${backend}-max-units.jsonl`);
    writeFileSync(
      path,
      `${Array.from({ length: 10 }, (_, i) => JSON.stringify({ id: `m${i}`, query: `TTL:(lever ${i})` })).join('\n')}\n`,
    );
    const batch = await ingestFile(world, path, 'jsonl', { maxUnits: 5, inFlight: 2 });
    const first = (await admitBatch(world.deps, batch.id))!.batch;
    expect(first.inFlight).toHaveLength(2);
    for (const jobId of first.inFlight) await world.finish(jobId, 'SUCCEEDED'); // 3 units each
    const paused = (await admitBatch(world.deps, batch.id))!.batch;
    expect(paused.status).toBe('PAUSED');
    expect(paused.reason).toMatch(/--max-units 5/);
    expect(paused.admitted).toBe(2);
    await expect(setMaxUnits(world.deps.batches, batch.id, 6, Date.now)).rejects.toThrow(
      /billed 6 units already/,
    );
    // opflow batch <id> --max-units 12
    expect((await setMaxUnits(world.deps.batches, batch.id, 12, Date.now)).status).toBe('RUNNING');
    const more = (await admitBatch(world.deps, batch.id))!.batch;
    expect(more.admitted).toBe(4);
    for (const jobId of more.inFlight) await world.finish(jobId, 'SUCCEEDED');
    expect((await admitBatch(world.deps, batch.id))!.batch.status).toBe('PAUSED');
    // opflow ingest <same manifest> --max-units 1000: nothing new, and it goes on from item 5
    const source: BatchSource = { kind: 'jsonl', uri: path };
    const { batch: again } = await openBatch(world.deps, source, {
      tenant: 'default',
      workflow: 'patent-count',
      options: options({ maxUnits: 1000, inFlight: 2 }),
    });
    const read = await ingest(world.deps, localIngestSource(source), again.id);
    expect(read.counts.created).toBe(0);
    const resumed = (await admitBatch(world.deps, batch.id))!.batch;
    expect(resumed.status).toBe('RUNNING');
    expect(resumed.admitted).toBe(6);
    expect(resumed.items).toBe(10);
  }, 120_000);

  it('stops releasing items once failures pass the failure budget, and says so', async () => {
    const path = join(dir, `${backend}-budget.jsonl`);
    const lines = Array.from({ length: 40 }, (_, i) =>
      i % 4 === 0
        ? `{"id": "b${i}", "query": ""}`
        : JSON.stringify({ id: `b${i}`, query: `TTL:(valve ${i})` }),
    );
    writeFileSync(path, `${lines.join('\n')}\n`);
    const batch = await ingestFile(world, path, 'jsonl', { failureBudget: { kind: 'percent', value: 10 } });
    expect(batch.status).toBe('STOPPED');
    expect(batch.reason).toMatch(/failure budget of 10%/);
    const result = await admitBatch(world.deps, batch.id);
    expect(result?.released).toBe(0);

    // A count budget, passed by failed jobs while the batch runs.
    const runPath = join(dir, `${backend}-budget-jobs.jsonl`);
    writeFileSync(
      runPath,
      `${Array.from({ length: 20 }, (_, i) => JSON.stringify({ id: `j${i}`, query: `TTL:(gear ${i})` })).join('\n')}\n`,
    );
    const running = await ingestFile(world, runPath, 'jsonl', {
      failureBudget: { kind: 'count', value: 2 },
      inFlight: 5,
    });
    const first = (await admitBatch(world.deps, running.id))!.batch;
    expect(first.inFlight).toHaveLength(5);
    for (const jobId of first.inFlight.slice(0, 3)) await world.finish(jobId, 'FAILED');
    const stopped = (await admitBatch(world.deps, running.id))!.batch;
    expect(stopped.status).toBe('STOPPED');
    expect(stopped.inFlight).toHaveLength(2);
    expect(stopped.admitted).toBe(5);
  }, 120_000);

  it('keeps each batch to its in-flight limit and tops batches up in turn', async () => {
    const make = (name: string, count: number) => {
      const path = join(dir, `${backend}-${name}.jsonl`);
      writeFileSync(
        path,
        `${Array.from({ length: count }, (_, i) => JSON.stringify({ id: `${name}${i}`, query: `TTL:(${name} ${i})` })).join('\n')}\n`,
      );
      return ingestFile(world, path, 'jsonl', { inFlight: 4 }, `${backend}-${name}`);
    };
    const large = await make('large', 60);
    const small = await make('small', 10);
    await admitAll(world.deps);
    const views = async () => [
      (await world.deps.batches.get(large.id)) as Batch,
      (await world.deps.batches.get(small.id)) as Batch,
    ];
    let [a, b] = await views();
    expect(a!.inFlight).toHaveLength(4);
    expect(b!.inFlight).toHaveLength(4);
    // Both progress together: every round, each batch gets as many releases as it finished.
    for (let round = 0; round < 3; round++) {
      for (const jobId of [...a!.inFlight, ...b!.inFlight]) await world.finish(jobId, 'SUCCEEDED');
      await admitAll(world.deps);
      [a, b] = await views();
    }
    expect(a!.settled.succeeded).toBe(12);
    expect(b!.settled.succeeded).toBe(10);
    expect(b!.status).toBe('FINISHED');
    expect(a!.inFlight).toHaveLength(4);
  }, 120_000);
});
