/**
 * The job API behind API Gateway (HTTP API, payload format 2.0): the event becomes a framework-free
 * request for shared/http/job-api.ts, and its answer becomes the function's result. A caller
 * authenticated with a JWT that carries a `tenant` (or `custom:tenant`) claim is bound to that
 * tenant; a JWT without one is an operator's only through the operator grant the stack configures
 * (`api.auth.operators`), and refused otherwise; an IAM-signed caller (an operator) names the tenant
 * in the request.
 */
import type { APIGatewayProxyEventV2, APIGatewayProxyResultV2, Context } from 'aws-lambda';
import * as z from 'zod';
import type { JobDeps } from '../../engine/deps';
import { refusal } from '../../http/api-error';
import { type ApiRoute, handleJobApiRequest, type JobApiResponse } from '../../http/job-api';
import type { ApiAuth, OperatorGrant } from './api-auth';
import { acceptHttpApiEvent, lambdaAnswer, lowerCaseHeaders } from './http-api-event';
import { engineLogger, type Observability } from './observability';

export interface ApiHandlerOptions {
  deps: JobDeps;
  observability: Observability;
  /** Lifetime of report links (default 15 minutes). */
  linkTtlSeconds?: number | undefined;
  /** More routes (timeline, batches, schedules, webhook deliveries: api-routes.ts). */
  routes?: readonly ApiRoute[] | undefined;
  /** How callers authenticate, and who is an operator (OPFLOW_API_AUTH; default IAM, no JWT operators). */
  auth?: ApiAuth | undefined;
}

export interface ApiHandler {
  handle(event: APIGatewayProxyEventV2, context: Context): Promise<APIGatewayProxyResultV2>;
}

/** A tenant claim opflow accepts: the same names a job's tenant may have. */
const tenantClaimSchema = z
  .string()
  .regex(/^[\w.-]{1,64}$/, 'must be 1 to 64 letters, digits, dot, dash or underscore');

/** A caller the API refuses (403) before any route runs: it is neither bound to a tenant nor an operator. */
export class CallerRefusedError extends Error {
  override readonly name: string = 'CallerRefusedError';
}

/** A JWT whose tenant claim is present but unusable: the caller is refused, never taken for an operator. */
export class MalformedTenantClaimError extends CallerRefusedError {
  override readonly name = 'MalformedTenantClaimError';
}

/**
 * The values of a list claim. API Gateway's JWT authorizer hands a list claim such as
 * `cognito:groups` to the function as one string, `"[a b]"`; a space-separated string (an OAuth
 * `scope`) and a real JSON list are read too. Group names hold no whitespace (Cognito forbids it).
 */
function claimValues(value: unknown): string[] {
  if (Array.isArray(value)) return value.filter((item): item is string => typeof item === 'string');
  if (typeof value !== 'string') return [];
  const text = value.trim();
  const inner = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  return inner.split(/\s+/).filter((item) => item.length > 0);
}

/** Whether a token's claims carry the operator grant. */
function grantsOperator(claims: Record<string, unknown>, grant: OperatorGrant | undefined): boolean {
  if (grant === undefined) return false;
  const value = claims[grant.claim];
  if (grant.groups === undefined) return value === true || value === 'true';
  const held = new Set(claimValues(value));
  return grant.groups.some((group) => held.has(group));
}

/**
 * The tenant a request is bound to, or undefined for an operator. A JWT's `tenant` (or
 * `custom:tenant`) claim binds the caller to that tenant; a JWT without one is an operator's only
 * when it carries the configured operator grant (a token with both is bound to its tenant: the
 * narrower right wins). A request without a JWT is IAM-signed (an
 * operator), unless the API is in JWT mode. Everything else throws CallerRefusedError: a claim that
 * is present but not a tenant name (a number, an empty string, a list, two different values in
 * `tenant` and `custom:tenant`) throws MalformedTenantClaimError. Failing open there would make the
 * caller an operator who sees every tenant's jobs.
 */
export function tenantOfEvent(
  event: APIGatewayProxyEventV2,
  auth: ApiAuth = { mode: 'iam' },
): string | undefined {
  const authorizer = (event.requestContext as { authorizer?: { jwt?: { claims?: unknown } } }).authorizer;
  if (authorizer?.jwt === undefined) {
    if (auth.mode === 'jwt')
      throw new CallerRefusedError('the request carries no token (the API takes JWTs only)');
    return undefined;
  }
  const claims = authorizer.jwt.claims as Record<string, unknown> | undefined;
  if (typeof claims !== 'object' || claims === null) {
    throw new MalformedTenantClaimError('the token carries no claims object');
  }
  const present = (['tenant', 'custom:tenant'] as const).filter((name) => claims[name] !== undefined);
  const values = new Set<string>();
  for (const name of present) {
    const parsed = tenantClaimSchema.safeParse(claims[name]);
    if (!parsed.success) {
      throw new MalformedTenantClaimError(
        `the token's ${name} claim ${parsed.error.issues[0]?.code === 'invalid_type' ? 'is not a string' : parsed.error.issues[0]?.message}`,
      );
    }
    values.add(parsed.data);
  }
  if (values.size > 1) throw new MalformedTenantClaimError('the token names two different tenants');
  const tenant = [...values][0];
  if (tenant !== undefined) return tenant;
  const grant = auth.mode === 'jwt' ? auth.operators : undefined;
  if (grantsOperator(claims, grant)) return undefined;
  throw new CallerRefusedError(
    grant === undefined
      ? 'the token carries no tenant claim, and no operator grant is configured (api.auth.operators)'
      : `the token carries no tenant claim and no operator grant (${grant.claim}${grant.groups ? ` containing ${grant.groups.join(' or ')}` : ' = true'})`,
  );
}

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
      const accepted = acceptHttpApiEvent(raw, context, logger);
      if ('refused' in accepted) return accepted.refused;
      const event = raw;
      const headers = lowerCaseHeaders(event.headers);
      let body: string | undefined = event.body;
      if (body !== undefined && event.isBase64Encoded) {
        try {
          // Fatal: a body that is not UTF-8 is refused, not read with replacement characters.
          body = new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(body, 'base64'));
        } catch {
          logger.info('api request', {
            method: event.requestContext.http.method,
            path: event.rawPath,
            status: 400,
          });
          return lambdaAnswer(refusal(400, 'invalid-body', 'the request body is not UTF-8 text'));
        }
      }
      const request = {
        method: event.requestContext.http.method,
        path: event.rawPath,
        query: event.queryStringParameters ?? {},
        headers,
        body,
      };
      let tenant: string | undefined;
      try {
        tenant = tenantOfEvent(event, options.auth);
      } catch (error) {
        if (!(error instanceof CallerRefusedError)) throw error;
        logger.warn('refused a caller bound to no tenant', {
          method: request.method,
          path: request.path,
          problem: error.message,
        });
        return lambdaAnswer(
          refusal(403, 'forbidden', `${error.message}: ask for a token with a valid tenant claim`),
        );
      }
      const response = await handleJobApiRequest(request, {
        deps: { ...options.deps, log: engineLogger(logger) },
        tenant,
        linkTtlSeconds: options.linkTtlSeconds,
        routes: options.routes,
        remainingMs: () => context.getRemainingTimeInMillis(),
      });
      // Method and path only: query strings and bodies may carry things that do not belong in logs.
      logger.info('api request', {
        method: request.method,
        path: request.path,
        status: response.status,
        jobId: jobIdOf(request.path, response),
      });
      return lambdaAnswer(response);
    },
  };
}
