/**
 * What a route of the job API is, free of any HTTP framework: a request (method, path, query,
 * headers, body) in, an answer out. A route is an operation of the route table (routes.ts) and the
 * function that answers it; the dispatcher (job-api.ts) finds it by the table's method and path.
 */
import type * as z from 'zod';
import type { JobDeps } from '../engine/deps';
import { formatIssues, issueList } from '../errors/zod-issues';
import { ApiError, type HttpAnswer } from './api-error';
import type { OperationId, PathParameters } from './routes';

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
  deps: JobDeps;
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
  /** Time left to answer, in ms (a Lambda invocation's); a long poll waits within it. Default: no limit. */
  remainingMs?: (() => number) | undefined;
}

/** What a route is given beside its path parameters. */
export interface ApiRouteContext {
  /** The tenant the caller is bound to, if any (see `JobApiOptions.tenant`). */
  tenant: string | undefined;
  /** The body as JSON (`{}` when empty), refused when too large or not JSON. */
  body(): unknown;
  /** Time left to answer, in ms (see `JobApiOptions.remainingMs`). */
  remainingMs(): number;
}

/** The function answering operation `O`: its path parameters arrive by name, URL-decoded. */
export type RouteHandler<O extends OperationId> = (
  params: PathParameters<O>,
  request: JobApiRequest,
  context: ApiRouteContext,
) => Promise<JobApiResponse>;

/** One route: an operation of the route table and its handler. */
export type ApiRoute = {
  [O in OperationId]: { readonly operation: O; readonly run: RouteHandler<O> };
}[OperationId];

/** The route answering `operation` with `run`. */
export function apiRoute<O extends OperationId>(operation: O, run: RouteHandler<O>): ApiRoute {
  return { operation, run } as ApiRoute;
}

/** The value held to the schema, or a 400 naming each field at fault under `where` (`body`, `query`). */
export function parse<T>(schema: z.ZodType<T>, value: unknown, where: string): T {
  const parsed = schema.safeParse(value);
  if (!parsed.success)
    throw new ApiError(
      400,
      'invalid-request',
      formatIssues(parsed.error, { root: where }),
      {},
      issueList(parsed.error, where),
    );
  return parsed.data;
}
