// The routes that start work from the dashboard, on a real SQLite backend: a manifest checked line
// by line with its estimate and nothing stored, refusals that name the field (file name, workflow,
// another tenant), an upload started once however often it is sent, documents read one by one as a
// folder ingest reads them (the bad ones named, the rest started), and a job's input shown only
// to a caller who may see the job.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalBackend } from '../../../shared/backends/local';
import { type BatchRunner, startBatchRunner } from '../../../shared/dashboard/batch-runner';
import { startRoutes } from '../../../shared/dashboard/start-routes';
import type { EngineDeps } from '../../../shared/engine/deps';
import { submitJob } from '../../../shared/engine/job-commands';
import { emptyUsage } from '../../../shared/engine/job-record';
import { handleJobApiRequest } from '../../../shared/http/job-api';
import { localEngine, type TestEngine } from '../../support/engines';
import { makeJob } from '../../support/factories';

let engine: TestEngine;
let dir: string;
let local: LocalBackend;
let deps: EngineDeps;
let runner: BatchRunner;

const manifest = [
  JSON.stringify({ id: 'q1', query: 'TTL:(helmet)' }),
  JSON.stringify({ id: 'q2', query: 'TTL:(hinge)' }),
  JSON.stringify({ query: 'no id' }),
].join('\n');

const call = async (method: string, path: string, body?: unknown, tenant?: string) => {
  const answer = await handleJobApiRequest(
    {
      method,
      path,
      headers: { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    },
    {
      deps,
      tenant,
      requireJsonContentType: true,
      routes: startRoutes({ deps, batches: local.batches, runner, uploadsFolder: join(dir, 'uploads') }),
    },
  );
  return { status: answer.status, body: JSON.parse(String(answer.body)) };
};

beforeAll(async () => {
  engine = await localEngine();
  ({ local, deps, dir } = engine);
  runner = startBatchRunner({ deps, batches: local.batches, intervalMs: 60_000 });
});
afterAll(async () => {
  await runner.stop();
  await engine.close();
});

describe('POST /batch-uploads/check and /batch-uploads', () => {
  const body = { fileName: 'queries.jsonl', manifest, workflow: 'patent-count' };

  it('checks every line and estimates, storing nothing', async () => {
    const { status, body: checked } = await call('POST', '/batch-uploads/check', body);
    expect(status).toBe(200);
    expect(checked).toMatchObject({
      dryRun: true,
      records: 3,
      items: 2,
      problemCount: 1,
      toRun: { 'patent-count': 2 },
    });
    expect(checked.problems[0]).toMatchObject({ position: 'line 3' });
    expect(checked.estimate.calls).toBeGreaterThanOrEqual(2);
    expect((await local.batches.list({ limit: 10 })).batches).toHaveLength(0);
    expect(existsSync(join(dir, 'uploads'))).toBe(false);
  });

  it('says a line naming a document needs opflow ingest, and checks the other lines', async () => {
    const withFile = [
      JSON.stringify({ id: 'd1', file: 'disclosure.docx' }),
      JSON.stringify({ id: 'q1', query: 'TTL:(helmet)' }),
    ].join('\n');
    const { status, body: checked } = await call('POST', '/batch-uploads/check', {
      ...body,
      fileName: 'disclosures.jsonl',
      manifest: withFile,
    });
    expect(status).toBe(200);
    expect(checked).toMatchObject({ records: 2, items: 1, problemCount: 1 });
    expect(checked.problems[0]).toMatchObject({ position: 'line 1', id: 'd1' });
    expect(checked.problems[0].reason).toMatch(
      /^file: disclosure\.docx cannot be read: documents are not uploaded with a manifest from the dashboard .*run opflow ingest/,
    );
  });

  it('refuses what it cannot take, naming the field', async () => {
    const named = await call('POST', '/batch-uploads/check', { ...body, fileName: 'queries.exe' });
    expect(named.status).toBe(400);
    expect(named.body.error.message).toMatch(/^body\.fileName: must be the name of a \.jsonl/);
    const unknown = await call('POST', '/batch-uploads/check', { ...body, workflow: 'novelty-chek' });
    expect(unknown.body.error.message).toMatch(
      /^body\.workflow: no workflow novelty-chek \(did you mean novelty-check\?\)/,
    );
    const budget = await call('POST', '/batch-uploads/check', { ...body, failureBudget: 'lots' });
    expect(budget.body.error.message).toMatch(/^body\.failureBudget: /);
    const other = await call('POST', '/batch-uploads', { ...body, tenant: 'acme' }, 'globex');
    expect(other.status).toBe(403);
    const empty = await call('POST', '/batch-uploads', { ...body, manifest: JSON.stringify({ query: 'x' }) });
    expect(empty).toMatchObject({ status: 400 });
    expect(empty.body.error.message).toContain('no line of it can be used');
  });

  it('refuses to start a batch whose estimate passes its cost cap, naming maxUnits', async () => {
    // An earlier patent-count job that billed 40 units: the estimate learns from it.
    await deps.store.create(
      makeJob({
        workflow: 'patent-count',
        status: 'SUCCEEDED',
        input: { inline: { query: 'TTL:(earlier)' } },
        usage: { ...emptyUsage(), calls: 2, billedUnits: 40 },
      }),
    );
    const capped = await call('POST', '/batch-uploads', { ...body, batchName: 'capped', maxUnits: 50 });
    expect(capped.status).toBe(409);
    expect(capped.body.error).toMatchObject({
      code: 'over-budget',
      issues: [{ path: 'body.maxUnits', message: expect.stringMatching(/about 80 units, over this cap/) }],
    });
    expect(await local.batches.get('capped')).toBeUndefined();
  });

  it('starts the batch once, however often the same file is sent', async () => {
    const first = await call('POST', '/batch-uploads', { ...body, batchName: 'queries' });
    expect(first.status).toBe(201);
    expect(first.body.batch).toMatchObject({ id: 'queries', workflow: 'patent-count' });
    const again = await call('POST', '/batch-uploads', { ...body, batchName: 'queries' });
    expect(again.status).toBe(201);
    // The runner reads the source in the background: wait for its two items.
    for (let n = 0; n < 100 && ((await local.batches.get('queries'))?.items ?? 0) < 2; n++)
      await new Promise((resolve) => setTimeout(resolve, 50));
    expect((await local.batches.get('queries'))?.items).toBe(2);
    expect((await local.batches.list({ limit: 10 })).batches).toHaveLength(1);
  });
});

describe('documents uploaded as a batch (POST /batch-uploads/check and /batch-uploads)', () => {
  const base64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');
  const body = {
    workflow: 'patent-count',
    documents: [
      { name: 'helmet.txt', content: base64('TTL:(folding helmet)') },
      { name: 'valve.md', content: base64('# Valve\n\nTTL:(check valve)\n') },
      { name: 'broken.docx', content: base64('this is not a zip file') },
      { name: 'empty.pdf', content: '' },
    ],
  };

  it('reads each document as a folder ingest does, names the ones it cannot use, and stores nothing', async () => {
    const checked = await call('POST', '/batch-uploads/check', body);
    expect(checked.status).toBe(200);
    expect(checked.body).toMatchObject({ dryRun: true, records: 4, items: 2, toRun: { 'patent-count': 2 } });
    expect(checked.body.problems.map((problem: { position: string; reason: string }) => problem)).toEqual([
      expect.objectContaining({
        position: 'broken.docx',
        reason: expect.stringMatching(/cannot read the docx/),
      }),
      expect.objectContaining({
        position: 'empty.pdf',
        reason: expect.stringMatching(/the document is empty/),
      }),
    ]);
    expect(checked.body.batchId).toMatch(/^documents-[0-9a-f]{8}$/);
    expect(await local.batches.get(checked.body.batchId)).toBeUndefined();
  });

  it('refuses a name twice, a name with a folder and what is not base64, naming the field', async () => {
    const twice = await call('POST', '/batch-uploads/check', {
      ...body,
      documents: [body.documents[0], { ...body.documents[0], name: 'HELMET.txt' }],
    });
    expect(twice.status).toBe(400);
    expect(twice.body.error.message).toMatch(/^body\.documents\[1\]\.name: HELMET\.txt is there twice/);
    const folder = await call('POST', '/batch-uploads/check', {
      ...body,
      documents: [{ name: '../escape.txt', content: base64('x') }],
    });
    expect(folder.status).toBe(400);
    expect(folder.body.error.message).toMatch(/documents\.0\.name|documents\[0\]\.name/);
    const text = await call('POST', '/batch-uploads/check', {
      ...body,
      documents: [{ name: 'a.txt', content: 'not base64!' }],
    });
    expect(text.status).toBe(400);
    expect(text.body.error.message).toMatch(/must be the document in base64/);
  });

  it('starts the readable documents as a batch once, keeping them as its folder', async () => {
    const first = await call('POST', '/batch-uploads', { ...body, batchName: 'disclosures' });
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({ batch: { id: 'disclosures' }, items: 2, problemCount: 2 });
    const again = await call('POST', '/batch-uploads', { ...body, batchName: 'disclosures' });
    expect(again.status).toBe(201);
    for (let n = 0; n < 100 && ((await local.batches.get('disclosures'))?.items ?? 0) < 2; n++)
      await new Promise((resolve) => setTimeout(resolve, 50));
    const batch = (await local.batches.get('disclosures'))!;
    expect(batch.items).toBe(2);
    expect(batch.source.kind).toBe('folder');
    expect(existsSync(join(batch.source.uri, 'helmet.txt'))).toBe(true);
    const problems = await local.batches.listProblems('disclosures', batch.run);
    expect(problems.map((problem) => problem.position).sort()).toEqual(['broken.docx', 'empty.pdf']);
    const none = await call('POST', '/batch-uploads', { ...body, documents: body.documents.slice(2) });
    expect(none.status).toBe(400);
    expect(none.body.error.message).toContain('body.documents: none of them can be used');
  });
});

describe('GET /jobs/{id}/input', () => {
  it("answers a job's input to who may see the job, and nobody else", async () => {
    const { job } = await submitJob(deps, {
      workflow: 'patent-count',
      input: { query: 'TTL:(folding helmet)' },
      tenant: 'acme',
      label: 'helmets',
    });
    const own = await call('GET', `/jobs/${job.id}/input`, undefined, 'acme');
    expect(own).toMatchObject({
      status: 200,
      body: { workflow: 'patent-count', label: 'helmets', input: { query: 'TTL:(folding helmet)' } },
    });
    expect((await call('GET', `/jobs/${job.id}/input`, undefined, 'globex')).status).toBe(404);
    expect((await call('GET', '/jobs/not a job/input')).status).toBe(404);
  });
});
