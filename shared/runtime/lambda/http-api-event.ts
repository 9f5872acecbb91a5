/**
 * What the HTTP API's Lambda functions (the job API, the webhook route) read of an event and give
 * back: API Gateway's payload format 2.0 in, its structured result out.
 */
import type { APIGatewayProxyResultV2, Context } from 'aws-lambda';
import * as z from 'zod';
import { formatIssues } from '../../errors/zod-issues';
import { type HttpAnswer, refusal } from '../../http/api-error';
import type { Observability } from './observability';

/** What these functions read of an event: an HTTP API payload 2.0 (a REST API's 1.0 event is refused). */
export const httpApiEventSchema = z.object({
  rawPath: z.string().startsWith('/'),
  headers: z.record(z.string(), z.string().optional()).optional(),
  /** The request's cookies: payload 2.0 takes them out of the headers. */
  cookies: z.array(z.string()).optional(),
  queryStringParameters: z.record(z.string(), z.string().optional()).optional(),
  body: z.string().optional(),
  isBase64Encoded: z.boolean().optional(),
  requestContext: z.object({ requestId: z.string(), http: z.object({ method: z.string().min(1) }) }),
});

/** An answer as API Gateway's payload 2.0 takes it. */
export function lambdaAnswer(answer: HttpAnswer): APIGatewayProxyResultV2 & { statusCode: number } {
  // Payload 2.0 sets cookies from its own field, each one a `set-cookie` header of the answer.
  const { 'set-cookie': setCookie, ...headers } = answer.headers;
  return {
    statusCode: answer.status,
    headers,
    ...(setCookie ? { cookies: [setCookie] } : {}),
    body: answer.body,
    ...(answer.base64 ? { isBase64Encoded: true } : {}),
  };
}

/** Header names in lower case, as the HTTP handlers read them. */
export function lowerCaseHeaders(
  headers: Readonly<Record<string, string | undefined>> | undefined,
): Record<string, string | undefined> {
  const lower: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(headers ?? {})) lower[name.toLowerCase()] = value;
  return lower;
}

/**
 * An invocation's event read as an HTTP API payload 2.0, with the invocation's context and request
 * id on the logger; anything else is logged (the integration is misconfigured) and answered 500.
 */
export function acceptHttpApiEvent(
  raw: unknown,
  context: Context,
  logger: Observability['logger'],
):
  | { event: z.infer<typeof httpApiEventSchema> }
  | { refused: APIGatewayProxyResultV2 & { statusCode: number } } {
  logger.addContext(context);
  const parsed = httpApiEventSchema.safeParse(raw);
  if (!parsed.success) {
    logger.error('not an HTTP API (payload 2.0) event: check the integration', {
      problem: formatIssues(parsed.error),
    });
    return { refused: lambdaAnswer(refusal(500, 'internal', 'the API is misconfigured')) };
  }
  logger.setCorrelationId(parsed.data.requestContext.requestId);
  return { event: parsed.data };
}
