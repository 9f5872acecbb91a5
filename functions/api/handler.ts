/**
 * Lambda `api`, behind the HTTP API: create, read, answer, cancel and list jobs, and link to their
 * reports (shared/http/job-api.ts holds the routes, shared/runtime/lambda/api.ts the event mapping).
 */
import type { APIGatewayProxyEventV2, APIGatewayProxyResultV2, Context } from 'aws-lambda';
import { createApiHandler } from '../../shared/runtime/lambda/api';
import { awsApiRoutes } from '../../shared/runtime/lambda/api-routes';
import { awsWebhookHandler } from '../../shared/runtime/lambda/automation';
import { createLambdaRuntime } from '../../shared/runtime/lambda/runtime';

// Once per instance: clients and caches live across invocations.
const runtime = createLambdaRuntime();
const api = createApiHandler({
  ...runtime,
  webhooks: awsWebhookHandler(runtime.pipeline),
  routes: awsApiRoutes(runtime.pipeline),
});

export function handler(event: APIGatewayProxyEventV2, context: Context): Promise<APIGatewayProxyResultV2> {
  return runtime.settle(api.handle(event, context));
}
