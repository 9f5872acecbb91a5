/**
 * The webhook route's own function behind the HTTP API (`POST /webhooks/{source}`, no authorizer:
 * the Standard Webhooks signature authenticates), and the reviewers' confirmation page
 * (`GET`/`POST /review/{token}`, no authorizer: the signed token authenticates). It answers nothing
 * else, so a flood of badly signed requests takes this function's concurrency and the routes'
 * throttles, never the job API's.
 */
import type { APIGatewayProxyEventV2, APIGatewayProxyResultV2, Context } from 'aws-lambda';
import { type HttpAnswer, refusal } from '../../http/api-error';
import type { JobApiResponse } from '../../http/job-api';
import { type WebhookRequest, webhookPathPattern } from '../../http/webhooks';
import { type ReviewRequest, reviewPathPattern } from '../../reviewers/confirmation-page';
import { acceptHttpApiEvent, lambdaAnswer, lowerCaseHeaders } from './http-api-event';
import type { Observability } from './observability';

export interface WebhookRouteOptions {
  observability: Observability;
  /** The answer to one delivery; undefined when the stack set up no webhook secrets (every source is 404). */
  webhooks: ((request: WebhookRequest) => Promise<JobApiResponse>) | undefined;
  /** The confirmation page; undefined when the stack set up no reviewers (404). */
  review?: ((request: ReviewRequest) => Promise<HttpAnswer>) | undefined;
}

export interface WebhookRouteHandler {
  handle(event: APIGatewayProxyEventV2, context: Context): Promise<APIGatewayProxyResultV2>;
}

/** The largest confirmation form read (the options and a name), as on `opflow serve`. */
const maxReviewFormBytes = 64 * 1024;

/** The source a path names, decoded; '' when its URL encoding is not valid (no such source). */
function sourceOf(encoded: string): string {
  try {
    return decodeURIComponent(encoded);
  } catch {
    return '';
  }
}

export function createWebhookRouteHandler(options: WebhookRouteOptions): WebhookRouteHandler {
  const { logger } = options.observability;
  return {
    async handle(raw, context) {
      const accepted = acceptHttpApiEvent(raw, context, logger);
      if ('refused' in accepted) return accepted.refused;
      const { event } = accepted;
      const review = reviewPathPattern.exec(event.rawPath);
      if (review) {
        const body =
          event.body === undefined
            ? undefined
            : Buffer.from(event.body, event.isBase64Encoded ? 'base64' : 'utf8');
        const answer = !options.review
          ? refusal(404, 'not-found', 'no reviewers are set up')
          : (body?.byteLength ?? 0) > maxReviewFormBytes
            ? refusal(413, 'too-large', 'the form is too large')
            : await options.review({
                method: event.requestContext.http.method.toUpperCase(),
                token: review[1]!,
                body: body?.toString('utf8'),
                // Payload 2.0 carries the request's cookies apart from its headers.
                cookie: event.cookies?.join('; ') ?? lowerCaseHeaders(event.headers).cookie,
                // API Gateway serves only https.
                secure: true,
              });
        // The token is the page's credential: never logged.
        logger.info('review page', { path: '/review/…', status: answer.status });
        return lambdaAnswer(answer);
      }
      const hook = webhookPathPattern.exec(event.rawPath);
      const method = event.requestContext.http.method.toUpperCase();
      let answer: JobApiResponse;
      if (!hook || !options.webhooks) answer = refusal(404, 'not-found', 'no such webhook source');
      else if (method !== 'POST')
        answer = refusal(405, 'method-not-allowed', `${method} is not supported; use POST`, {
          allow: 'POST',
        });
      else {
        // The signature covers the bytes as sent, so they are not decoded as text here.
        const body = Buffer.from(event.body ?? '', event.isBase64Encoded ? 'base64' : 'utf8');
        answer = await options.webhooks({
          source: sourceOf(hook[1]!),
          headers: lowerCaseHeaders(event.headers),
          body,
        });
      }
      // Path and status only: headers and bodies carry signatures and payloads.
      logger.info('webhook', { path: event.rawPath, status: answer.status });
      return lambdaAnswer(answer);
    },
  };
}
