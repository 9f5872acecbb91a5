// The bundled functions on emulators, end to end: jobs created through the API, run by the bundled
// step worker under a simulated SQS event source, answered through the API, reports in S3, logs
// and metrics as CloudWatch would receive them.
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lambdaContext } from '../../../scripts/lambda/lambda-events';
import type { Job, PendingSelection } from '../../../shared/engine/job-record';
import { freshFetch, noKeepAlive } from '../../support/fresh-fetch';
import { REAL_PROCESS_TIMEOUT_MS } from '../../support/timeouts';
import { AwsWorld, newIdempotencyKey, T0, TENANT_KEY } from './harness/aws-world';

let world: AwsWorld;
beforeAll(async () => {
  world = await AwsWorld.start();
}, REAL_PROCESS_TIMEOUT_MS);
afterAll(async () => {
  await world?.stop();
});

const novelty = {
  workflow: 'novelty-check',
  input: {
    text: 'A foldable phone hinge with two rotation axes and a friction damper that holds any opening angle.',
  },
  label: 'hinge.md',
};
const findSolution = {
  workflow: 'find-solution',
  input: { problem: 'Lithium battery packs swell at high temperature; how can swelling be limited?' },
  selection: { mode: 'manual' },
};

async function fetchText(url: string) {
  const answer = await request(url, { dispatcher: noKeepAlive });
  return { status: answer.statusCode, type: answer.headers['content-type'], text: await answer.body.text() };
}

describe('opflow on AWS: workflows end to end (bundled functions, emulators, sandbox)', {
  timeout: REAL_PROCESS_TIMEOUT_MS,
}, () => {
  it('runs a novelty check to the end and keeps its report in S3, linked through the API', async () => {
    const id = await world.submit(novelty);
    const [job] = await world.settle([id]);
    expect(job?.status).toBe('SUCCEEDED');
    // Hours of upstream work and polling passed on the shared clock, not in real time.
    expect(world.now()).toBeGreaterThan(T0 + 5 * 60_000);

    const keys = await world.reports.list(`reports/${id}/`);
    for (const name of ['report.html', 'report.md', 'result.json'])
      expect(keys).toContain(`reports/${id}/${name}`);
    expect(keys.some((key) => key.startsWith(`reports/${id}/attachments/`))).toBe(true);

    const report = await world.api('GET', `/jobs/${id}/report`);
    expect(report.status).toBe(200);
    expect(report.body.expiresInSeconds).toBe(900);
    const files = report.body.files as { name: string; url: string }[];
    expect(files.map((file) => file.name)).toEqual(expect.arrayContaining(['report.html', 'result.json']));
    const html = await fetchText(files.find((file) => file.name === 'report.html')!.url);
    expect(html).toMatchObject({ status: 200, type: 'text/html; charset=utf-8' });
    expect(html.text).toContain('<html');
    const result = JSON.parse((await fetchText(files.find((file) => file.name === 'result.json')!.url)).text);
    expect(result.job).toMatchObject({ id, workflow: 'novelty-check', status: 'SUCCEEDED' });

    // The item keeps the record and pointers; the steps' data is in S3.
    const item = await world.emulators.clients.documents.send(
      new GetCommand({ TableName: world.env.OPFLOW_TABLE_NAME, Key: { PK: `JOB#${id}`, SK: 'JOB' } }),
    );
    const itemBytes = Buffer.byteLength(JSON.stringify(item.Item));
    expect(itemBytes).toBeLessThan(16 * 1024);
    const stepKeys = keys.filter((key) => key.startsWith(`reports/${id}/steps/`));
    expect(stepKeys.length).toBeGreaterThan(3);
    expect(job!.outputs).toEqual(expect.arrayContaining(stepKeys));
    let stepBytes = 0;
    for (const key of stepKeys) stepBytes += (await world.reports.get(key))!.body.byteLength;
    expect(stepBytes).toBeGreaterThan(itemBytes);
    expect(item.Item?.expiresAt).toBe(Math.floor(job!.finishedAt! / 1000) + 30 * 24 * 3600);
  });

  it('runs a find-solution that waits for a person, answered through the API', async () => {
    const id = await world.submit(findSolution);
    let job = (await world.settle([id]))[0]!;
    let answered = 0;
    while (job.status === 'AWAITING_INPUT') {
      const shown = await world.api('GET', `/jobs/${id}`);
      const pending = (shown.body.job as { pending: PendingSelection }).pending;
      expect(pending.options.length).toBeGreaterThan(0);

      const refused = await world.api('POST', `/jobs/${id}/selection`, {
        body: { selected: ['no-such-option'] },
      });
      expect(refused.status).toBe(400);
      expect(refused.body.error?.message).toContain(pending.prompt);

      const chosen = pending.options.slice(0, Math.max(1, pending.min)).map((option) => option.id);
      const accepted = await world.api('POST', `/jobs/${id}/selection`, { body: { selected: chosen } });
      expect(accepted.status).toBe(200);
      expect((accepted.body.job as Job).status).not.toBe('AWAITING_INPUT');
      answered += 1;
      job = (await world.settle([id]))[0]!;
    }
    expect(answered).toBeGreaterThanOrEqual(1);
    expect(job.status).toBe('SUCCEEDED');
    expect(Object.keys(job.selections).length).toBe(answered);
    expect(await world.reports.get(`reports/${id}/report.html`)).toBeDefined();
  });

  it('reports each finished job once in the metrics, and never logs the key', async () => {
    const totals = world.metricTotals();
    expect(totals.JobSucceeded).toBe(2);
    expect(totals.JobFailed ?? 0).toBe(0);
    expect(totals.StepsRun).toBeGreaterThan(10);
    expect(totals.UpstreamCalls).toBeGreaterThan(10);
    expect(totals.BilledUnits).toBe(world.sandbox.ledger.billedUnits());
    expect(totals.BilledUnits).toBeGreaterThan(0);
    for (const line of world.lines.filter((line) => line._aws)) {
      expect(
        (line._aws as { CloudWatchMetrics: { Namespace: string; Dimensions: string[][] }[] })
          .CloudWatchMetrics[0],
      ).toMatchObject({
        Namespace: 'opflow',
        Dimensions: [['service']],
      });
    }
    const stepLines = world.logLines().filter((line) => line.message === 'step done');
    expect(stepLines.length).toBeGreaterThan(10);
    for (const line of stepLines) {
      expect(line).toMatchObject({
        service: 'opflow',
        jobId: expect.any(String),
        correlation_id: expect.any(String),
      });
      expect(line.step).toEqual(expect.any(String));
    }
    expect(
      stepLines.some((line) => typeof line.operation === 'string' && String(line.operation).startsWith('ai')),
    ).toBe(true);
    // The API's lines carry the request's correlation id, and the job it was about.
    const apiLines = world.logLines().filter((line) => line.message === 'api request');
    expect(apiLines.length).toBeGreaterThan(3);
    for (const line of apiLines) {
      expect(line).toMatchObject({ service: 'opflow', correlation_id: expect.any(String) });
      if (String(line.path).startsWith('/jobs/')) expect(String(line.path)).toContain(String(line.jobId));
    }
    const creates = apiLines.filter((line) => line.method === 'POST' && line.path === '/jobs');
    expect(creates.length).toBe(2);
    for (const line of creates) expect(line.jobId).toEqual(expect.any(String));
    expect(JSON.stringify(world.lines)).not.toContain(TENANT_KEY);
  });
});

describe('opflow on AWS: the job API', { timeout: REAL_PROCESS_TIMEOUT_MS }, () => {
  it('returns the same job for the same Idempotency-Key', async () => {
    const key = newIdempotencyKey();
    const first = await world.api('POST', '/jobs', { body: novelty, headers: { 'idempotency-key': key } });
    const second = await world.api('POST', '/jobs', {
      body: { ...novelty, label: 'other' },
      headers: { 'idempotency-key': key },
    });
    expect(first.status).toBe(201);
    expect(second.status).toBe(200);
    expect((second.body.job as Job).id).toBe((first.body.job as Job).id);
    expect(second.body.created).toBe(false);
    expect(first.body.job).not.toHaveProperty('input');
  });

  it('cancels a job, after which the worker leaves it alone', async () => {
    const id = await world.submit(novelty);
    const cancelled = await world.api('POST', `/jobs/${id}/cancel`);
    expect(cancelled.status).toBe(200);
    expect((cancelled.body.job as Job).status).toBe('CANCELLED');
    const again = await world.api('POST', `/jobs/${id}/cancel`);
    expect(again.status).toBe(409);
    expect(again.body.error?.message).toMatch(/already CANCELLED/);
    const [job] = await world.settle([id], { drain: true });
    expect(job).toMatchObject({ status: 'CANCELLED', version: 2 });
    const report = await world.api('GET', `/jobs/${id}/report`);
    expect(report.status).toBe(409);
    expect(report.body.error?.message).toMatch(/no report: it ended CANCELLED/);
  });

  it('lists jobs by status with a cursor', async () => {
    const page = await world.api('GET', '/jobs?status=SUCCEEDED&limit=1');
    expect(page.status).toBe(200);
    expect((page.body.jobs as Job[]).map((job) => job.status)).toEqual(['SUCCEEDED']);
    const next = await world.api('GET', `/jobs?status=SUCCEEDED&limit=1&cursor=${page.body.cursor}`);
    expect((next.body.jobs as Job[]).length).toBe(1);
    expect((next.body.jobs as Job[])[0]?.id).not.toBe((page.body.jobs as Job[])[0]?.id);
    const bad = await world.api('GET', '/jobs?cursor=nonsense');
    expect(bad.status).toBe(400);
    expect(bad.body.error?.message).toMatch(/query.cursor/);
  });

  it('refuses bad requests with clear 4xx answers', async () => {
    const cases: [string, string, unknown, number, RegExp][] = [
      ['POST', '/jobs', { workflow: 'nope', input: {} }, 400, /unknown workflow "nope"/],
      ['POST', '/jobs', { workflow: 'novelty-check', input: { text: '' } }, 400, /input.text/],
      [
        'POST',
        '/jobs',
        { workflow: 'novelty-check', input: { text: 'x' }, surprise: 1 },
        400,
        /body.surprise: unknown field/,
      ],
      ['GET', '/jobs/01ARZ3NDEKTSV4RRFFQ69G5FAV', undefined, 404, /no job 01ARZ3NDEKTSV4RRFFQ69G5FAV/],
      ['GET', '/jobs?status=DONE', undefined, 400, /query.status/],
      ['DELETE', '/jobs', undefined, 405, /use POST, GET/],
      ['GET', '/nothing', undefined, 404, /no route/],
    ];
    for (const [method, path, body, status, message] of cases) {
      const answer = await world.api(method, path, body === undefined ? {} : { body });
      expect({ method, path, status: answer.status }).toEqual({ method, path, status });
      expect(answer.body.error?.message).toMatch(message);
    }
    const notJson = await freshFetch(`${world.gateway.url}/jobs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"workflow":',
    });
    expect(notJson.status).toBe(400);
    expect(((await notJson.json()) as { error: { code: string } }).error.code).toBe('invalid-json');
  });

  it('refuses an event that is not an HTTP API payload 2.0 (a misconfigured integration)', async () => {
    const api = await world.bundles.load<{
      handler: (event: unknown, context: unknown) => Promise<{ statusCode: number }>;
    }>('api');
    const restApiEvent = {
      resource: '/jobs',
      path: '/jobs',
      httpMethod: 'GET',
      requestContext: { requestId: 'r-1' },
    };
    const answer = await api.handler(restApiEvent, lambdaContext('opflow-api'));
    expect(answer.statusCode).toBe(500);
    expect(
      world.logLines().some((line) => String(line.message).startsWith('not an HTTP API (payload 2.0) event')),
    ).toBe(true);
  });

  it("keeps a token-bound caller to its own tenant's jobs", async () => {
    const someoneElses = await world.submit(novelty);
    world.gateway.claims = { sub: 'user-1', tenant: 'acme' };
    try {
      expect((await world.api('GET', `/jobs/${someoneElses}`)).status).toBe(404);
      expect((await world.api('POST', `/jobs/${someoneElses}/cancel`)).status).toBe(404);
      expect((await world.api('GET', '/jobs?tenant=default')).status).toBe(403);
      const listed = await world.api('GET', '/jobs');
      expect((listed.body.jobs as Job[]).every((job) => job.tenant === 'acme')).toBe(true);
      const created = await world.api('POST', '/jobs', { body: novelty });
      expect((created.body.job as Job).tenant).toBe('acme');
    } finally {
      world.gateway.claims = undefined;
    }
  });
});

describe('opflow on AWS: the sweeper (bundled, every simulated minute)', {
  timeout: REAL_PROCESS_TIMEOUT_MS,
}, () => {
  it('sends a job whose message was lost to the step worker again', async () => {
    const id = await world.submit(novelty);
    expect(await world.loseMessagesOf(id)).toBe(1);
    const sweeps = world.sweeps;
    const [job] = await world.settle([id]);
    expect(job?.status).toBe('SUCCEEDED');
    expect(world.sweeps).toBeGreaterThan(sweeps);
  });

  it('fails a job nobody answered once its deadline has passed', async () => {
    const id = await world.submit({ ...findSolution, deadlineMs: 3 * 3600_000 });
    const [parked] = await world.settle([id]);
    expect(parked?.status).toBe('AWAITING_INPUT');
    // Past the deadline and the sweeper's 30-second grace: its next run brings the job back.
    world.advanceTo(parked!.deadlineAt + 31_000);
    const swept = await world.sweep();
    expect(swept.expired).toBeGreaterThanOrEqual(1);
    let job = parked!;
    for (let round = 0; round < 50 && job.status === 'AWAITING_INPUT'; round++) {
      await world.deliverOnce();
      job = (await world.store.get(id))!;
    }
    expect(job).toMatchObject({
      status: 'FAILED',
      lastError: { kind: 'deadline', message: 'the job passed its deadline' },
    });
    const shown = await world.api('GET', `/jobs/${id}`);
    expect((shown.body.job as Job).status).toBe('FAILED');
  });
});
