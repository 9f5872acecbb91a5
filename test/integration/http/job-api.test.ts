// The framework-free job API on the local backend (real SQLite file, real report folder): the
// same routes the Lambda `api` serves, without any AWS, to show it depends only on the engine.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { LocalBackend } from '../../../shared/backends/local';
import type { EngineDeps } from '../../../shared/engine/deps';
import type { Job } from '../../../shared/engine/job-record';
import { handleJobApiRequest, type JobApiOptions, type JobApiRequest } from '../../../shared/http/job-api';
import { contractJob } from '../../contract/ports.contract';
import { localEngine, type TestEngine } from '../../support/engines';

const T0 = Date.UTC(2026, 0, 5, 9, 0, 0);
let engine: TestEngine;
let local: LocalBackend;
let deps: EngineDeps;

beforeEach(async () => {
  engine = await localEngine({ clock: { now: () => T0 } });
  ({ local, deps } = engine);
});
afterEach(async () => {
  await engine.close();
});

async function call(
  request: Partial<JobApiRequest> & { method: string; path: string },
  options: Partial<JobApiOptions> = {},
) {
  const body = request.body;
  const response = await handleJobApiRequest(
    { headers: body ? { 'content-type': 'application/json' } : {}, ...request },
    { deps, ...options },
  );
  return { ...response, json: JSON.parse(response.body) as ApiBody };
}

/** The answers' shapes, as far as these tests read them. */
interface ApiBody {
  job: Job;
  jobs: Job[];
  files: { name: string; url: string }[];
  expiresInSeconds: number;
  error: { status: number; code: string; message: string };
}

const novelty = JSON.stringify({ workflow: 'novelty-check', input: { text: 'A hinge.' } });

describe('job API routes', () => {
  it('creates a job from the API, queued for a worker', async () => {
    const created = await call({ method: 'POST', path: '/jobs', body: novelty });
    expect(created.status).toBe(201);
    expect(created.headers.location).toBe(`/jobs/${created.json.job.id}`);
    expect(created.json.job).toMatchObject({
      workflow: 'novelty-check',
      tenant: 'default',
      status: 'QUEUED',
      source: 'api',
    });
    expect(await local.store.get(created.json.job.id)).toMatchObject({ source: 'api' });
    expect(local.queue.claim(T0, 10, 1_000).map((claimed) => claimed.message.jobId)).toEqual([
      created.json.job.id,
    ]);
  });

  it('answers a repeated Idempotency-Key with its job, and the key reused for another request with 409', async () => {
    const headers = { 'content-type': 'application/json', 'idempotency-key': 'disclosure-42' };
    const first = await call({ method: 'POST', path: '/jobs', body: novelty, headers });
    expect(first.status).toBe(201);
    const again = await call({ method: 'POST', path: '/jobs', body: novelty, headers });
    expect(again.status).toBe(200);
    expect(again.json.job.id).toBe(first.json.job.id);
    const otherText = JSON.stringify({ workflow: 'novelty-check', input: { text: 'A damper.' } });
    const otherWorkflow = JSON.stringify({ workflow: 'patent-count', input: { query: 'hinge' } });
    for (const body of [otherText, otherWorkflow]) {
      const reused = await call({ method: 'POST', path: '/jobs', body, headers });
      expect(reused.status).toBe(409);
      expect(reused.json.error.code).toBe('conflict');
      expect(reused.json.error.message).toContain(
        `idempotency key "disclosure-42" was used for job ${first.json.job.id} with a different request`,
      );
    }
    // A large input kept in the report store is compared too.
    const big = JSON.stringify({
      workflow: 'novelty-check',
      input: { text: `A hinge. ${'x'.repeat(40_000)}` },
    });
    const bigHeaders = { ...headers, 'idempotency-key': 'big-one' };
    const bigFirst = await call({ method: 'POST', path: '/jobs', body: big, headers: bigHeaders });
    expect(bigFirst.status).toBe(201);
    expect((await call({ method: 'POST', path: '/jobs', body: big, headers: bigHeaders })).status).toBe(200);
    expect((await call({ method: 'POST', path: '/jobs', body: novelty, headers: bigHeaders })).status).toBe(
      409,
    );
  });

  it('bounds deadlineMs to a year', async () => {
    for (const deadlineMs of [9007199254740991, 366 * 86_400_000 + 1, 1e300]) {
      const body = JSON.stringify({ workflow: 'patent-count', input: { query: 'x' }, deadlineMs });
      const refused = await call({ method: 'POST', path: '/jobs', body });
      expect(refused.status, String(deadlineMs)).toBe(400);
      expect(refused.json.error.message).toMatch(/^body\.deadlineMs: /);
    }
    const body = JSON.stringify({
      workflow: 'patent-count',
      input: { query: 'x' },
      deadlineMs: 366 * 86_400_000,
    });
    expect((await call({ method: 'POST', path: '/jobs', body })).status).toBe(201);
  });

  it('answers a selection, refusing options that were not offered', async () => {
    const job: Job = contractJob({
      status: 'AWAITING_INPUT',
      step: 'confirm-features',
      pending: {
        step: 'confirm-features',
        nextStep: 'search-elements',
        prompt: 'Which features?',
        options: [
          { id: 'f1', label: 'hinge', preselected: true },
          { id: 'f2', label: 'damper', preselected: false },
        ],
        min: 1,
        max: 2,
        offeredAt: T0,
      },
    });
    await local.store.create(job);
    const refused = await call({
      method: 'POST',
      path: `/jobs/${job.id}/selection`,
      body: '{"selected":["f9"]}',
    });
    expect(refused.status).toBe(400);
    expect(refused.json.error.message).toMatch(/Which features\?.*f9/);
    const shapeless = await call({
      method: 'POST',
      path: `/jobs/${job.id}/selection`,
      body: '{"choose":["f1"]}',
    });
    expect(shapeless.status).toBe(400);
    expect(shapeless.json.error.message).toMatch(/body.selected/);
    const answered = await call({
      method: 'POST',
      path: `/jobs/${job.id}/selection`,
      body: '{"selected":["f2"]}',
    });
    expect(answered.status).toBe(200);
    expect(answered.json.job).toMatchObject({
      step: 'search-elements',
      selections: { 'confirm-features': ['f2'] },
    });
    const again = await call({
      method: 'POST',
      path: `/jobs/${job.id}/selection`,
      body: '{"selected":["f2"]}',
    });
    expect(again.status).toBe(409);
  });

  it('retries a failed job from its step, or from the start, and refuses one that succeeded', async () => {
    const job = contractJob({
      workflow: 'novelty-check',
      status: 'FAILED',
      step: 'confirm-features',
      finishedAt: T0,
      lastError: { step: 'confirm-features', kind: 'server', message: 'busy', retryable: true, at: T0 },
    });
    await local.store.create(job);
    const retried = await call({ method: 'POST', path: `/jobs/${job.id}/retry` });
    expect(retried.status).toBe(200);
    expect(retried.json.job).toMatchObject({ status: 'QUEUED', step: 'confirm-features' });
    expect(retried.json.job.runs).toEqual([
      expect.objectContaining({ status: 'FAILED', step: 'confirm-features', fromStart: false }),
    ]);
    const running = await call({ method: 'POST', path: `/jobs/${job.id}/retry` });
    expect(running.status).toBe(409);
    expect(running.json.error.message).toMatch(/QUEUED and has not finished/);
    await call({ method: 'POST', path: `/jobs/${job.id}/cancel` });
    const fromStart = await call({
      method: 'POST',
      path: `/jobs/${job.id}/retry`,
      body: '{"fromStart":true}',
    });
    expect(fromStart.json.job).toMatchObject({ status: 'QUEUED', step: 'submit' });
    expect(fromStart.json.job.runs).toHaveLength(2);
    const wrong = await call({ method: 'POST', path: `/jobs/${job.id}/retry`, body: '{"from":"start"}' });
    expect(wrong.status).toBe(400);
    const done = contractJob({ status: 'SUCCEEDED', finishedAt: T0 });
    await local.store.create(done);
    const refused = await call({ method: 'POST', path: `/jobs/${done.id}/retry` });
    expect(refused.status).toBe(409);
    expect(refused.json.error.message).toMatch(/it SUCCEEDED/);
  });

  it('links to the report files of a finished job, or to one of them', async () => {
    const job = contractJob({
      status: 'SUCCEEDED',
      finishedAt: T0,
      outputs: [
        `reports/X/steps/submit.json`,
        'reports/X/report.html',
        'reports/X/attachments/report.pdf',
      ].map((key) => key.replace('X', 'JOBID')),
    });
    const finished = { ...job, outputs: job.outputs.map((key) => key.replace('JOBID', job.id)) };
    await local.store.create(finished);
    for (const key of finished.outputs) await local.reports.put(key, 'x', 'text/plain');
    const all = await call({ method: 'GET', path: `/jobs/${job.id}/report` }, { linkTtlSeconds: 60 });
    expect(all.status).toBe(200);
    expect(all.json.expiresInSeconds).toBe(60);
    expect(all.json.files.map((file) => file.name)).toEqual(['report.html', 'attachments/report.pdf']);
    const one = await call({ method: 'GET', path: `/jobs/${job.id}/report`, query: { file: 'report.pdf' } });
    expect(one.json.files).toHaveLength(1);
    const none = await call({ method: 'GET', path: `/jobs/${job.id}/report`, query: { file: 'nope.html' } });
    expect(none.status).toBe(404);
  });

  it('binds a token-bound caller to its tenant', async () => {
    const other = contractJob({ tenant: 'globex' });
    await local.store.create(other);
    const bound = { tenant: 'acme' };
    expect((await call({ method: 'GET', path: `/jobs/${other.id}` }, bound)).status).toBe(404);
    const forbidden = await call(
      {
        method: 'POST',
        path: '/jobs',
        body: JSON.stringify({ workflow: 'novelty-check', input: { text: 'x' }, tenant: 'globex' }),
      },
      bound,
    );
    expect(forbidden.status).toBe(403);
    const created = await call({ method: 'POST', path: '/jobs', body: novelty }, bound);
    expect(created.json.job.tenant).toBe('acme');
    const listed = await call({ method: 'GET', path: '/jobs' }, bound);
    expect(listed.json.jobs.map((job) => job.id)).toEqual([created.json.job.id]);
  });

  it.each([
    [
      { method: 'POST', path: '/jobs', body: novelty, headers: { 'content-type': 'text/plain' } },
      415,
      /send JSON/,
    ],
    [
      { method: 'POST', path: '/jobs', body: 'x'.repeat(2_000_000) },
      413,
      /^the request body is over 1 MiB \(1048576 bytes\), this API's limit\. .*give each image as \{"url"/,
    ],
    [
      { method: 'POST', path: '/jobs', body: novelty, headers: { 'idempotency-key': 'has space' } },
      400,
      /header.Idempotency-Key/,
    ],
    [
      {
        method: 'POST',
        path: '/jobs',
        body: '{"workflow":"novelty-check","input":{"text":"x"},"source":"cli"}',
      },
      400,
      /body.source/,
    ],
    [{ method: 'GET', path: '/jobs', query: { limit: '0' } }, 400, /query.limit/],
    [{ method: 'GET', path: '/jobs', query: { colour: 'red' } }, 400, /query.colour: unknown field/],
    [{ method: 'GET', path: '/jobs/not%ZZvalid' }, 400, /not valid URL encoding/],
    [{ method: 'GET', path: '/jobs/a.b' }, 400, /path.id: is not a job id/],
    [{ method: 'PUT', path: '/jobs/01ARZ3NDEKTSV4RRFFQ69G5FAV/cancel' }, 405, /use POST/],
  ])('refuses %j with %i', async (request, status, message) => {
    const answer = await call(request as JobApiRequest);
    expect(answer.status).toBe(status);
    expect(answer.json.error).toMatchObject({ status, message: expect.stringMatching(message) });
    if (status === 405) expect(answer.headers.allow).toBe('POST');
  });

  it('answers 500 without details when the store fails, and logs what happened', async () => {
    const logged: unknown[] = [];
    deps = {
      ...deps,
      store: { ...deps.store, get: async () => Promise.reject(new Error('disk on fire')) },
      log: { debug() {}, info() {}, warn() {}, error: (message, fields) => logged.push([message, fields]) },
    };
    const answer = await call({ method: 'GET', path: '/jobs/01ARZ3NDEKTSV4RRFFQ69G5FAV' });
    expect(answer.status).toBe(500);
    expect(answer.body).not.toContain('disk on fire');
    expect(JSON.stringify(logged)).toContain('disk on fire');
  });
});
