/**
 * Lambda `webhooks`, behind the HTTP API's unauthenticated routes `POST /webhooks/{source}` and
 * `GET`/`POST /review/{token}` (the reviewers' confirmation page): checks a
 * delivery's Standard Webhooks signature and starts its job (shared/http/webhooks.ts, the event
 * mapping in shared/runtime/lambda/webhook-route.ts). A function of its own, with its own concurrency
 * and the route's throttle, so badly signed floods never take the job API's. It builds the job side
 * of the engine only (lambda/jobs-runtime.ts) and reads the webhook secrets from Secrets Manager.
 */
import type { APIGatewayProxyEventV2, APIGatewayProxyResultV2, Context } from 'aws-lambda';
import { loadAutomationSettings } from '../../shared/runtime/lambda/automation';
import { createJobsRuntime } from '../../shared/runtime/lambda/jobs-runtime';
import { awsReviewPage } from '../../shared/runtime/lambda/reviewers';
import type { SecondApproversCaller } from '../../shared/runtime/lambda/second-approvers';
import { awsWebhookHandler } from '../../shared/runtime/lambda/webhook-handler';
import {
  createWebhookRouteHandler,
  type WebhookRouteHandler,
} from '../../shared/runtime/lambda/webhook-route';

// Once per instance: clients and caches live across invocations.
const runtime = createJobsRuntime();

/** Calls the second approver after a first approval through a link; undefined without a two-approver rule. */
let secondApprovers: SecondApproversCaller | undefined;

/** The handler, built on the first delivery once the stack's webhook mappings are read. */
let route: Promise<WebhookRouteHandler> | undefined;
function routeHandler(): Promise<WebhookRouteHandler> {
  route ??= loadAutomationSettings(runtime).then(async ({ webhooks, reviewers }) => {
    // A first approval given on the confirmation page calls for the second approver before the page
    // answers, not at the sweeper's next run. The pass claims the round on the job (a conditional
    // write), so of two deliveries of one click, or this and the sweeper, one sends. A chunk of its own.
    if (reviewers?.rules.some((rule) => rule.approvers > 1))
      secondApprovers = (await import('../../shared/runtime/lambda/second-approvers')).secondApproversCaller(
        runtime,
      );
    return createWebhookRouteHandler({
      observability: runtime.observability,
      webhooks: awsWebhookHandler(runtime, webhooks),
      review: awsReviewPage(runtime),
    });
  });
  route.catch(() => {
    route = undefined;
  });
  return route;
}

export function handler(event: APIGatewayProxyEventV2, context: Context): Promise<APIGatewayProxyResultV2> {
  return runtime.settle(
    routeHandler().then(async (built) => {
      const answer = await built.handle(event, context);
      await secondApprovers?.flush();
      return answer;
    }),
  );
}
