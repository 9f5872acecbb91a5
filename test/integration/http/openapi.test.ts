// The job API's OpenAPI description against the routes themselves: it describes exactly the route
// table (shared/http/routes.ts, which the AWS stack's routes also come from), and the real answers of a
// real `opflow serve` server (node:http, SQLite, report folder) validate against the description's
// JSON Schemas (ajv, draft 2020-12, formats checked: every time is ISO 8601). Which routes must be
// called is the route table's: a route neither called here nor named in `heldElsewhere` fails.
import { existsSync, readFileSync } from 'node:fs';
import SwaggerParser from '@apidevtools/swagger-parser';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JOB_API_TYPES_FILE, jobApiTypes } from '../../../scripts/generate-job-api-types';
import { parseOpflowConfig } from '../../../shared/config/opflow-config';
import { batchRoutes } from '../../../shared/dashboard/batch-routes';
import { deliveryRoutes } from '../../../shared/dashboard/delivery-routes';
import { jobInputRoute } from '../../../shared/dashboard/job-input-route';
import { scheduleRoutes } from '../../../shared/dashboard/schedule-routes';
import { timelineRoutes } from '../../../shared/dashboard/timeline-route';
import { webhookSourceRoutes } from '../../../shared/dashboard/webhook-source-routes';
import type { WebhookDeliveryLog } from '../../../shared/engine/webhook-deliveries';
import { handleJobApiRequest } from '../../../shared/http/job-api';
import { routeKey, routeTable } from '../../../shared/http/routes';
import { contractJob } from '../../contract/ports.contract';
import { localEngine, startTestApi, type TestApi, type TestEngine } from '../../support/engines';
import { freshFetch } from '../../support/fresh-fetch';

type Doc = {
  openapi: string;
  components: Record<string, unknown>;
  paths: Record<
    string,
    Record<string, { responses: Record<string, { content?: Record<string, { schema?: object }> }> }>
  >;
};

let engine: TestEngine;
let api: TestApi;
let server: { url: string };
let doc: Doc;
let deliveries: WebhookDeliveryLog;
/** Webhook sources of two tenants; `watch`'s callback URL and input hold what must never be shown. */
const webhooks = parseOpflowConfig(
  {
    webhooks: {
      watch: {
        workflow: 'patent-count',
        input: { query: 'TTL:(hinge)', note: 'input-secret-never-shown' },
        callbackUrl: 'https://hooks.example/opflow?token=callback-token-never-shown',
        maxUnitsPerDay: 12,
        maxUnitsPerRun: 8,
      },
      lamp: { tenant: 'lamps', workflow: 'patent-count', input: { query: 'TTL:(lamp)' } },
    },
  },
  'opflow.config.json',
).webhooks;
const ajv = new Ajv2020({ strict: false, allErrors: true });
(addFormats as unknown as (a: Ajv2020) => void)(ajv);

beforeAll(async () => {
  engine = await localEngine();
  const { backend, deps } = engine;
  deliveries = await backend.webhookDeliveries();
  api = await startTestApi({
    engine,
    token: null,
    routes: [
      ...timelineRoutes({ deps, history: backend.history }),
      ...batchRoutes({ deps, batches: await backend.batches() }),
      jobInputRoute(deps),
      ...deliveryRoutes({ deliveries }),
      ...webhookSourceRoutes({ deps, webhooks, deliveries }),
      ...scheduleRoutes({
        deps,
        states: await backend.scheduleStates(),
        schedules: parseOpflowConfig(
          {
            schedules: [
              {
                name: 'weekly',
                cron: '0 6 * * 1',
                workflow: 'patent-count',
                input: { query: 'TTL:(helmet)' },
              },
              {
                name: 'frozen',
                cron: '0 7 * * 1',
                workflow: 'patent-count',
                input: { query: 'TTL:(helmet)' },
                paused: { reason: 'budget' },
              },
            ],
          },
          'opflow.config.json',
        ).schedules,
      }),
    ],
  });
  server = api.server;
  doc = (await (await freshFetch(`${server.url}/openapi.json`)).json()) as Doc;
});
afterAll(async () => {
  await api.close();
  await engine.close();
});

/** Calls the server and checks the answer against the description of that route and status. */
/** Records that the route answered `status` and returns that answer's description, which must exist. */
function heldAnswer(method: string, template: string, status: number) {
  held.set(`${method} ${template}`, (held.get(`${method} ${template}`) ?? new Set()).add(status));
  const described = doc.paths[template]?.[method.toLowerCase()]?.responses[String(status)];
  expect(described, `${method} ${template} answered ${status}, which is not described`).toBeDefined();
  return described!;
}

/** Every route `checked` held to its description, as `METHOD /template`, with the statuses seen. */
const held = new Map<string, Set<number>>();

async function checked(method: string, template: string, path: string, body?: unknown) {
  const response = await freshFetch(`${server.url}${path}`, {
    method,
    // opflow serve takes only JSON on a POST (a cross-site form cannot post): say so even with no body.
    headers: method === 'POST' ? { 'content-type': 'application/json' } : {},
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  // biome-ignore lint/suspicious/noExplicitAny: answers are checked against the schema below
  const json = (await response.json()) as any;
  const described = heldAnswer(method, template, response.status);
  const schema = described.content?.['application/json']?.schema;
  expect(schema, `${method} ${template} ${response.status} has no schema`).toBeDefined();
  // Shared schemas are referenced as #/components/schemas/X: compiled beside the document's components.
  const validate = ajv.compile({ ...schema!, components: doc.components });
  expect(
    validate(json),
    `${method} ${path}: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(json)}`,
  ).toBe(true);
  return { status: response.status, json };
}

/** Calls the server for a route that answers a body of its own (not JSON held to a schema): the status and media type described. */
async function checkedMedia(method: string, template: string, path: string) {
  const response = await freshFetch(`${server.url}${path}`, { method });
  await response.arrayBuffer();
  const described = heldAnswer(method, template, response.status);
  const media = (response.headers.get('content-type') ?? '').split(';')[0]!.trim();
  expect(Object.keys(described.content ?? {}), `${method} ${template} answered ${media}`).toContain(media);
  return response;
}

/**
 * The routes this file does not call, each with the test that holds it (none may be missing: a new
 * route of the table is either called here through `checked`/`checkedMedia` or named here, with
 * where its answers are checked). The server here is `opflow serve`'s job API with the dashboard's
 * job, timeline, delivery, webhook-source and schedule routes; these need what it does not start.
 */
const heldElsewhere: Record<string, string> = {
  'POST /jobs/bulk': 'test/integration/http/bulk-route.test.ts',
  'GET /batches/{id}/outputs/{file}': 'test/e2e/aws/deliverables.test.ts',
  'POST /webhooks/{source}': 'test/integration/webhooks/webhooks.test.ts',
  'POST /events/token': 'test/e2e/local/events-feed.test.ts',
  'GET /events': 'test/e2e/local/events-feed.test.ts',
  'GET /review/{token}': 'test/e2e/aws/reviewers.test.ts',
  'POST /review/{token}': 'test/e2e/aws/reviewers.test.ts',
  'POST /mcp': 'test/e2e/local/opflow-mcp.test.ts',
  'GET /': 'test/e2e/dashboard/dashboard.test.ts',
  'GET /ui/{file}': 'test/e2e/dashboard/dashboard.test.ts',
  'POST /batch-uploads/check': 'test/unit/dashboard/start-routes.test.ts',
  'POST /batch-uploads': 'test/unit/dashboard/start-routes.test.ts',
  'POST /batch-uploads/commit': 'test/e2e/aws/uploads.test.ts',
};

describe('the OpenAPI description of the job API', () => {
  it('is valid for the tools people feed it to: every $ref resolves, an independent validator accepts it', async () => {
    const refs = JSON.stringify(doc).match(/"\$ref":"[^"]*"/g) ?? [];
    expect(refs.length).toBeGreaterThan(0);
    for (const ref of new Set(refs)) expect(ref).toMatch(/"#\/components\/schemas\/[A-Za-z]+"/);
    // swagger-parser: the OpenAPI 3.1 schema, then every reference dereferenced.
    await expect(SwaggerParser.validate(structuredClone(doc) as never)).resolves.toBeDefined();
  });

  it('generates the typed client with openapi-typescript, and the checked-in types are current', async () => {
    const text = await jobApiTypes();
    expect(text).toContain('Job: {');
    expect(text).toContain('createJob: {');
    expect(
      readFileSync(JOB_API_TYPES_FILE, 'utf8'),
      'shared/job-api-client/schema.d.ts is stale: run npx tsx scripts/generate-job-api-types.ts',
    ).toBe(text);
  });

  it('is OpenAPI 3.1 and describes exactly the routes of the route table', () => {
    expect(doc.openapi).toBe('3.1.0');
    const described = Object.entries(doc.paths).flatMap(([path, operations]) =>
      Object.keys(operations).map((method) => `${method.toUpperCase()} ${path}`),
    );
    // Every route of the table, the serve-only ones too (each says so in its summary).
    expect(described.sort()).toEqual(routeTable.map(routeKey).sort());
    for (const [path, operations] of Object.entries(doc.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        expect(Object.keys(operation.responses).length, `${method} ${path}`).toBeGreaterThan(0);
      }
    }
  });

  it('holds every route of the route table to its description, answers and refusals alike', async () => {
    const health = await checked('GET', '/health', '/health');
    expect(health.json.status).toBe('ok');

    const created = await checked('POST', '/jobs', '/jobs', {
      workflow: 'patent-count',
      input: { query: 'TTL:(solid-state battery)' },
    });
    expect(created.status).toBe(201);
    const id = created.json.job.id as string;
    expect(created.json.job.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    const refused = await checked('POST', '/jobs', '/jobs', { workflow: 'patent-count', input: {} });
    expect(refused.status).toBe(400);

    await checked('GET', '/jobs', '/jobs?workflow=patent-count&status=QUEUED&limit=5');
    const none = await checked('GET', '/jobs', '/jobs?workflow=novelty-check');
    expect(none.json.jobs).toEqual([]);
    expect((await checked('GET', '/jobs', '/jobs?limit=0')).status).toBe(400);
    await checked('GET', '/jobs/{id}', `/jobs/${id}`);
    const input = await checked('GET', '/jobs/{id}/input', `/jobs/${id}/input`);
    expect(input.json.input).toMatchObject({ query: 'TTL:(solid-state battery)' });

    // Batches: none yet listed, an unknown one refused on every route.
    expect((await checked('GET', '/batches', '/batches')).json.batches).toEqual([]);
    expect((await checked('GET', '/batches/{id}', '/batches/nope')).status).toBe(404);
    expect((await checked('POST', '/batches/{id}/redrive', '/batches/nope/redrive')).status).toBe(404);
    expect((await checked('POST', '/batches/{id}/cancel', '/batches/nope/cancel')).status).toBe(404);
    expect((await checked('GET', '/jobs/{id}', '/jobs/01J000000000000000000000ZZ')).status).toBe(404);

    const form = await freshFetch(`${server.url}/jobs/${id}/cancel`, { method: 'POST' });
    expect(form.status).toBe(415);
    expect(doc.paths['/jobs/{id}/cancel']?.post?.responses['415']).toBeDefined();
    const notWaiting = await checked('POST', '/jobs/{id}/selection', `/jobs/${id}/selection`, {
      selected: ['f1'],
    });
    expect(notWaiting.status).toBe(409);
    expect((await checked('POST', '/jobs/{id}/retry', `/jobs/${id}/retry`)).status).toBe(409);
    expect((await checked('GET', '/jobs/{id}/report', `/jobs/${id}/report`)).status).toBe(409);
    const cancelled = await checked('POST', '/jobs/{id}/cancel', `/jobs/${id}/cancel`);
    expect(cancelled.json.job).toMatchObject({ status: 'CANCELLED' });
    expect(cancelled.json.job.nextRunAt).toBeUndefined();
    const retried = await checked('POST', '/jobs/{id}/retry', `/jobs/${id}/retry`, { fromStart: true });
    expect(retried.json.job.runs).toHaveLength(1);

    const waiting = contractJob({
      status: 'AWAITING_INPUT',
      workflow: 'novelty-check',
      step: 'confirm-features',
      pending: {
        step: 'confirm-features',
        nextStep: 'search-elements',
        prompt: 'Which features?',
        options: [{ id: 'f1', label: 'hinge', preselected: true }],
        min: 1,
        max: 1,
        offeredAt: Date.now(),
      },
      lastError: { step: 'features', kind: 'server', message: 'busy', retryable: true, at: Date.now() },
    });
    await engine.local.store.create(waiting);
    const answered = await checked('POST', '/jobs/{id}/selection', `/jobs/${waiting.id}/selection`, {
      selected: ['f1'],
    });
    expect(answered.status).toBe(200);

    const done = contractJob({ status: 'SUCCEEDED', finishedAt: Date.now() });
    const prefix = `reports/${done.id}/`;
    done.outputs = [`${prefix}report.html`, `${prefix}result.json`];
    await engine.local.store.create(done);
    for (const key of done.outputs) await engine.local.reports.put(key, '{}', 'application/json');
    const report = await checked('GET', '/jobs/{id}/report', `/jobs/${done.id}/report`);
    expect(report.json.expiresInSeconds).toBeUndefined();
    expect(report.json.files[0].url).toBe(`/jobs/${done.id}/report/report.html`);
    const file = await checkedMedia('GET', '/jobs/{id}/report/{file}', report.json.files[1].url);
    expect(file.status).toBe(200);
    expect((await checkedMedia('GET', '/openapi.json', '/openapi.json')).status).toBe(200);

    const timeline = await checked('GET', '/jobs/{id}/timeline', `/jobs/${id}/timeline`);
    expect(timeline.json.recorded).toBe(true);
    // Its times are ISO 8601 like every other answer's (the schema says so too).
    expect(timeline.json.steps[0].startedAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    await deliveries.record({
      id: '01J0000000000000000000000A',
      source: 'tracker',
      webhookId: 'msg_1',
      at: Date.now(),
      status: 401,
      error: { code: 'unauthorized', message: 'the webhook-signature does not match' },
      tenant: 'default',
    });
    const listed = await checked('GET', '/webhook-deliveries', '/webhook-deliveries?source=tracker');
    expect(listed.json.deliveries[0]).toMatchObject({ source: 'tracker', status: 401 });
    expect((await checked('GET', '/webhook-deliveries', '/webhook-deliveries?cursor=nope')).status).toBe(400);

    // Webhook sources: watch capped by its day's spend (20 of 12 units), with its last delivery;
    // tracker, not in the file, known by its recorded delivery (only a source with a secret has one).
    const billedAt = Date.now() - 3_600_000;
    await engine.local.store.create(
      contractJob({
        source: 'webhook',
        idempotencyKey: 'webhook:watch:msg_1',
        status: 'SUCCEEDED',
        usage: { ...contractJob().usage, billedUnits: 20 },
        createdAt: billedAt,
        updatedAt: billedAt,
      }),
    );
    await deliveries.record({
      id: '01J0000000000000000000000B',
      source: 'watch',
      webhookId: 'msg_2',
      at: Date.now(),
      status: 429,
      error: { code: 'cost-cap', message: 'cost cap reached' },
      tenant: 'default',
    });
    const sources = await checked('GET', '/webhook-sources', '/webhook-sources');
    expect(sources.json.sources.map((s: { name: string; state: string }) => [s.name, s.state])).toEqual([
      ['lamp', 'open'],
      ['tracker', 'open'],
      ['watch', 'capped'],
    ]);
    expect(sources.json.sources[1]).toMatchObject({ origin: 'secret', workflow: 'from the payload' });
    const watch = sources.json.sources[2];
    expect(watch).toMatchObject({
      tenant: 'default',
      workflow: 'patent-count',
      caps: { maxUnitsPerRun: 8, maxUnitsPerDay: 12, spentLast24h: 20, jobsLast24h: 1 },
      lastDelivery: { status: 429, webhookId: 'msg_2', error: { code: 'cost-cap' } },
    });
    expect(watch.reason).toMatch(
      /^day cost cap reached: its 1 job\(s\) of the last 24 hours were billed 20 units/,
    );
    expect(Date.parse(watch.resumesAt)).toBe(billedAt + 24 * 3_600_000);
    expect(sources.json.sources[0].caps).toEqual({ spentLast24h: 0, jobsLast24h: 0 });
    expect(sources.json.sources[0].lastDelivery).toBeUndefined();
    // No secret of a source's settings: not its callback URL's credentials, not its input.
    expect(JSON.stringify(sources.json)).not.toMatch(/never-shown|hooks\.example/);
    // A caller bound to a tenant sees only the sources whose jobs are its tenant's.
    for (const [tenant, names] of [
      ['lamps', ['lamp']],
      ['default', ['tracker', 'watch']],
      ['others', []],
    ] as const) {
      const bound = await handleJobApiRequest(
        { method: 'GET', path: '/webhook-sources' },
        {
          deps: engine.deps,
          tenant,
          routes: webhookSourceRoutes({ deps: engine.deps, webhooks, deliveries }),
        },
      );
      expect(bound.status).toBe(200);
      const { sources: seen } = JSON.parse(bound.body) as { sources: { name: string }[] };
      expect(
        seen.map((source) => source.name),
        tenant,
      ).toEqual(names);
    }

    // Schedules: listed, triggered, paused, resumed, and the refusals.
    const schedules = await checked('GET', '/schedules', '/schedules');
    expect(schedules.json.schedules.map((s: { name: string }) => s.name)).toEqual(['weekly', 'frozen']);
    expect(schedules.json.schedules[0].next).toMatch(/Z$/);
    const triggered = await checked('POST', '/schedules/{name}/trigger', '/schedules/weekly/trigger');
    expect(triggered.json.created).toBe(true);
    expect(triggered.json.schedule.lastJob.id).toBe(triggered.json.jobId);
    const paused = await checked('POST', '/schedules/{name}/pause', '/schedules/weekly/pause', {
      reason: 'audit',
    });
    expect(paused.json.schedule.pause).toMatchObject({ reason: 'audit', by: 'runtime' });
    expect(paused.json.schedule.pause.at).toMatch(/Z$/);
    expect((await checked('POST', '/schedules/{name}/pause', '/schedules/weekly/pause', {})).status).toBe(
      400,
    );
    const resumed = await checked('POST', '/schedules/{name}/resume', '/schedules/weekly/resume');
    expect(resumed.json.schedule.pause).toBeUndefined();
    expect((await checked('POST', '/schedules/{name}/resume', '/schedules/frozen/resume')).status).toBe(409);
    expect((await checked('POST', '/schedules/{name}/trigger', '/schedules/nope/trigger')).status).toBe(404);

    // Every route of the table was held to its description above, or names the test that holds it.
    const table = routeTable.map(routeKey);
    const missing = table.filter((key) => !held.has(key) && !(key in heldElsewhere));
    expect(
      missing,
      'routes of the table held to their description nowhere: call each above through checked()',
    ).toEqual([]);
    // The list holds no route that is gone or that this file now calls, and each names a test that is there.
    for (const [key, where] of Object.entries(heldElsewhere)) {
      expect(table, `heldElsewhere names ${key}, which the route table does not have`).toContain(key);
      expect(held.has(key), `${key} is called here: take it out of heldElsewhere`).toBe(false);
      expect(existsSync(where), `${key}: ${where} is not there`).toBe(true);
    }
  });
});
