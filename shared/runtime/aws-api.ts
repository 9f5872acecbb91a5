/**
 * The job API behind API Gateway (HTTP API, payload format 2.0): the event becomes a framework-free
 * request for shared/http/job-api.ts, and its answer becomes the function's result. A caller
 * authenticated with a JWT that carries a `tenant` (or `custom:tenant`) claim is bound to that
 * tenant; an IAM-signed caller (an operator) names the tenant in the request.
 */
import type { APIGatewayProxyEventV2, APIGatewayProxyResultV2, Context } from 'aws-lambda';
import type { EngineDeps } from '../engine/deps';
import { handleJobApiRequest } from '../http/job-api';
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

export function createApiHandler(options: ApiHandlerOptions): ApiHandler {
  const { logger } = options.observability;
  return {
    async handle(event, context) {
      logger.addContext(context);
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
      logger.info('api request', { method: request.method, path: request.path, status: response.status });
      return { statusCode: response.status, headers: response.headers, body: response.body };
    },
  };
}
