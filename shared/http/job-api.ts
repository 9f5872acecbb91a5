/**
 * The job HTTP API, free of any HTTP framework: a request (method, path, query, headers, body) in,
 * a JSON answer out. The Lambda `api` function adapts API Gateway events to it; `opflow serve`
 * adapts node:http the same way. The route table (routes.ts) says which routes there are; the job
 * routes (job-routes.ts) and the routes a server adds (the dashboard's) answer them. Every request
 * is validated with zod and every refusal is a 4xx JSON error saying what is wrong and where.
 */
import { JobRequestError } from '../engine/job-commands';
import type { WorkflowRegistry } from '../engine/workflow';
import { errorMessage, namedErrorMessage } from '../errors/error-message';
import { ApiError, refusal, refusalAnswer } from './api-error';
import type { ApiRoute, JobApiOptions, JobApiRequest, JobApiResponse } from './api-route';
import { bodyTooLarge, defaultMaxBodyBytes } from './body-limit';
import { engineRefusals } from './engine-refusals';
import { jobRoutes } from './job-routes';
import { type OperationId, parameterNames, pathPattern, routeTable } from './routes';

// The refusal class and JSON answers of every HTTP API of opflow (api-error.ts), for the routes.
export { ApiError, json } from './api-error';
export type {
  ApiRoute,
  ApiRouteContext,
  JobApiOptions,
  JobApiRequest,
  JobApiResponse,
  RouteHandler,
} from './api-route';
export { apiRoute, parse } from './api-route';
export { jobView, maxListBodyBytes } from './job-routes';
export {
  createBodySchema,
  idempotencyKeySchema,
  jobIdSchema,
  listQuerySchema,
  retryBodySchema,
  selectionBodySchema,
} from './request-schemas';

function readBody(request: JobApiRequest, maxBytes: number, workflows: WorkflowRegistry): unknown {
  const text = request.body ?? '';
  if (Buffer.byteLength(text) > maxBytes) throw bodyTooLarge(maxBytes, request, workflows);
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

/** Each operation's method, path matcher and parameter names, from the route table (built once). */
const matchers = new Map(
  routeTable.map((route) => [
    route.operationId as OperationId,
    { method: route.method as string, pattern: pathPattern(route), names: parameterNames(route) },
  ]),
);

function decodePart(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    throw new ApiError(400, 'invalid-request', `path: ${JSON.stringify(part)} is not valid URL encoding`);
  }
}

/** The route answering `method path` among `routes`, with its path parameters; 404 or 405 otherwise. */
export function matchRoute(
  routes: readonly ApiRoute[],
  method: string,
  path: string,
): { route: ApiRoute; params: Record<string, string> } {
  const matching = routes.filter((route) => matchers.get(route.operation)!.pattern.test(path));
  if (matching.length === 0) throw new ApiError(404, 'not-found', `no route ${path}`);
  const route = matching.find((candidate) => matchers.get(candidate.operation)!.method === method);
  if (!route) {
    const allow = matching.map((candidate) => matchers.get(candidate.operation)!.method).join(', ');
    throw new ApiError(405, 'method-not-allowed', `${method} ${path} is not supported; use ${allow}`, {
      allow,
    });
  }
  const { pattern, names } = matchers.get(route.operation)!;
  const values = pattern.exec(path)!.slice(1).map(decodePart);
  return { route, params: Object.fromEntries(names.map((name, index) => [name, values[index]!])) };
}

/** The refusal of a request the engine refused: its reason's status and code. */
function engineRefusal(error: JobRequestError): JobApiResponse {
  const { status, code } = engineRefusals[error.reason];
  // The engine's paths are of the request, which is the body here.
  const issues = error.issues?.map((issue) => ({ ...issue, path: `body.${issue.path}` }));
  return refusalAnswer(new ApiError(status, code, error.message, {}, issues));
}

/** Answers one request. Never throws: unexpected failures become a 500 without details. */
export async function handleJobApiRequest(
  request: JobApiRequest,
  options: JobApiOptions,
): Promise<JobApiResponse> {
  const maxBodyBytes = options.maxBodyBytes ?? defaultMaxBodyBytes;
  try {
    const path = request.path.length > 1 ? request.path.replace(/\/+$/, '') : request.path;
    const method = request.method.toUpperCase();
    const { route, params } = matchRoute([...jobRoutes(options), ...(options.routes ?? [])], method, path);
    if (options.requireJsonContentType && method === 'POST') requireJson(request);
    return await route.run(params as never, request, {
      tenant: options.tenant,
      body: () => readBody(request, maxBodyBytes, options.deps.workflows),
      remainingMs: options.remainingMs ?? (() => Number.POSITIVE_INFINITY),
    });
  } catch (error) {
    if (error instanceof ApiError) return refusalAnswer(error);
    if (error instanceof JobRequestError) return engineRefusal(error);
    options.deps.log?.error('job API request failed', {
      method: request.method,
      path: request.path,
      error: namedErrorMessage(error),
    });
    return refusal(500, 'internal', 'the request failed; try again later');
  }
}
