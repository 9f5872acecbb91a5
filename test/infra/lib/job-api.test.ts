/**
 * The HTTP API's routes against the api function's router: every route API Gateway forwards is one
 * shared/http/job-api.ts answers with the routes the api function adds (lambda/api-routes.ts: the
 * timeline, batches, schedules, webhook deliveries), not "no route", not "method not allowed", so
 * no request that passes authorization dies in the function for want of a handler.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { JOB_ROUTES } from '../../../infra/lib/job-api';
import type { EngineDeps } from '../../../shared/engine/deps';
import { handleJobApiRequest } from '../../../shared/http/job-api';
import { awsApiRoutes, awsBatchStore } from '../../../shared/runtime/lambda/api-routes';
import type { JobSideWithBatches } from '../../../shared/runtime/lambda/jobs-runtime';

/** Engine dependencies with an empty job store: enough for the router to reach a route. */
const emptyDeps = {
  store: {
    get: async () => undefined,
    list: async () => ({ jobs: [] }),
    findByIdempotencyKey: async () => undefined,
  },
  workflows: new Map(),
  clock: { now: () => Date.UTC(2030, 0, 1) },
} as unknown as EngineDeps;

/**
 * The api function's extra routes over an empty table (every read finds nothing): a real document
 * client (the SDK's paginators take no other) whose every command answers no items.
 */
const empty = DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'us-east-1' }));
empty.send = (async () => ({ Items: [] })) as never;
const routes = awsApiRoutes(
  {
    // The api's engine has its batch store (createJobsRuntime({ batches })): the routes read it.
    deps: { ...emptyDeps, batches: awsBatchStore({ client: empty, tableName: 'jobs' }) },
    history: { record() {}, list: async () => [] },
    aws: { clients: { documents: empty } },
    config: { tableName: 'jobs' },
  } as unknown as JobSideWithBatches,
  {
    OPFLOW_SCHEDULES: JSON.stringify([
      { name: 'weekly', cron: '0 6 * * 1', workflow: 'patent-count', input: { query: 'x' } },
    ]),
  },
);

describe('the job API routes', () => {
  it.each(JOB_ROUTES.map((route) => [`${route.method} ${route.path}`, route] as const))(
    '%s reaches a handler of the api function',
    async (_name, route) => {
      const answer = await handleJobApiRequest(
        {
          method: route.method,
          path: route.path
            .replace('{id}', '01ARZ3NDEKTSV4RRFFQ69G5FAV')
            .replace('{name}', 'weekly')
            .replace('{file}', 'summary.csv'),
          headers: { 'content-type': 'application/json' },
          body: route.method === 'POST' ? '{}' : undefined,
        },
        { deps: emptyDeps, routes },
      );
      const error = (JSON.parse(answer.body) as { error?: { message?: string } }).error;
      expect(answer.status).not.toBe(405);
      expect(error?.message ?? '').not.toMatch(/^no route /);
      expect(answer.status).toBeLessThan(500);
    },
  );

  it('would notice a route the function does not answer', async () => {
    const answer = await handleJobApiRequest({ method: 'GET', path: '/jobs/x/unknown' }, { deps: emptyDeps });
    expect(answer.status).toBe(404);
    expect((JSON.parse(answer.body) as { error: { message: string } }).error.message).toMatch(/^no route /);
  });
});
