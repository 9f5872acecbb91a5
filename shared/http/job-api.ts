/**
 * The job HTTP API, free of any HTTP framework: a request (method, path, query, headers, body) in,
 * a JSON response out. The Lambda `api` function adapts API Gateway events to it; a local server
 * (`opflow serve`) can adapt node:http the same way. Every request is validated with zod and every
 * refusal is a 4xx JSON error saying what is wrong and where.
 *
 *   POST /jobs                   create a job (header `Idempotency-Key`: the same key returns the same job)
 *   GET  /health                 liveness: {"status": "ok", "time": ISO 8601}
 *   GET  /openapi.json           this API described in OpenAPI 3.1 (shared/http/openapi.ts)
 *   GET  /jobs                   list jobs (?status=&batchId=&tenant=&limit=&cursor=, and
 *                                workflow=&source=&since=&until=&q= answered by job-search.ts)
 *   GET  /jobs/{id}              one job
 *   POST /jobs/{id}/selection    answer a selection: {"selected": ["f1", "f2"]}
 *   POST /jobs/{id}/cancel       cancel
 *   POST /jobs/{id}/retry        run a FAILED or CANCELLED job again: {"fromStart": false}
 *   GET  /jobs/{id}/report       short-lived links to the report files (?file=report.html for one)
 */
import type * as z from 'zod';
import { shownCallbackUrl } from '../engine/callback-record';
import type { EngineDeps } from '../engine/deps';
import { answerSelection, cancelJob, JobRequestError, submitJob } from '../engine/job-commands';
import { isTerminal, type Job } from '../engine/job-record';
import { retryJob } from '../engine/retry';
import { errorMessage, namedErrorMessage } from '../errors/error-message';
import { formatIssues } from '../errors/zod-issues';
import type { JobView } from './answer-schemas';
import { ApiError, type HttpAnswer, json, refusal, refusalAnswer } from './api-error';
import { hasSearchFilters, jobTitle, searchJobs } from './job-search';
import {
  createBodySchema,
  idempotencyKeySchema,
  jobIdSchema,
  listQuerySchema,
  reportQuerySchema,
  retryBodySchema,
  selectionBodySchema,
} from './request-schemas';

export interface JobApiRequest {
  method: string;
  /** The path without query string, e.g. `/jobs/01J.../cancel`. */
  path: string;
  query?: Readonly<Record<string, string | undefined>> | undefined;
  /** Header names in lower case. */
  headers?: Readonly<Record<string, string | undefined>> | undefined;
  body?: string | undefined;
}

export type JobApiResponse = HttpAnswer;

export interface JobApiOptions {
  deps: EngineDeps;
  /**
   * The tenant the caller is bound to (from its token). When set, the caller sees and creates only
   * that tenant's jobs; when absent (an operator signing with IAM), the request names the tenant.
   */
  tenant?: string | undefined;
  /** Lifetime of report links (default 15 minutes). */
  linkTtlSeconds?: number | undefined;
  /**
   * The server serves the report files itself at `GET /jobs/{id}/report/{file}` (`opflow serve`):
   * the report answer links there and has no expiry. Default: presigned, expiring links (AWS).
   */
  servesReportFiles?: boolean | undefined;
  /** Largest request body accepted (default 1 MiB). */
  maxBodyBytes?: number | undefined;
  /**
   * Refuse a state-changing request (POST) that does not say `Content-Type: application/json`, even
   * with an empty body: a web page of another origin can send a form or `text/plain` body without a
   * CORS preflight, but not JSON. On for `opflow serve` (reachable from a browser). Default: false.
   */
  requireJsonContentType?: boolean | undefined;
  /**
   * More routes on the same terms (token, tenant, refusals, JSON): the timeline, batches, schedules
   * and webhook deliveries (shared/dashboard/*-routes.ts), on `opflow serve` and on the Lambda api.
   */
  routes?: readonly ApiRoute[] | undefined;
}

/** What a route of `JobApiOptions.routes` is given beside its path parameters. */
export interface ApiRouteContext {
  /** The tenant the caller is bound to, if any (see `JobApiOptions.tenant`). */
  tenant: string | undefined;
  /** The body as JSON (`{}` when empty), refused when too large or not JSON. */
  body(): unknown;
}

/** One route: its path parameters arrive URL-decoded. */
export interface ApiRoute {
  method: string;
  pattern: RegExp;
  run(match: string[], request: JobApiRequest, context: ApiRouteContext): Promise<JobApiResponse>;
}

// The refusal class and JSON answers of every HTTP API of opflow (api-error.ts), for the routes.
export { ApiError, json } from './api-error';

export {
  createBodySchema,
  idempotencyKeySchema,
  jobIdSchema,
  listQuerySchema,
  retryBodySchema,
  selectionBodySchema,
} from './request-schemas';

export function parse<T>(schema: z.ZodType<T>, value: unknown, where: string): T {
  const parsed = schema.safeParse(value);
  if (!parsed.success)
    throw new ApiError(400, 'invalid-request', formatIssues(parsed.error, { root: where }));
  return parsed.data;
}

/**
 * The largest `GET /jobs` page body: on aws the answer goes back through a synchronous Lambda
 * invocation, which carries at most 6 MB. A page over it (many jobs with long option lists, errors
 * or earlier runs) is listed again with fewer jobs; its cursor goes on from the last one shown.
 */
export const maxListBodyBytes = 5 * 1024 * 1024;

/** A page of at most `limit` jobs whose JSON stays within `maxBytes` (never fewer than one job). */
async function pageWithin(
  list: (limit: number) => Promise<{ jobs: Job[]; cursor?: string | undefined }>,
  limit: number,
  maxBytes: number,
): Promise<{ jobs: JobView[]; cursor?: string | undefined }> {
  for (let size = limit; ; ) {
    const page = await list(size);
    const body = { jobs: page.jobs.map(jobView), cursor: page.cursor };
    const bytes = Buffer.byteLength(JSON.stringify(body));
    if (bytes <= maxBytes || page.jobs.length <= 1) return body;
    size = Math.max(
      1,
      Math.min(page.jobs.length - 1, Math.floor((page.jobs.length * maxBytes * 0.9) / bytes)),
    );
  }
}

const iso = (ms: number | undefined): string | undefined =>
  ms === undefined || !Number.isFinite(ms) ? undefined : new Date(ms).toISOString();

/**
 * What a caller sees of a job: everything but the input and internal bookkeeping. Every time is
 * ISO 8601 (UTC), as in the CLI's `--json`.
 */
export function jobView(job: Job): JobView {
  return {
    id: job.id,
    workflow: job.workflow,
    tenant: job.tenant,
    status: job.status,
    step: job.step,
    version: job.version,
    label: job.label,
    title: jobTitle(job),
    upstream: job.upstream,
    selection: job.selection,
    pending: job.pending && { ...job.pending, offeredAt: iso(job.pending.offeredAt)! },
    selections: job.selections,
    attempts: job.attempts,
    polls: job.polls,
    lastError: job.lastError && { ...job.lastError, at: iso(job.lastError.at)! },
    usage: job.usage,
    outputs: job.outputs,
    runs: job.runs?.map((run) => ({
      ...run,
      error: run.error && { ...run.error, at: iso(run.error.at)! },
      finishedAt: iso(run.finishedAt),
      retriedAt: iso(run.retriedAt)!,
    })),
    batchId: job.batchId,
    source: job.source,
    idempotencyKey: job.idempotencyKey,
    callbackUrl: job.callbackUrl === undefined ? undefined : shownCallbackUrl(job.callbackUrl),
    callback: job.callback && {
      ...job.callback,
      attempts: job.callback.attempts.map((attempt) => ({ ...attempt, at: iso(attempt.at)! })),
      nextAttemptAt: iso(job.callback.nextAttemptAt),
      deliveredAt: iso(job.callback.deliveredAt),
    },
    nextRunAt: isTerminal(job.status) ? undefined : iso(job.nextRunAt),
    deadlineAt: iso(job.deadlineAt)!,
    createdAt: iso(job.createdAt)!,
    updatedAt: iso(job.updatedAt)!,
    finishedAt: iso(job.finishedAt),
  };
}

function readBody(request: JobApiRequest, maxBytes: number): unknown {
  const text = request.body ?? '';
  if (Buffer.byteLength(text) > maxBytes) {
    throw new ApiError(413, 'body-too-large', `the request body is over ${maxBytes} bytes`);
  }
  if (text.trim() === '') return {};
  const type = request.headers?.['content-type'];
  if (type && !/^application\/(.+\+)?json\b/i.test(type)) {
    throw new ApiError(
      415,
      'unsupported-media-type',
      `send JSON (content-type application/json), not ${type}`,
    );
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new ApiError(400, 'invalid-json', `the request body is not JSON: ${errorMessage(error)}`);
  }
}

const jsonContentType = /^application\/(.+\+)?json\s*(;|$)/i;

/** Refuses a state-changing request whose Content-Type is not JSON (see `requireJsonContentType`). */
function requireJson(request: JobApiRequest): void {
  const type = request.headers?.['content-type'];
  if (type === undefined || !jsonContentType.test(type.trim())) {
    throw new ApiError(
      415,
      'unsupported-media-type',
      `header.Content-Type: a ${request.method.toUpperCase()} must say application/json (send {} for no fields)${type === undefined ? '' : `, not ${JSON.stringify(type.slice(0, 100))}`}`,
    );
  }
}

type Route = ApiRoute;

/** Answers one request. Never throws: unexpected failures become a 500 without details. */
export async function handleJobApiRequest(
  request: JobApiRequest,
  options: JobApiOptions,
): Promise<JobApiResponse> {
  const { deps } = options;
  const maxBodyBytes = options.maxBodyBytes ?? 1024 * 1024;

  /** The job, if the caller may see it: another tenant's job does not exist for a bound caller. */
  const visibleJob = async (rawId: string): Promise<Job> => {
    const id = parse(jobIdSchema, rawId, 'path.id');
    const job = await deps.store.get(id);
    if (!job || (options.tenant !== undefined && job.tenant !== options.tenant)) {
      throw new ApiError(404, 'not-found', `no job ${id}`);
    }
    return job;
  };

  const routes: Route[] = [
    {
      method: 'GET',
      pattern: /^\/health$/,
      run: async () => json(200, { status: 'ok', time: new Date(deps.clock.now()).toISOString() }),
    },
    {
      method: 'GET',
      pattern: /^\/openapi\.json$/,
      // Imported on first request: the description's answer schemas are some hundred zod schemas
      // that no other route needs, and building them at load slowed every cold start of the api.
      run: async () => {
        const { jobApiOpenApi } = await import('./openapi');
        return json(200, jobApiOpenApi());
      },
    },
    {
      method: 'POST',
      pattern: /^\/jobs$/,
      run: async (_match, req) => {
        const body = parse(createBodySchema, readBody(req, maxBodyBytes), 'body');
        const rawKey = req.headers?.['idempotency-key'];
        const idempotencyKey =
          rawKey === undefined ? undefined : parse(idempotencyKeySchema, rawKey, 'header.Idempotency-Key');
        if (options.tenant !== undefined && body.tenant !== 'default' && body.tenant !== options.tenant) {
          throw new ApiError(
            403,
            'forbidden',
            `this caller may only create jobs of tenant ${options.tenant}`,
          );
        }
        const tenant = options.tenant ?? body.tenant;
        const { job, created } = await submitJob(deps, { ...body, tenant, idempotencyKey });
        return json(created ? 201 : 200, { job: jobView(job), created }, { location: `/jobs/${job.id}` });
      },
    },
    {
      method: 'GET',
      pattern: /^\/jobs$/,
      run: async (_match, req) => {
        const query = parse(listQuerySchema, req.query ?? {}, 'query');
        if (options.tenant !== undefined && query.tenant !== undefined && query.tenant !== options.tenant) {
          throw new ApiError(403, 'forbidden', `this caller may only list jobs of tenant ${options.tenant}`);
        }
        try {
          const { workflow, source, since, until, q, ...stored } = query;
          const filters = { workflow, source, since, until, q };
          const listed = { ...stored, tenant: options.tenant ?? query.tenant };
          const list = (limit: number) =>
            hasSearchFilters(filters)
              ? searchJobs(
                  deps.store,
                  { status: listed.status, batchId: listed.batchId, tenant: listed.tenant },
                  filters,
                  limit,
                  listed.cursor,
                )
              : deps.store.list({ ...listed, limit });
          return json(200, await pageWithin(list, listed.limit, maxListBodyBytes));
        } catch (error) {
          // Both stores refuse a cursor they did not hand out with a RangeError.
          if (query.cursor !== undefined && error instanceof RangeError) {
            throw new ApiError(400, 'invalid-request', 'query.cursor: is not a cursor this API handed out');
          }
          throw error;
        }
      },
    },
    {
      method: 'GET',
      pattern: /^\/jobs\/([^/]+)$/,
      run: async ([id]) => json(200, { job: jobView(await visibleJob(id!)) }),
    },
    {
      method: 'POST',
      pattern: /^\/jobs\/([^/]+)\/selection$/,
      run: async ([id], req) => {
        const job = await visibleJob(id!);
        const body = parse(selectionBodySchema, readBody(req, maxBodyBytes), 'body');
        return json(200, { job: jobView(await answerSelection(deps, job.id, body.selected)) });
      },
    },
    {
      method: 'POST',
      pattern: /^\/jobs\/([^/]+)\/cancel$/,
      run: async ([id]) => {
        const job = await visibleJob(id!);
        return json(200, { job: jobView(await cancelJob(deps, job.id)) });
      },
    },
    {
      method: 'POST',
      pattern: /^\/jobs\/([^/]+)\/retry$/,
      run: async ([id], req) => {
        const job = await visibleJob(id!);
        const body = parse(retryBodySchema, readBody(req, maxBodyBytes), 'body');
        return json(200, { job: jobView(await retryJob(deps, job.id, { fromStart: body.fromStart })) });
      },
    },
    {
      method: 'GET',
      pattern: /^\/jobs\/([^/]+)\/report$/,
      run: async ([id], req) => {
        const job = await visibleJob(id!);
        const query = parse(reportQuerySchema, req.query ?? {}, 'query');
        if (job.status !== 'SUCCEEDED') {
          const why = isTerminal(job.status) ? `it ended ${job.status}` : `it is ${job.status}`;
          throw new ApiError(409, 'no-report', `job ${job.id} has no report: ${why}`);
        }
        const prefix = `reports/${job.id}/`;
        const files = job.outputs
          .filter((key) => key.startsWith(prefix) && !key.startsWith(`${prefix}steps/`))
          .map((key) => ({ key, name: key.slice(prefix.length) }))
          .filter(
            (file) =>
              query.file === undefined ||
              file.name === query.file ||
              file.name === `attachments/${query.file}`,
          );
        if (files.length === 0)
          throw new ApiError(404, 'not-found', `job ${job.id} has no report file ${query.file}`);
        if (options.servesReportFiles) {
          // Served by this server: a link that does not expire, and where the file is on disk.
          const served = await Promise.all(
            files.map(async (file) => ({
              ...file,
              url: `/jobs/${encodeURIComponent(job.id)}/report/${file.name.split('/').map(encodeURIComponent).join('/')}`,
              path: await deps.reports.link(file.key),
            })),
          );
          return json(200, { jobId: job.id, files: served });
        }
        const ttl = options.linkTtlSeconds ?? 900;
        const links = await Promise.all(
          files.map(async (file) => ({ ...file, url: await deps.reports.link(file.key, ttl) })),
        );
        return json(200, {
          jobId: job.id,
          expiresInSeconds: ttl,
          expiresAt: new Date(deps.clock.now() + ttl * 1000).toISOString(),
          files: links,
        });
      },
    },
    ...(options.routes ?? []),
  ];

  try {
    const path = request.path.length > 1 ? request.path.replace(/\/+$/, '') : request.path;
    const method = request.method.toUpperCase();
    const matching = routes.filter((route) => route.pattern.test(path));
    if (matching.length === 0) throw new ApiError(404, 'not-found', `no route ${path}`);
    const route = matching.find((candidate) => candidate.method === method);
    if (!route) {
      const allow = matching.map((candidate) => candidate.method).join(', ');
      throw new ApiError(405, 'method-not-allowed', `${method} ${path} is not supported; use ${allow}`, {
        allow,
      });
    }
    if (options.requireJsonContentType && method === 'POST') requireJson(request);
    const match = route.pattern
      .exec(path)!
      .slice(1)
      .map((part) => {
        try {
          return decodeURIComponent(part);
        } catch {
          throw new ApiError(
            400,
            'invalid-request',
            `path: ${JSON.stringify(part)} is not valid URL encoding`,
          );
        }
      });
    return await route.run(match, request, {
      tenant: options.tenant,
      body: () => readBody(request, maxBodyBytes),
    });
  } catch (error) {
    if (error instanceof ApiError) return refusalAnswer(error);
    if (error instanceof JobRequestError) {
      const code = { 400: 'invalid-request', 404: 'not-found', 409: 'conflict' }[error.status];
      return refusal(error.status, code, error.message);
    }
    deps.log?.error('job API request failed', {
      method: request.method,
      path: request.path,
      error: namedErrorMessage(error),
    });
    return refusal(500, 'internal', 'the request failed; try again later');
  }
}
