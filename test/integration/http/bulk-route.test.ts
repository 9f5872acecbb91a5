// POST /jobs/bulk on the framework-free job API over the local backend (real SQLite): the dry run
// then the confirmed call, answers held to their OpenAPI schemas, a changed set refused with the new
// dry run, and a tenant-bound caller acting only on its own tenant's jobs.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cancelJob, submitJob } from '../../../shared/engine/job-commands';
import { answerSchemas } from '../../../shared/http/answer-schemas';
import { handleJobApiRequest, type JobApiOptions } from '../../../shared/http/job-api';
import { localEngine, type TestEngine } from '../../support/engines';

let engine: TestEngine;
beforeEach(async () => {
  engine = await localEngine();
});
afterEach(async () => engine.close());

async function bulk(body: unknown, options: Partial<JobApiOptions> = {}) {
  const response = await handleJobApiRequest(
    {
      method: 'POST',
      path: '/jobs/bulk',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    },
    { deps: engine.deps, requireJsonContentType: true, ...options },
  );
  return { status: response.status, json: JSON.parse(response.body) };
}

async function cancelled(tenant: string): Promise<string> {
  const { job } = await submitJob(engine.deps, {
    workflow: 'patent-count',
    input: { query: `TTL:(${tenant} ${Math.random()})` },
    tenant,
  });
  await cancelJob(engine.deps, job.id);
  return job.id;
}

describe('POST /jobs/bulk', () => {
  it('a dry run, then the confirmed call; a changed set is refused with the new dry run', async () => {
    for (let i = 0; i < 3; i++) await cancelled('default');
    const dry = await bulk({ action: 'retry', dryRun: true, options: { deadlineMs: 600_000 } });
    expect(dry.status).toBe(200);
    expect(answerSchemas.bulk.parse(dry.json)).toMatchObject({ dryRun: true, count: 3 });
    expect(dry.json.sample[0].createdAt).toMatch(/^\d{4}-\d{2}-\d{2}T/);

    const blind = await bulk({ action: 'retry' });
    expect(blind.status).toBe(400);
    expect(blind.json.error.message).toMatch(
      /body.confirm: a bulk action runs only on what a dry run counted/,
    );

    await cancelled('default');
    const confirm = { count: dry.json.count, selection: dry.json.selection };
    const changed = await bulk({ action: 'retry', options: { deadlineMs: 600_000 }, confirm });
    expect(changed.status).toBe(409);
    expect(answerSchemas.bulkChanged.parse(changed.json)).toMatchObject({
      error: { code: 'selection-changed' },
      preview: { count: 4 },
    });

    const run = await bulk({
      action: 'retry',
      options: { deadlineMs: 600_000 },
      confirm: { count: 4, selection: changed.json.preview.selection },
    });
    expect(run.status).toBe(200);
    expect(answerSchemas.bulk.parse(run.json)).toMatchObject({
      dryRun: false,
      count: 4,
      done: 4,
      skipped: 0,
    });
    const listed = await engine.deps.store.list({ status: 'QUEUED' });
    expect(listed.jobs).toHaveLength(4);
  });

  it('a tenant-bound caller counts and acts on its own jobs only; naming another tenant is refused', async () => {
    const own = [await cancelled('lamps'), await cancelled('lamps')];
    const other = await cancelled('hinges');
    const dry = await bulk({ action: 'retry', dryRun: true }, { tenant: 'lamps' });
    expect(dry.json).toMatchObject({ count: 2, where: { tenant: 'lamps' } });
    expect(dry.json.sample.map((job: { id: string }) => job.id).sort()).toEqual([...own].sort());
    const foreign = await bulk(
      { action: 'retry', dryRun: true, where: { tenant: 'hinges' } },
      { tenant: 'lamps' },
    );
    expect(foreign.status).toBe(403);
    expect(foreign.json.error.message).toMatch(/only act on jobs of tenant lamps/);
    const run = await bulk(
      { action: 'retry', confirm: { count: dry.json.count, selection: dry.json.selection } },
      { tenant: 'lamps' },
    );
    expect(run.json).toMatchObject({ done: 2 });
    expect((await engine.deps.store.get(other))!.status).toBe('CANCELLED');
    for (const id of own) expect((await engine.deps.store.get(id))!.status).toBe('QUEUED');
  });

  it('is a write like any other: a body that is not JSON is refused', async () => {
    const response = await handleJobApiRequest(
      {
        method: 'POST',
        path: '/jobs/bulk',
        headers: { 'content-type': 'text/plain' },
        body: '{"action":"cancel","dryRun":true}',
      },
      { deps: engine.deps, requireJsonContentType: true },
    );
    expect(response.status).toBe(415);
  });
});
