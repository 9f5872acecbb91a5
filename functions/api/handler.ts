/**
 * Lambda `api`, behind the HTTP API: create, read, answer, cancel and list jobs, and link to their
 * reports (shared/http/job-api.ts holds the routes, shared/runtime/lambda/api.ts the event mapping).
 * It builds the job side of the engine only (lambda/jobs-runtime.ts): no Open Platform client, no
 * key source, no Secrets Manager. The webhook route has a function of its own (functions/webhooks).
 */
import type { APIGatewayProxyEventV2, APIGatewayProxyResultV2, Context } from 'aws-lambda';
import { isTerminal } from '../../shared/engine/job-record';
import { type ApiHandler, createApiHandler } from '../../shared/runtime/lambda/api';
import { apiAuthFromEnv } from '../../shared/runtime/lambda/api-auth';
import { awsApiRoutes, awsBatchStore } from '../../shared/runtime/lambda/api-routes';
import { loadAutomationSettings } from '../../shared/runtime/lambda/automation';
import { awsFirstMessages } from '../../shared/runtime/lambda/first-messages';
import { createJobsRuntime } from '../../shared/runtime/lambda/jobs-runtime';
import type { SecondApproversCaller } from '../../shared/runtime/lambda/second-approvers';

// Once per instance: clients and caches live across invocations.
// A new job's first message holds its first call's token (engine/first-message.ts). The engine has
// the batch store: a batch's job retried, redriven or cancelled here leaves and rejoins its counts.
const runtime = createJobsRuntime({ firstMessages: awsFirstMessages, batches: awsBatchStore });

/**
 * The batches of jobs this invocation ended (a cancel): each is woken before the answer goes back,
 * and the ingest function counts the job and rewrites the batch's outputs, as the step worker's end
 * of a job has it do (lambda/batch-end-wakes.ts, a chunk loaded on the first such end).
 */
const endedBatches = new Set<string>();
runtime.onJobChange((job) => {
  if (job.batchId !== undefined && isTerminal(job.status)) endedBatches.add(job.batchId);
});
const wakeEndedBatches = async () => {
  if (endedBatches.size > 0)
    await (await import('../../shared/runtime/lambda/batch-end-wakes')).wakeEndedBatches(
      runtime,
      endedBatches,
    );
};

/** Calls the second approver after a first approval; undefined without a two-approver rule. */
let secondApprovers: SecondApproversCaller | undefined;

/** The handler, built on the first request once the stack's schedules and webhook sources are read. */
let api: Promise<ApiHandler> | undefined;
function apiHandler(): Promise<ApiHandler> {
  api ??= loadAutomationSettings(runtime).then(async ({ schedules, reviewers, webhooks }) => {
    // A rule's second approver holds from the moment a job waits, before the sweeper's first
    // notice. Its matching is a chunk of its own, loaded only where a rule asks for two.
    if (reviewers?.rules.some((rule) => rule.approvers > 1)) {
      runtime.deps.reviewApprovals = (await import('../../shared/reviewers/review-rules')).approvalsOf(
        reviewers,
      );
      // A first approval given here calls for the second approver before the answer goes back,
      // not at the sweeper's next run (a chunk of its own, as the sweeper's pass is).
      secondApprovers = (await import('../../shared/runtime/lambda/second-approvers')).secondApproversCaller(
        runtime,
      );
    }
    return createApiHandler({
      ...runtime,
      auth: apiAuthFromEnv(process.env),
      routes: awsApiRoutes(runtime, process.env, schedules, webhooks),
    });
  });
  api.catch(() => {
    api = undefined;
  });
  return api;
}

export function handler(event: APIGatewayProxyEventV2, context: Context): Promise<APIGatewayProxyResultV2> {
  return runtime.settle(
    apiHandler().then(async (built) => {
      const answer = await built.handle(event, context);
      await Promise.all([secondApprovers?.flush(), wakeEndedBatches()]);
      return answer;
    }),
  );
}
