/**
 * The job API described in OpenAPI 3.1, served at `GET /openapi.json`. Built from the same zod
 * schemas the routes validate requests with, and from the answer schemas below, which the tests
 * hold every route's real answers to (test/integration/http/openapi.test.ts): the description
 * cannot drift from the routes without a test failing.
 */

import * as z from 'zod';
import { failureKinds, jobSources, jobStatuses } from '../engine/job-record';
import { upstreamIdentitySchema } from '../engine/upstream-identity';
import { manifestUploadBodySchema } from '../ingest/upload-request';

const isoTime = z.iso.datetime().describe('ISO 8601, UTC');

const jobErrorSchema = z.strictObject({
  step: z.string(),
  operationId: z.string().optional(),
  kind: z.enum(failureKinds),
  code: z.number().optional().describe("the platform's business error code"),
  message: z.string(),
  retryable: z.boolean(),
  httpStatus: z.number().optional(),
  correlationId: z.string().optional(),
  at: isoTime,
});

const usageSchema = z.strictObject({
  calls: z.number(),
  failedCalls: z.number(),
  throttledCalls: z.number(),
  billedUnits: z.number(),
  tokens: z.number(),
  callMs: z.number().describe('time spent in upstream calls, milliseconds'),
  duplicateCreates: z.number().describe('create calls sent twice for one step (after a crash)'),
  taskCost: z.number().optional().describe("the platform's own task_cost, summed, where it reports one"),
});

const pendingSchema = z.strictObject({
  step: z.string(),
  nextStep: z.string(),
  prompt: z.string(),
  options: z.array(
    z.strictObject({
      id: z.string().describe('what POST /jobs/{id}/selection names in `selected`'),
      label: z.string(),
      detail: z.string().optional(),
      preselected: z.boolean(),
    }),
  ),
  min: z.number(),
  max: z.number(),
  offeredAt: isoTime,
});

const runSchema = z.strictObject({
  status: z.enum(['FAILED', 'CANCELLED']),
  step: z.string(),
  error: jobErrorSchema.optional(),
  finishedAt: isoTime.optional(),
  usage: usageSchema,
  retriedAt: isoTime,
  retriedFrom: z.string(),
  fromStart: z.boolean(),
});

/** What the API shows of a job. */
export const jobViewSchema = z
  .strictObject({
    id: z.string(),
    workflow: z.string(),
    tenant: z.string(),
    status: z.enum(jobStatuses),
    step: z.string().describe('the step it is at (or stopped at)'),
    version: z.number().int(),
    label: z.string().optional(),
    title: z.string().optional().describe("the input's title or first line, else the label"),
    upstream: upstreamIdentitySchema
      .optional()
      .describe(
        'which upstream served the job: {kind: sandbox} (simulated data, not real publications) or {kind: platform, baseUrl, keyFingerprint}; absent before its first call',
      ),
    selection: z.strictObject({ mode: z.enum(['auto', 'manual']) }),
    pending: pendingSchema.optional().describe('the options offered, while AWAITING_INPUT'),
    selections: z.record(z.string(), z.array(z.string())),
    attempts: z.number().int(),
    polls: z.number().int(),
    lastError: jobErrorSchema.optional(),
    usage: usageSchema,
    outputs: z.array(z.string()),
    runs: z.array(runSchema).optional().describe('earlier runs, when the job was retried'),
    batchId: z.string().optional(),
    source: z.enum(jobSources),
    idempotencyKey: z.string().optional(),
    callbackUrl: z.string().optional().describe('where the signed callback goes (its query elided)'),
    callback: z
      .strictObject({
        state: z.enum(['pending', 'delivered', 'gone', 'refused', 'exhausted']),
        round: z.number().int(),
        messageId: z.string(),
        attempts: z.array(
          z.strictObject({
            round: z.number().int(),
            at: isoTime,
            status: z.number().int().optional(),
            error: z.string().optional(),
            retryAfterMs: z.number().optional(),
            durationMs: z.number(),
          }),
        ),
        nextAttemptAt: isoTime.optional(),
        deliveredAt: isoTime.optional(),
      })
      .optional()
      .describe('the delivery of the callback'),
    nextRunAt: isoTime.optional().describe('when it is looked at next (absent once finished)'),
    deadlineAt: isoTime,
    createdAt: isoTime,
    updatedAt: isoTime,
    finishedAt: isoTime.optional(),
  })
  .meta({ id: 'Job' });
export type JobView = z.input<typeof jobViewSchema>;

export const errorAnswerSchema = z
  .strictObject({
    error: z.strictObject({
      status: z.number().int(),
      code: z.string().describe('not-found, invalid-request, conflict, forbidden, ...'),
      message: z.string().describe('what is wrong and where (body.field, query.field, path.id)'),
    }),
  })
  .meta({ id: 'Error' });

const reportFileSchema = z.strictObject({
  key: z.string(),
  name: z.string().describe('report.html, report.md, result.json, attachments/...'),
  url: z.string(),
  path: z.string().optional().describe('local backend: where the file is on disk'),
  href: z.string().optional(),
});

/** A schedule as GET /schedules and the schedule actions show it (shared/schedules/pause.ts). */
const scheduleViewSchema = z.strictObject({
  name: z.string(),
  cron: z.string(),
  timezone: z.string(),
  workflow: z.string(),
  tenant: z.string(),
  overlap: z.string().describe('skip, buffer-one or allow-all'),
  paused: z.string().optional().describe("the pause's reason (as pause.reason)"),
  pause: z
    .strictObject({
      reason: z.string(),
      by: z.enum(['config', 'runtime']).describe('config: lifted only by editing opflow.config.json'),
      at: isoTime.optional(),
    })
    .optional(),
  next: isoTime.optional().describe('the next slot; none while paused'),
  lastFired: isoTime.optional(),
  lastJob: z.strictObject({ id: z.string(), status: z.enum(jobStatuses) }).optional(),
  skipped: z.number().int().describe('slots skipped (overlap, pause)'),
});

/** Every answer schema, by route: what the tests check real answers against. */
export const answerSchemas = {
  health: z.strictObject({ status: z.literal('ok'), time: isoTime }),
  job: z.strictObject({ job: jobViewSchema }),
  created: z.strictObject({ job: jobViewSchema, created: z.boolean() }),
  list: z.strictObject({
    jobs: z.array(jobViewSchema),
    cursor: z.string().optional().describe('pass as ?cursor= for the next page'),
  }),
  report: z.union([
    z.strictObject({
      jobId: z.string(),
      files: z.array(reportFileSchema),
    }),
    z.strictObject({
      jobId: z.string(),
      expiresInSeconds: z.number().int(),
      expiresAt: isoTime,
      files: z.array(reportFileSchema),
    }),
  ]),
  error: errorAnswerSchema,
  timeline: z.strictObject({
    jobId: z.string(),
    recorded: z
      .boolean()
      .describe('false when no history was kept for the job: its figures are unknown, not 0'),
    steps: z.array(
      z.strictObject({
        name: z.string(),
        title: z.string().optional(),
        operation: z.string().optional().describe('the operationId it calls, or download'),
        state: z.enum(['done', 'current', 'waiting', 'failed', 'cancelled', 'pending', 'skipped']),
        startedAt: isoTime.optional().describe('when the job first reached the step'),
        endedAt: isoTime.optional().describe('when the job last left it'),
        durationMs: z.number().optional().describe('time the job spent at the step, milliseconds'),
        calls: z.number().int(),
        callMs: z.number().describe('time spent in its upstream calls, milliseconds'),
        billedUnits: z.number(),
        throttled: z.number().int(),
        retries: z.number().int().describe('failed attempts at the step'),
        polls: z.number().int(),
        errors: z.array(jobErrorSchema),
      }),
    ),
  }),
  deliveries: z.strictObject({
    deliveries: z.array(
      z.strictObject({
        id: z.string(),
        source: z.string(),
        webhookId: z.string().optional(),
        at: isoTime,
        status: z.number().int(),
        jobId: z.string().optional(),
        created: z.boolean().optional(),
        error: z.strictObject({ code: z.string(), message: z.string() }).optional(),
        tenant: z.string(),
      }),
    ),
    cursor: z.string().optional(),
  }),
  schedules: z.strictObject({ schedules: z.array(scheduleViewSchema) }),
  schedule: z.strictObject({ schedule: scheduleViewSchema }),
  triggered: z.strictObject({
    jobId: z.string(),
    created: z.boolean().describe('false: the job of this trigger existed already'),
    schedule: scheduleViewSchema,
  }),
  any: z.looseObject({}),
} as const;

type Schema = z.ZodType;

const toSchema = (schema: Schema, io: 'input' | 'output') =>
  z.toJSONSchema(schema, { io, unrepresentable: 'any', reused: 'inline' }) as Record<string, unknown>;

function strip(schema: Record<string, unknown>): Record<string, unknown> {
  const { $schema: _drop, ...rest } = schema;
  return rest;
}

const jsonBody = (schema: Schema) => ({
  required: true,
  content: { 'application/json': { schema: strip(toSchema(schema, 'input')) } },
});

const answer = (description: string, schema: Schema) => ({
  description,
  content: { 'application/json': { schema: strip(toSchema(schema, 'output')) } },
});

const errors = (...statuses: number[]) =>
  Object.fromEntries(
    statuses.map((status) => [
      String(status),
      answer(
        {
          400: 'invalid request (what is wrong and where)',
          403: 'another tenant',
          404: 'no such job',
          409: 'the job is not in a status that allows this',
          413: 'body too large',
          415: 'not JSON',
        }[status] ?? 'refused',
        errorAnswerSchema,
      ),
    ]),
  );

const idParameter = {
  name: 'id',
  in: 'path',
  required: true,
  schema: { type: 'string', pattern: '^[0-9A-Za-z_-]{1,64}$' },
};

const namedParameter = (name: string) => ({ name, in: 'path', required: true, schema: { type: 'string' } });

function queryParameters(schema: z.ZodObject, descriptions: Record<string, string>) {
  const json = toSchema(schema, 'input') as { properties: Record<string, unknown>; required?: string[] };
  return Object.entries(json.properties).map(([name, property]) => ({
    name,
    in: 'query',
    required: json.required?.includes(name) ?? false,
    description: descriptions[name],
    schema: property,
  }));
}

let cached: Record<string, unknown> | undefined;

/** The request schemas the routes validate with (job-api.ts passes its own: no import cycle). */
export interface RequestSchemas {
  createBodySchema: Schema;
  selectionBodySchema: Schema;
  retryBodySchema: Schema;
  listQuerySchema: z.ZodObject;
}

/** The OpenAPI 3.1 document of the job API (built once). */
export function jobApiOpenApi(api: RequestSchemas): Record<string, unknown> {
  cached ??= withSharedSchemas(buildWith(api));
  return cached;
}

const componentRef = '#/components/schemas/';

/**
 * zod writes a schema that carries an id (`.meta({ id: 'Job' })`) into a `$defs` of each schema it
 * converts, referenced as `#/$defs/Job`. Inside an OpenAPI document such a reference resolves
 * against the document, where no `$defs` exists, so validators and generators (openapi-typescript,
 * swagger-parser) refuse it. Every such definition moves once to `components.schemas` and every
 * reference points there. Two different definitions under one id are a bug: refused here.
 */
function withSharedSchemas(doc: Record<string, unknown>): Record<string, unknown> {
  const shared: Record<string, unknown> = {};
  const hoist = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(hoist);
    if (node === null || typeof node !== 'object') return node;
    const { $defs, ...rest } = node as Record<string, unknown>;
    if ($defs !== undefined) {
      for (const [id, definition] of Object.entries($defs as Record<string, unknown>)) {
        const moved = hoist(definition);
        if (id in shared && JSON.stringify(shared[id]) !== JSON.stringify(moved)) {
          throw new Error(`OpenAPI: two different schemas are named ${id}`);
        }
        shared[id] = moved;
      }
    }
    return Object.fromEntries(
      Object.entries(rest).map(([key, value]) => [
        key,
        key === '$ref' && typeof value === 'string' && value.startsWith('#/$defs/')
          ? componentRef + value.slice('#/$defs/'.length)
          : hoist(value),
      ]),
    );
  };
  const hoisted = hoist(doc) as Record<string, unknown> & { components: Record<string, unknown> };
  const names = Object.keys(shared).sort();
  hoisted.components = {
    schemas: Object.fromEntries(names.map((name) => [name, shared[name]])),
    ...hoisted.components,
  };
  return hoisted;
}

function buildWith(api: RequestSchemas): Record<string, unknown> {
  return {
    openapi: '3.1.0',
    info: {
      title: 'opflow job API',
      version: '1',
      description:
        'Jobs that run the Open Platform workflows. Served by `opflow serve` (local) and by the AWS stack (HTTP API + Lambda); the same routes and JSON. Every time is ISO 8601 (UTC). Every refusal is a JSON error with what is wrong and where.',
    },
    components: {
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          description: 'opflow serve with OPFLOW_SERVE_TOKEN; on AWS a JWT or IAM (SigV4) per the stage',
        },
      },
    },
    security: [{ bearer: [] }],
    paths: {
      '/health': {
        get: {
          operationId: 'health',
          summary: 'Is the API up',
          responses: { 200: answer('up', answerSchemas.health) },
        },
      },
      '/openapi.json': {
        get: {
          operationId: 'openapi',
          summary: 'This description',
          responses: { 200: { description: 'OpenAPI 3.1', content: { 'application/json': {} } } },
        },
      },
      '/jobs': {
        post: {
          operationId: 'createJob',
          summary: 'Start a job',
          description:
            "The input must match the workflow (opflow workflows <name> lists each workflow's fields). Header Idempotency-Key: the same key returns the same job (200 instead of 201).",
          parameters: [
            {
              name: 'Idempotency-Key',
              in: 'header',
              required: false,
              schema: { type: 'string', maxLength: 200 },
            },
          ],
          requestBody: jsonBody(api.createBodySchema),
          responses: {
            201: answer('created', answerSchemas.created),
            200: answer('the job of this Idempotency-Key, already there', answerSchemas.created),
            ...errors(400, 403, 413, 415),
          },
        },
        get: {
          operationId: 'listJobs',
          summary: 'Jobs, newest first, with the filters of `opflow list`',
          parameters: queryParameters(api.listQuerySchema, {
            status: 'only jobs in this status',
            workflow: 'only jobs of this workflow',
            source: 'only jobs started this way (cli, api, webhook, schedule, bulk)',
            since: 'created at or after (a date or an ISO 8601 time)',
            until: 'created at or before (a date or an ISO 8601 time)',
            q: 'words that must all appear in the label, title, id or input text',
            batchId: 'only jobs of this batch (a run, an ingest)',
            tenant: 'only jobs of this tenant',
            limit: 'at most this many (a page may hold fewer and still have a cursor)',
            cursor: 'from the previous page',
          }),
          responses: { 200: answer('a page of jobs', answerSchemas.list), ...errors(400, 403) },
        },
      },
      '/jobs/{id}': {
        get: {
          operationId: 'getJob',
          summary: 'One job',
          parameters: [idParameter],
          responses: { 200: answer('the job', answerSchemas.job), ...errors(400, 404) },
        },
      },
      '/jobs/{id}/selection': {
        post: {
          operationId: 'answerSelection',
          summary: 'Answer a job waiting for a selection (status AWAITING_INPUT)',
          description:
            '`selected`: ids of `job.pending.options`, between `pending.min` and `pending.max` of them.',
          parameters: [idParameter],
          requestBody: jsonBody(api.selectionBodySchema),
          responses: { 200: answer('the job, going on', answerSchemas.job), ...errors(400, 404, 409, 415) },
        },
      },
      '/jobs/{id}/cancel': {
        post: {
          operationId: 'cancelJob',
          summary: 'Cancel a job that has not finished',
          parameters: [idParameter],
          responses: { 200: answer('the cancelled job', answerSchemas.job), ...errors(400, 404, 409, 415) },
        },
      },
      '/jobs/{id}/retry': {
        post: {
          operationId: 'retryJob',
          summary: 'Run a FAILED or CANCELLED job again',
          description:
            'From the step it stopped at (steps that finished are not called again), or from its first step with fromStart. The ended run is kept in `job.runs`.',
          parameters: [idParameter],
          requestBody: { ...jsonBody(api.retryBodySchema), required: false },
          responses: {
            200: answer('the job, queued again', answerSchemas.job),
            ...errors(400, 404, 409, 415),
          },
        },
      },
      '/jobs/{id}/report': {
        get: {
          operationId: 'getReport',
          summary: "Links to a succeeded job's report files",
          description:
            'Locally (opflow serve) the links are paths of this server and do not expire; on AWS they are presigned S3 URLs valid until expiresAt.',
          parameters: [
            idParameter,
            {
              name: 'file',
              in: 'query',
              required: false,
              description: 'only this file, e.g. report.html',
              schema: { type: 'string' },
            },
          ],
          responses: { 200: answer('the files', answerSchemas.report), ...errors(400, 404, 409) },
        },
      },
      '/jobs/{id}/timeline': {
        get: {
          operationId: 'getTimeline',
          summary: "The job's steps on a timeline: calls, durations, retries, polls, errors, billed units",
          description: 'From the job history (kept 30 days): recorded is false when none was kept.',
          parameters: [idParameter],
          responses: { 200: answer('the timeline', answerSchemas.timeline), ...errors(400, 404) },
        },
      },
      '/batches': {
        get: {
          operationId: 'listBatches',
          summary: 'Batches (bulk ingestions), newest first (?limit=&cursor=)',
          responses: { 200: answer('a page of batches', answerSchemas.any), ...errors(400) },
        },
      },
      '/batches/{id}': {
        get: {
          operationId: 'getBatch',
          summary: 'One batch: totals by status, calls, billed units, elapsed, ETA, its problems',
          parameters: [namedParameter('id')],
          responses: { 200: answer('the batch', answerSchemas.any), ...errors(400, 404) },
        },
      },
      '/batches/{id}/redrive': {
        post: {
          operationId: 'redriveBatch',
          summary: 'Run its failed and cancelled items again',
          parameters: [namedParameter('id')],
          responses: { 200: answer('the batch', answerSchemas.any), ...errors(400, 404, 415) },
        },
      },
      '/batches/{id}/cancel': {
        post: {
          operationId: 'cancelBatch',
          summary: 'Stop releasing its items and cancel its unfinished jobs',
          parameters: [namedParameter('id')],
          responses: { 200: answer('the batch', answerSchemas.any), ...errors(400, 404, 415) },
        },
      },
      '/batches/{id}/outputs/{file}': {
        get: {
          operationId: 'getBatchOutput',
          summary: 'summary.csv, results.jsonl, failed.jsonl or index.html of a batch',
          parameters: [namedParameter('id'), namedParameter('file')],
          responses: {
            200: {
              description: 'the file',
              content: { 'text/csv': {}, 'application/x-ndjson': {}, 'text/html': {} },
            },
            ...errors(400, 404),
          },
        },
      },
      '/schedules': {
        get: {
          operationId: 'listSchedules',
          summary: 'The schedules of opflow.config.json: next and last fire, last job, skipped slots, pause',
          responses: { 200: answer('the schedules', answerSchemas.schedules) },
        },
      },
      '/schedules/{name}/trigger': {
        post: {
          operationId: 'triggerSchedule',
          summary: 'Start a job of the schedule now',
          parameters: [namedParameter('name')],
          responses: { 200: answer('the job started', answerSchemas.triggered), ...errors(404, 415) },
        },
      },
      '/schedules/{name}/pause': {
        post: {
          operationId: 'pauseSchedule',
          summary: 'Skip its slots until resumed, with a reason (kept in the schedule state store)',
          parameters: [namedParameter('name')],
          requestBody: jsonBody(z.strictObject({ reason: z.string().min(1).max(500) })),
          responses: { 200: answer('the schedule', answerSchemas.schedule), ...errors(400, 404, 409, 415) },
        },
      },
      '/schedules/{name}/resume': {
        post: {
          operationId: 'resumeSchedule',
          summary: 'Fire its slots again from now on (refused when opflow.config.json pauses it)',
          parameters: [namedParameter('name')],
          responses: { 200: answer('the schedule', answerSchemas.schedule), ...errors(404, 409, 415) },
        },
      },
      '/webhook-deliveries': {
        get: {
          operationId: 'listWebhookDeliveries',
          summary: 'Incoming webhook deliveries, newest first (?source=&limit=&cursor=), kept 30 days',
          responses: { 200: answer('a page of deliveries', answerSchemas.deliveries), ...errors(400) },
        },
      },
      '/webhooks/{source}': {
        post: {
          operationId: 'receiveWebhook',
          summary:
            'A signed webhook (Standard Webhooks) starts a job; no bearer token, the signature authenticates',
          security: [],
          parameters: [namedParameter('source')],
          requestBody: { required: true, content: { 'application/json': {} } },
          responses: {
            202: answer('the job (created, or found again for a repeated webhook-id)', answerSchemas.any),
            ...errors(400, 401, 404, 413, 429),
          },
        },
      },
      '/mcp': {
        post: {
          operationId: 'mcp',
          summary: 'The MCP server, Streamable HTTP (opflow serve --mcp only)',
          requestBody: { required: true, content: { 'application/json': {} } },
          responses: {
            200: {
              description: 'a JSON-RPC answer or an event stream',
              content: { 'application/json': {}, 'text/event-stream': {} },
            },
          },
        },
      },
      '/': {
        get: {
          operationId: 'dashboard',
          summary: 'The dashboard page (opflow serve only; no token needed to load it)',
          security: [],
          responses: { 200: { description: 'the page', content: { 'text/html': {} } } },
        },
      },
      '/ui/{file}': {
        get: {
          operationId: 'dashboardFile',
          summary: "The dashboard's script, style and settings (opflow serve only)",
          security: [],
          parameters: [namedParameter('file')],
          responses: {
            200: {
              description: 'the file',
              content: { 'text/javascript': {}, 'text/css': {}, 'application/json': {} },
            },
          },
        },
      },
      '/jobs/{id}/input': {
        get: {
          operationId: 'getJobInput',
          summary: "A job's input, workflow, label and selection, to run it again (opflow serve only)",
          parameters: [idParameter],
          responses: { 200: answer('the input', answerSchemas.any), ...errors(404) },
        },
      },
      '/batch-uploads/check': {
        post: {
          operationId: 'checkBatchUpload',
          summary:
            'A manifest checked line by line as opflow ingest --dry-run, with the cost estimate; nothing stored (opflow serve only)',
          requestBody: jsonBody(manifestUploadBodySchema),
          responses: { 200: answer('the check', answerSchemas.any), ...errors(400, 403, 413, 415) },
        },
      },
      '/batch-uploads': {
        post: {
          operationId: 'startBatchUpload',
          summary:
            'A manifest kept beside the database and ingested as a batch; the same file again starts nothing twice (opflow serve only)',
          requestBody: jsonBody(manifestUploadBodySchema),
          responses: {
            201: answer('the batch started', answerSchemas.any),
            ...errors(400, 403, 409, 413, 415),
          },
        },
      },
      '/jobs/{id}/report/{file}': {
        get: {
          operationId: 'getReportFile',
          summary: 'A report file itself (opflow serve only)',
          parameters: [idParameter, { name: 'file', in: 'path', required: true, schema: { type: 'string' } }],
          responses: {
            200: {
              description: 'the file',
              content: {
                'text/html': {},
                'text/markdown': {},
                'application/json': {},
                'application/pdf': {},
              },
            },
            ...errors(404, 409),
          },
        },
      },
    },
  };
}
