/**
 * Every HTTP route of opflow, once. From this table the job API's dispatcher matches requests
 * (job-api.ts), `GET /openapi.json` is built (openapi.ts), the AWS stack declares its API Gateway
 * routes (infra/lib/job-api.ts), and `opflow serve --help` lists what it answers. The routes'
 * handlers live with their feature (job-api.ts, shared/dashboard/*-routes.ts) and are attached by
 * operation id, so a handler for a route the table does not have does not compile.
 */
import type * as z from 'zod';
import { bulkRequestSchema } from '../runtime/bulk-request';
import type { AnswerName } from './answer-schemas';
import { eventsQuerySchema, eventsTokenBodySchema } from './events-schemas';
import {
  batchListQuerySchema,
  batchUploadBodySchema,
  createBodySchema,
  deliveryQuerySchema,
  documentFilesUploadBodySchema,
  idempotencyKeySchema,
  jobIdSchema,
  listQuerySchema,
  pauseBodySchema,
  reportQuerySchema,
  retryBodySchema,
  selectionBodySchema,
} from './request-schemas';

/**
 * Who may call a route. `caller`: `opflow serve`'s bearer token (OPFLOW_SERVE_TOKEN), on AWS IAM
 * (SigV4) or a JWT per the stage. `signature`: no token, a Standard Webhooks signature over the
 * body authenticates. `public`: no token (the dashboard's static files, which hold no data).
 */
export type RouteAuth = 'caller' | 'signature' | 'public';

/** Which server answers a route: both, `opflow serve` only, or the AWS stack only. */
export type RouteServers = 'both' | 'serve' | 'aws';

/** An answer: JSON held to a named answer schema (answer-schemas.ts), or a body of the media types listed. */
export type RouteAnswer =
  | { readonly description: string; readonly schema: AnswerName }
  | { readonly description: string; readonly media: readonly string[] };

export interface RouteSpec {
  readonly operationId: string;
  readonly method: 'GET' | 'POST';
  /** The path template, OpenAPI style: `/jobs/{id}/report`. */
  readonly path: `/${string}`;
  /** One sentence; `/openapi.json` adds "(opflow serve only)" to a route of `servedBy: 'serve'`. */
  readonly summary: string;
  readonly description?: string;
  readonly auth: RouteAuth;
  readonly servedBy: RouteServers;
  /** The last path parameter takes the rest of the path, slashes included (`attachments/a.pdf`). */
  readonly restParameter?: true;
  /** Path parameters with a stricter form than "a segment" (each route still checks its own). */
  readonly params?: Readonly<Record<string, z.ZodType>>;
  /** The query parameters: the schema the route parses `?…` with, and a description of each. */
  readonly query?: { readonly schema: z.ZodObject; readonly descriptions: Readonly<Record<string, string>> };
  readonly headers?: Readonly<Record<string, z.ZodType>>;
  /** A JSON body held to a schema, or (`media`) a body the route reads itself. */
  readonly body?:
    | { readonly schema: z.ZodType; readonly required: boolean }
    | { readonly media: readonly string[] };
  /** The answers by status (beside the refusals). */
  readonly answers: Readonly<Record<number, RouteAnswer>>;
  /** The refusals a caller can meet (`{"error": ...}` bodies). */
  readonly refusals: readonly number[];
}

const jobId = { id: jobIdSchema };

/** The routes. The order is the order of `/openapi.json`'s paths. */
export const routeTable = [
  {
    operationId: 'health',
    method: 'GET',
    path: '/health',
    summary: 'Is the API up',
    auth: 'caller',
    servedBy: 'both',
    answers: { 200: { description: 'up', schema: 'health' } },
    refusals: [],
  },
  {
    operationId: 'openapi',
    method: 'GET',
    path: '/openapi.json',
    summary: 'This description',
    auth: 'caller',
    servedBy: 'both',
    answers: { 200: { description: 'OpenAPI 3.1', media: ['application/json'] } },
    refusals: [],
  },
  {
    operationId: 'createJob',
    method: 'POST',
    path: '/jobs',
    summary: 'Start a job',
    description:
      "The input must match the workflow (opflow workflows <name> lists each workflow's fields). Header Idempotency-Key: the same key returns the same job (200 instead of 201).",
    auth: 'caller',
    servedBy: 'both',
    headers: { 'Idempotency-Key': idempotencyKeySchema },
    body: { schema: createBodySchema, required: true },
    answers: {
      201: { description: 'created', schema: 'created' },
      200: { description: 'the job of this Idempotency-Key, already there', schema: 'created' },
    },
    refusals: [400, 403, 409, 413, 415],
  },
  {
    operationId: 'listJobs',
    method: 'GET',
    path: '/jobs',
    summary: 'Jobs, newest first, with the filters of `opflow list`',
    auth: 'caller',
    servedBy: 'both',
    query: {
      schema: listQuerySchema,
      descriptions: {
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
      },
    },
    answers: { 200: { description: 'a page of jobs', schema: 'list' } },
    refusals: [400, 403],
  },
  {
    operationId: 'getJob',
    method: 'GET',
    path: '/jobs/{id}',
    summary: 'One job',
    auth: 'caller',
    servedBy: 'both',
    params: jobId,
    answers: { 200: { description: 'the job', schema: 'job' } },
    refusals: [400, 404],
  },
  {
    operationId: 'answerSelection',
    method: 'POST',
    path: '/jobs/{id}/selection',
    summary: 'Answer a job waiting for a selection (status AWAITING_INPUT)',
    description: '`selected`: ids of `job.pending.options`, between `pending.min` and `pending.max` of them.',
    auth: 'caller',
    servedBy: 'both',
    params: jobId,
    body: { schema: selectionBodySchema, required: true },
    answers: { 200: { description: 'the job, going on', schema: 'job' } },
    refusals: [400, 404, 409, 415],
  },
  {
    operationId: 'cancelJob',
    method: 'POST',
    path: '/jobs/{id}/cancel',
    summary: 'Cancel a job that has not finished',
    auth: 'caller',
    servedBy: 'both',
    params: jobId,
    answers: { 200: { description: 'the cancelled job', schema: 'job' } },
    refusals: [400, 404, 409, 415],
  },
  {
    operationId: 'retryJob',
    method: 'POST',
    path: '/jobs/{id}/retry',
    summary: 'Run a FAILED or CANCELLED job again',
    description:
      'From the step it stopped at (steps that finished are not called again), or from its first step with fromStart. The ended run is kept in `job.runs`.',
    auth: 'caller',
    servedBy: 'both',
    params: jobId,
    body: { schema: retryBodySchema, required: false },
    answers: { 200: { description: 'the job, queued again', schema: 'job' } },
    refusals: [400, 404, 409, 415],
  },
  {
    operationId: 'bulkJobs',
    method: 'POST',
    path: '/jobs/bulk',
    summary:
      'Retry, redrive, cancel or answer every job a filter selects: a dry run, then the confirmed call',
    description:
      'First {action, where, options, dryRun: true}: the count, a digest of the ids (selection) and a sample. Then the same body with confirm: {count, selection}: refused with 409 selection-changed (and the new dry run) when the set changed. A job changed meanwhile is skipped with the reason. A call acts for up to 20 s and answers a cursor to go on with.',
    auth: 'caller',
    servedBy: 'both',
    body: { schema: bulkRequestSchema, required: true },
    answers: {
      200: { description: 'the dry run, or what the call did', schema: 'bulk' },
      409: { description: 'the set changed since the dry run', schema: 'bulkChanged' },
    },
    refusals: [400, 403, 415],
  },
  {
    operationId: 'getReport',
    method: 'GET',
    path: '/jobs/{id}/report',
    summary: "Links to a succeeded job's report files",
    description:
      'Locally (opflow serve) the links are paths of this server and do not expire; on AWS they are presigned S3 URLs valid until expiresAt.',
    auth: 'caller',
    servedBy: 'both',
    params: jobId,
    query: { schema: reportQuerySchema, descriptions: { file: 'only this file, e.g. report.html' } },
    answers: { 200: { description: 'the files', schema: 'report' } },
    refusals: [400, 404, 409],
  },
  {
    operationId: 'getTimeline',
    method: 'GET',
    path: '/jobs/{id}/timeline',
    summary: "The job's steps on a timeline: calls, durations, retries, polls, errors, billed units",
    description: 'From the job history (kept 30 days): recorded is false when none was kept.',
    auth: 'caller',
    servedBy: 'both',
    params: jobId,
    answers: { 200: { description: 'the timeline', schema: 'timeline' } },
    refusals: [400, 404],
  },
  {
    operationId: 'listBatches',
    method: 'GET',
    path: '/batches',
    summary: 'Batches (bulk ingestions), newest first',
    auth: 'caller',
    servedBy: 'both',
    query: {
      schema: batchListQuerySchema,
      descriptions: { limit: 'at most this many', cursor: 'from the previous page' },
    },
    answers: { 200: { description: 'a page of batches', schema: 'any' } },
    refusals: [400],
  },
  {
    operationId: 'getBatch',
    method: 'GET',
    path: '/batches/{id}',
    summary: 'One batch: totals by status, calls, billed units, elapsed, ETA, its problems',
    auth: 'caller',
    servedBy: 'both',
    answers: { 200: { description: 'the batch', schema: 'any' } },
    refusals: [400, 404],
  },
  {
    operationId: 'redriveBatch',
    method: 'POST',
    path: '/batches/{id}/redrive',
    summary: 'Run its failed and cancelled items again',
    description:
      'Each from the step it stopped at, or from its first step with fromStart; deadlineMs gives each a new deadline (what helps items that failed on theirs).',
    auth: 'caller',
    servedBy: 'both',
    body: { schema: retryBodySchema, required: false },
    answers: { 200: { description: 'the batch', schema: 'any' } },
    refusals: [400, 404, 415],
  },
  {
    operationId: 'cancelBatch',
    method: 'POST',
    path: '/batches/{id}/cancel',
    summary: 'Stop releasing its items and cancel its unfinished jobs',
    auth: 'caller',
    servedBy: 'both',
    answers: { 200: { description: 'the batch', schema: 'any' } },
    refusals: [400, 404, 415],
  },
  {
    operationId: 'getBatchOutput',
    method: 'GET',
    path: '/batches/{id}/outputs/{file}',
    summary: 'summary.csv, summary.xlsx, results.jsonl, failed.jsonl or index.html of a batch',
    auth: 'caller',
    servedBy: 'both',
    answers: {
      200: {
        description: 'the file',
        media: [
          'text/csv',
          'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
          'application/x-ndjson',
          'text/html',
        ],
      },
    },
    refusals: [400, 404],
  },
  {
    operationId: 'listSchedules',
    method: 'GET',
    path: '/schedules',
    summary: 'The schedules of opflow.config.json: next and last fire, last job, skipped slots, pause',
    auth: 'caller',
    servedBy: 'both',
    answers: { 200: { description: 'the schedules', schema: 'schedules' } },
    refusals: [],
  },
  {
    operationId: 'triggerSchedule',
    method: 'POST',
    path: '/schedules/{name}/trigger',
    summary: 'Start a job of the schedule now',
    auth: 'caller',
    servedBy: 'both',
    answers: { 200: { description: 'the job started', schema: 'triggered' } },
    refusals: [404, 415],
  },
  {
    operationId: 'pauseSchedule',
    method: 'POST',
    path: '/schedules/{name}/pause',
    summary: 'Skip its slots until resumed, with a reason (kept in the schedule state store)',
    auth: 'caller',
    servedBy: 'both',
    body: { schema: pauseBodySchema, required: true },
    answers: { 200: { description: 'the schedule', schema: 'schedule' } },
    refusals: [400, 404, 409, 415],
  },
  {
    operationId: 'resumeSchedule',
    method: 'POST',
    path: '/schedules/{name}/resume',
    summary: 'Fire its slots again from now on (refused when opflow.config.json pauses it)',
    auth: 'caller',
    servedBy: 'both',
    answers: { 200: { description: 'the schedule', schema: 'schedule' } },
    refusals: [404, 409, 415],
  },
  {
    operationId: 'listWebhookDeliveries',
    method: 'GET',
    path: '/webhook-deliveries',
    summary: 'Incoming webhook deliveries, newest first, kept 30 days',
    auth: 'caller',
    servedBy: 'both',
    query: {
      schema: deliveryQuerySchema,
      descriptions: {
        source: 'only deliveries to this source',
        limit: 'at most this many',
        cursor: 'from the previous page',
      },
    },
    answers: { 200: { description: 'a page of deliveries', schema: 'deliveries' } },
    refusals: [400],
  },
  {
    operationId: 'listWebhookSources',
    method: 'GET',
    path: '/webhook-sources',
    summary:
      'The webhook sources: state (open or capped, why, until when), caps, 24-hour spend, last delivery',
    auth: 'caller',
    servedBy: 'both',
    answers: {
      200: { description: 'the sources (a tenant-bound caller: its tenant’s)', schema: 'webhookSources' },
    },
    refusals: [],
  },
  {
    operationId: 'receiveWebhook',
    method: 'POST',
    path: '/webhooks/{source}',
    summary:
      'A signed webhook (Standard Webhooks) starts a job; no bearer token, the signature authenticates',
    auth: 'signature',
    servedBy: 'both',
    body: { media: ['application/json'] },
    answers: {
      202: { description: 'the job (created, or found again for a repeated webhook-id)', schema: 'any' },
    },
    refusals: [400, 401, 404, 413, 429],
  },
  {
    operationId: 'createEventsToken',
    method: 'POST',
    path: '/events/token',
    summary: 'A token for GET /events, signed, valid 5 minutes, scoped to the caller’s tenant',
    description:
      'A browser’s EventSource cannot send an Authorization header: it opens GET /events?token=… with this instead of the API token. A caller bound to a tenant gets its own; an operator may name one.',
    auth: 'caller',
    servedBy: 'serve',
    body: { schema: eventsTokenBodySchema, required: false },
    answers: { 201: { description: 'the token and when it expires', schema: 'any' } },
    refusals: [400, 403, 415],
  },
  {
    operationId: 'events',
    method: 'GET',
    path: '/events',
    summary:
      'Job, step and batch changes and streamed answers as they arrive: server-sent events (opflow serve), a long poll (AWS); resumable with Last-Event-ID',
    description:
      'text/event-stream: `job` (created or a new status), `step` (a new step, poll or retry within a status), `answer` (a streamed answer’s new text with its offset, at most every 250 ms, on AWS every second; a new listener of one job gets the text so far first), `batch` (its totals, at most once a second), `reset` (resumed from before the changes kept: read the state again); each job, step and answer event has its change number as id. A heartbeat comment every 15 s; the stream ends when its token expires. Authenticated by ?token= (POST /events/token) or the bearer token. On AWS the HTTP API cannot stream: application/json `{events, cursor, wait}`, the events after Last-Event-ID (ids are cursors), waiting up to ?wait= seconds (default 20, at most the api function’s time left less 2 s: `wait` says the seconds granted) for the first; the next request sends the answer’s cursor as Last-Event-ID. Authenticated like every route (IAM or JWT), no token.',
    auth: 'caller',
    servedBy: 'both',
    query: {
      schema: eventsQuerySchema,
      descriptions: {
        tenant: 'only this tenant (a token scoped to a tenant reads only its own)',
        batchId: 'only the jobs and totals of this batch',
        jobId: 'only this job',
        token: 'from POST /events/token',
        lastEventId: 'resume after this event id (what the Last-Event-ID header says, for a new EventSource)',
        wait: 'AWS: seconds to wait for a change when there is none, 0 to 20 (default 20)',
      },
    },
    answers: {
      200: {
        description: 'the event stream (opflow serve), or the events and the next cursor (AWS)',
        media: ['text/event-stream', 'application/json'],
      },
    },
    refusals: [400, 401, 403],
  },
  {
    operationId: 'reviewPage',
    method: 'GET',
    path: '/review/{token}',
    summary: "A notice's signed link: the confirmation page of a selection; opening it answers nothing",
    auth: 'public',
    servedBy: 'serve',
    answers: {
      200: { description: 'the question and its options, in a form', media: ['text/html'] },
      409: { description: 'the job no longer waits for this selection (who answered)', media: ['text/html'] },
      410: { description: 'the link has expired', media: ['text/html'] },
    },
    refusals: [],
  },
  {
    operationId: 'reviewAnswer',
    method: 'POST',
    path: '/review/{token}',
    summary: "The confirmation page's form: answers the selection as the link's recipient",
    auth: 'public',
    servedBy: 'serve',
    body: { media: ['application/x-www-form-urlencoded'] },
    answers: {
      200: { description: 'the answer (or a first approval) is recorded', media: ['text/html'] },
      400: { description: 'the choice is not valid: the form again, saying why', media: ['text/html'] },
      403: { description: 'the link was changed or not made here', media: ['text/html'] },
      410: { description: 'the link has expired', media: ['text/html'] },
    },
    refusals: [],
  },
  {
    operationId: 'mcp',
    method: 'POST',
    path: '/mcp',
    summary: 'The MCP server for agents, Streamable HTTP (with opflow serve --mcp)',
    auth: 'caller',
    servedBy: 'serve',
    body: { media: ['application/json'] },
    answers: {
      200: {
        description: 'a JSON-RPC answer or an event stream',
        media: ['application/json', 'text/event-stream'],
      },
    },
    refusals: [],
  },
  {
    operationId: 'dashboard',
    method: 'GET',
    path: '/',
    summary: 'The dashboard page (no token needed to load it)',
    auth: 'public',
    servedBy: 'serve',
    answers: { 200: { description: 'the page', media: ['text/html'] } },
    refusals: [],
  },
  {
    operationId: 'dashboardFile',
    method: 'GET',
    path: '/ui/{file}',
    summary: "The dashboard's script, style and settings",
    auth: 'public',
    servedBy: 'serve',
    answers: {
      200: { description: 'the file', media: ['text/javascript', 'text/css', 'application/json'] },
    },
    refusals: [],
  },
  {
    operationId: 'getJobInput',
    method: 'GET',
    path: '/jobs/{id}/input',
    summary: "A job's input, workflow, label and selection, to run it again",
    auth: 'caller',
    servedBy: 'both',
    params: jobId,
    answers: { 200: { description: 'the input', schema: 'any' } },
    refusals: [404],
  },
  {
    operationId: 'checkBatchUpload',
    method: 'POST',
    path: '/batch-uploads/check',
    summary:
      'A manifest checked line by line as opflow ingest --dry-run, with the cost estimate; nothing stored',
    auth: 'caller',
    servedBy: 'both',
    body: { schema: batchUploadBodySchema, required: true },
    answers: { 200: { description: 'the check', schema: 'any' } },
    refusals: [400, 403, 413, 415],
  },
  {
    operationId: 'startBatchUpload',
    method: 'POST',
    path: '/batch-uploads',
    summary:
      'A manifest checked and started as a batch (on AWS through a presigned S3 upload); the same file again starts nothing twice',
    auth: 'caller',
    servedBy: 'both',
    body: { schema: batchUploadBodySchema, required: true },
    answers: {
      201: { description: 'opflow serve: the batch started', schema: 'any' },
      202: {
        description:
          'AWS: checked; PUT the manifest to upload.url with upload.headers (a presigned S3 URL bound to its SHA-256) and the ingest function starts batch batchId. For documentFiles: uploads[] holds one presigned PUT per document (bound to its length, SHA-256 and metadata); send each, then POST /batch-uploads/commit',
        schema: 'any',
      },
    },
    refusals: [400, 403, 409, 413, 415],
  },
  {
    operationId: 'commitBatchUpload',
    method: 'POST',
    path: '/batch-uploads/commit',
    summary:
      'AWS: documents sent by their presigned PUTs (POST /batch-uploads with documentFiles) start their batch once every one is in storage',
    description:
      'The body is the one the PUTs were presigned for. Each document is looked up in the bucket (its size, SHA-256 and metadata); when all are there, the api writes the batch manifest last and the ingest function starts the batch. 409 names each document not there yet: send it again, then commit. Committing again starts nothing twice.',
    auth: 'caller',
    servedBy: 'aws',
    body: { schema: documentFilesUploadBodySchema, required: true },
    answers: {
      202: {
        description: 'every document is there; the ingest function starts batch batchId',
        schema: 'any',
      },
    },
    refusals: [400, 403, 409, 413, 415],
  },
  {
    operationId: 'getReportFile',
    method: 'GET',
    path: '/jobs/{id}/report/{file}',
    summary: 'A report file itself',
    auth: 'caller',
    servedBy: 'serve',
    restParameter: true,
    params: jobId,
    answers: {
      200: {
        description: 'the file',
        media: ['text/html', 'text/markdown', 'application/json', 'application/pdf'],
      },
    },
    refusals: [404, 409],
  },
] as const satisfies readonly RouteSpec[];

export type RouteEntry = (typeof routeTable)[number];
export type OperationId = RouteEntry['operationId'];
type RouteOf<O extends OperationId> = Extract<RouteEntry, { operationId: O }>;

type ParameterNames<P extends string> = P extends `${string}{${infer Name}}${infer Rest}`
  ? Name | ParameterNames<Rest>
  : never;

/** The path parameters of a route, by name, URL-decoded: `{ id: string }` for `/jobs/{id}`. */
export type PathParameters<O extends OperationId> = {
  readonly [K in ParameterNames<RouteOf<O>['path']>]: string;
};

/** The route of an operation id. */
export function routeOf<O extends OperationId>(operationId: O): RouteOf<O> {
  return routeTable.find((route) => route.operationId === operationId) as RouteOf<O>;
}

/** The routes one server answers. */
export function routesServedBy(server: 'serve' | 'aws'): (RouteSpec & { operationId: OperationId })[] {
  return routeTable.filter((route) => route.servedBy === 'both' || route.servedBy === server);
}

/** `METHOD /path`, as API Gateway writes a route key and the docs name a route. */
export const routeKey = (route: Pick<RouteSpec, 'method' | 'path'>): string =>
  `${route.method} ${route.path}`;

/**
 * A matcher for a route's path: its parameters as groups, in order. A parameter is one segment;
 * with `restParameter` the last one takes the rest of the path.
 */
export function pathPattern(route: Pick<RouteSpec, 'path' | 'restParameter'>): RegExp {
  const names = [...route.path.matchAll(/\{([^}]+)\}/g)].map((match) => match[1]!);
  let source = route.path.replace(/[.*+?^$()|[\]\\]/g, '\\$&');
  names.forEach((name, index) => {
    const rest = route.restParameter === true && index === names.length - 1;
    source = source.replace(`{${name}}`, rest ? '(.+)' : '([^/]+)');
  });
  return new RegExp(`^${source}$`);
}

/** The names of a route's path parameters, in order. */
export function parameterNames(route: Pick<RouteSpec, 'path'>): string[] {
  return [...route.path.matchAll(/\{([^}]+)\}/g)].map((match) => match[1]!);
}

/**
 * The routes one server answers, a line each (`GET /jobs?status=&…  Jobs, newest first…`), for
 * `--help`: the key, its query parameters, and its summary wrapped under it past `width` columns.
 */
export function routeListing(server: 'serve' | 'aws', width = 100): string {
  const keys = routesServedBy(server).map((route) => {
    const query = route.query ? `?${Object.keys(route.query.schema.shape).join('=&')}=` : '';
    return { key: `${route.method} ${route.path}${query}`, summary: route.summary };
  });
  const column = Math.min(Math.max(...keys.map(({ key }) => key.length)) + 4, 36);
  return keys
    .map(({ key, summary }) => {
      const words = summary.split(' ');
      const lines: string[] = [];
      let line = key.length + 2 >= column ? `  ${key}\n${' '.repeat(column)}` : `  ${key}`.padEnd(column);
      let used = line.length - line.lastIndexOf('\n') - 1;
      for (const word of words) {
        if (used > column && used + 1 + word.length > width) {
          lines.push(line);
          line = ' '.repeat(column);
          used = column;
        }
        const gap = used > column ? ' ' : '';
        line += gap + word;
        used += gap.length + word.length;
      }
      lines.push(line);
      return lines.join('\n');
    })
    .join('\n');
}
