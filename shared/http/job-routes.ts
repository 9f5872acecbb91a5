/**
 * The job routes of the job API (the route table's createJob, listJobs, getJob, answerSelection,
 * cancelJob, retryJob, getReport, health and openapi), and what a caller sees of a job (`jobView`).
 * The dispatcher (job-api.ts) adds them before the routes a server brings (the dashboard's).
 */

import { shownCallbackUrl } from '../engine/callback-record';
import type { JobDeps } from '../engine/deps';
import { answerSelection, cancelJob, submitJob } from '../engine/job-commands';
import { isTerminal, type Job } from '../engine/job-record';
import { retryJob } from '../engine/retry';
import { answerLabels, selectionRoundsView } from '../engine/review-record';
import type { JobView } from './answer-schemas';
import { ApiError, json } from './api-error';
import {
  type ApiRoute,
  type ApiRouteContext,
  apiRoute,
  type JobApiOptions,
  type JobApiRequest,
  parse,
} from './api-route';
import { bulkRoutes } from './bulk-route';
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

/** Each selection point's approval rounds, labelled (absent when nobody was asked or answered). */
function roundsView(job: Job): Pick<JobView, 'selectionRounds'> {
  const rounds = selectionRoundsView(job);
  return rounds.length === 0 ? {} : { selectionRounds: rounds };
}

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
    answers: job.answers?.map((answer) => {
      const labels = answerLabels(answer, job.pending);
      return { ...answer, ...(labels ? { labels } : {}), at: iso(answer.at)! };
    }),
    review: job.review && {
      rule: job.review.rule,
      approvals: job.review.approvals,
      rounds: job.review.rounds.map((round) => ({
        round: round.round,
        deliveries: round.deliveries.map((delivery) => ({ ...delivery, at: iso(delivery.at)! })),
      })),
      nextNoticeAt: iso(job.review.nextNoticeAt),
      timeoutAt: iso(job.review.timeoutAt),
    },
    ...roundsView(job),
    attempts: job.attempts,
    polls: job.polls,
    ...(job.recreatedTasks ? { recreatedTasks: job.recreatedTasks } : {}),
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
    priority: job.priority ?? 'normal',
    ...(job.maxUnits === undefined ? {} : { maxUnits: job.maxUnits }),
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
    callSince: isTerminal(job.status) ? undefined : iso(job.inFlightSince),
    deadlineAt: iso(job.deadlineAt)!,
    createdAt: iso(job.createdAt)!,
    updatedAt: iso(job.updatedAt)!,
    finishedAt: iso(job.finishedAt),
  };
}

/** The job, if the caller may see it: another tenant's job does not exist for a bound caller. */
async function visibleJob(deps: JobDeps, tenant: string | undefined, rawId: string): Promise<Job> {
  const id = parse(jobIdSchema, rawId, 'path.id');
  const job = await deps.store.get(id);
  if (!job || (tenant !== undefined && job.tenant !== tenant)) {
    throw new ApiError(404, 'not-found', `no job ${id}`);
  }
  return job;
}

/** `POST /jobs`: a bound caller creates jobs of its own tenant only. */
async function createJob(deps: JobDeps, request: JobApiRequest, context: ApiRouteContext) {
  const body = parse(createBodySchema, context.body(), 'body');
  const rawKey = request.headers?.['idempotency-key'];
  const idempotencyKey =
    rawKey === undefined ? undefined : parse(idempotencyKeySchema, rawKey, 'header.Idempotency-Key');
  const bound = context.tenant;
  if (bound !== undefined && body.tenant !== 'default' && body.tenant !== bound) {
    throw new ApiError(403, 'forbidden', `this caller may only create jobs of tenant ${bound}`);
  }
  const { job, created } = await submitJob(deps, { ...body, tenant: bound ?? body.tenant, idempotencyKey });
  return json(created ? 201 : 200, { job: jobView(job), created }, { location: `/jobs/${job.id}` });
}

/** `GET /jobs`: the stores' own listing, or job-search.ts for the filters they do not index. */
async function listJobs(deps: JobDeps, request: JobApiRequest, bound: string | undefined) {
  const query = parse(listQuerySchema, request.query ?? {}, 'query');
  if (bound !== undefined && query.tenant !== undefined && query.tenant !== bound) {
    throw new ApiError(403, 'forbidden', `this caller may only list jobs of tenant ${bound}`);
  }
  const { workflow, source, since, until, q, ...stored } = query;
  const filters = { workflow, source, since, until, q };
  const listed = { ...stored, tenant: bound ?? query.tenant };
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
  try {
    return json(200, await pageWithin(list, listed.limit, maxListBodyBytes));
  } catch (error) {
    // Both stores refuse a cursor they did not hand out with a RangeError.
    if (query.cursor !== undefined && error instanceof RangeError) {
      throw new ApiError(400, 'invalid-request', 'query.cursor: is not a cursor this API handed out');
    }
    throw error;
  }
}

/** `GET /jobs/{id}/report`: this server's own links, or presigned links that expire. */
async function reportLinks(options: JobApiOptions, job: Job, request: JobApiRequest) {
  const { deps } = options;
  const query = parse(reportQuerySchema, request.query ?? {}, 'query');
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
        query.file === undefined || file.name === query.file || file.name === `attachments/${query.file}`,
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
}

/** The job routes, on the terms of `options`. */
export function jobRoutes(options: JobApiOptions): ApiRoute[] {
  const { deps } = options;
  return [
    apiRoute('health', async () =>
      json(200, { status: 'ok', time: new Date(deps.clock.now()).toISOString() }),
    ),
    // Imported on first request: the description's answer schemas are some hundred zod schemas
    // that no other route needs, and building them at load slowed every cold start of the api.
    apiRoute('openapi', async () => json(200, (await import('./openapi')).jobApiOpenApi())),
    apiRoute('createJob', (_params, request, context) => createJob(deps, request, context)),
    apiRoute('listJobs', (_params, request, { tenant }) => listJobs(deps, request, tenant)),
    apiRoute('getJob', async ({ id }, _request, { tenant }) =>
      json(200, { job: jobView(await visibleJob(deps, tenant, id)) }),
    ),
    apiRoute('answerSelection', async ({ id }, _request, { tenant, body }) => {
      const job = await visibleJob(deps, tenant, id);
      const { selected, by, via } = parse(selectionBodySchema, body(), 'body');
      return json(200, { job: jobView(await answerSelection(deps, job.id, selected, { via, by })) });
    }),
    apiRoute('cancelJob', async ({ id }, _request, { tenant }) => {
      const job = await visibleJob(deps, tenant, id);
      return json(200, { job: jobView(await cancelJob(deps, job.id)) });
    }),
    apiRoute('retryJob', async ({ id }, _request, { tenant, body }) => {
      const job = await visibleJob(deps, tenant, id);
      const { fromStart, deadlineMs, maxUnits } = parse(retryBodySchema, body(), 'body');
      return json(200, {
        job: jobView(await retryJob(deps, job.id, { fromStart, deadlineMs, maxUnits })),
      });
    }),
    apiRoute('getReport', async ({ id }, request, { tenant }) =>
      reportLinks(options, await visibleJob(deps, tenant, id), request),
    ),
    ...bulkRoutes(deps),
  ];
}
