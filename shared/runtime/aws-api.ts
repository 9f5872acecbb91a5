/**
 * The job API behind API Gateway (HTTP API, payload format 2.0): the event becomes a framework-free
 * request for shared/http/job-api.ts, and its answer becomes the function's result. A caller
 * authenticated with a JWT that carries a `tenant` (or `custom:tenant`) claim is bound to that
 * tenant; an IAM-signed caller (an operator) names the tenant in the request.
 */
import type { APIGatewayProxyEventV2, APIGatewayProxyResultV2, Context } from 'aws-lambda';
import { z } from 'zod';
import type { EngineDeps } from '../engine/deps';
import { handleJobApiRequest, type JobApiResponse } from '../http/job-api';
import { engineLogger, type Observability } from './aws-observability';

export interface ApiHandlerOptions {
  deps: EngineDeps;
  observability: Observability;
  /** Lifetime of report links (default 15 minutes). */
  linkTtlSeconds?: number | undefined;
}

export interface ApiHandler {
  handle(event: APIGatewayProxyEventV2, context: Context): Promise<APIGatewayProxyResultV2>;
}

/** The tenant claim of a JWT-authorized request, if any. */
export function tenantOfEvent(event: APIGatewayProxyEventV2): string | undefined {
  const claims = (event.requestContext as { authorizer?: { jwt?: { claims?: Record<string, unknown> } } })
    .authorizer?.jwt?.claims;
  const tenant = claims?.tenant ?? claims?.['custom:tenant'];
  return typeof tenant === 'string' && tenant.length > 0 ? tenant : undefined;
}

/** What this function reads of an event: an HTTP API payload 2.0 (a REST API's 1.0 event is refused). */
const httpApiEventSchema = z.object({
  rawPath: z.string().startsWith('/'),
  headers: z.record(z.string(), z.string().optional()).optional(),
  queryStringParameters: z.record(z.string(), z.string().optional()).optional(),
  body: z.string().optional(),
  isBase64Encoded: z.boolean().optional(),
  requestContext: z.object({ requestId: z.string(), http: z.object({ method: z.string().min(1) }) }),
});

/** The job a request was about, for its log line: the one its path names, or the one it created. */
function jobIdOf(path: string, response: JobApiResponse): string | undefined {
  const named = /^\/jobs\/([^/]+)/.exec(path)?.[1];
  if (named !== undefined || response.status >= 300) return named;
  try {
    const id = (JSON.parse(response.body) as { job?: { id?: unknown } }).job?.id;
    return typeof id === 'string' ? id : undefined;
  } catch {
    return undefined;
  }
}

export function createApiHandler(options: ApiHandlerOptions): ApiHandler {
  const { logger } = options.observability;
  return {
    async handle(raw, context) {
      logger.addContext(context);
      const parsed = httpApiEventSchema.safeParse(raw);
      if (!parsed.success) {
        logger.error('not an HTTP API (payload 2.0) event: check the integration', {
          problem: z.prettifyError(parsed.error),
        });
        return {
          statusCode: 500,
          headers: { 'content-type': 'application/json; charset=utf-8' },
          body: JSON.stringify({
            error: { status: 500, code: 'internal', message: 'the API is misconfigured' },
          }),
        };
      }
      const event = raw;
      logger.setCorrelationId(event.requestContext.requestId);
      const headers: Record<string, string | undefined> = {};
      for (const [name, value] of Object.entries(event.headers ?? {})) headers[name.toLowerCase()] = value;
      const body =
        event.body === undefined
          ? undefined
          : event.isBase64Encoded
            ? Buffer.from(event.body, 'base64').toString('utf8')
            : event.body;
      const request = {
        method: event.requestContext.http.method,
        path: event.rawPath,
        query: event.queryStringParameters ?? {},
        headers,
        body,
      };
      const response = await handleJobApiRequest(request, {
        deps: { ...options.deps, log: engineLogger(logger) },
        tenant: tenantOfEvent(event),
        linkTtlSeconds: options.linkTtlSeconds,
      });
      // Method and path only: query strings and bodies may carry things that do not belong in logs.
      logger.info('api request', {
        method: request.method,
        path: request.path,
        status: response.status,
        jobId: jobIdOf(request.path, response),
      });
      return { statusCode: response.status, headers: response.headers, body: response.body };
    },
  };
}
