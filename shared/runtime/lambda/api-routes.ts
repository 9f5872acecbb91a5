/**
 * The routes of the Lambda api beside the job API's own, the same as `opflow serve`'s: a job's
 * timeline (its `HIST#` history), batches (`BATCH#` items), "run again" and the manifest upload
 * (upload-routes.ts), schedules (their `SCHED#` state, the
 * schedules themselves from the stack's automation config item, or OPFLOW_SCHEDULES in a harness) with
 * trigger, pause and resume, the record of webhook deliveries (`HOOKLOG` items), and the webhook
 * sources (from the same config item) with their state.
 */
import { DynamoDbBatchStore } from '../../backends/aws/dynamodb-batch-store';
import { DynamoDbScheduleStateStore } from '../../backends/aws/dynamodb-schedule-state-store';
import { DynamoDbWebhookDeliveries } from '../../backends/aws/dynamodb-webhook-deliveries';
import type { Schedule, WebhookSource } from '../../config/opflow-config';
import { batchRoutes } from '../../dashboard/batch-routes';
import { deliveryRoutes } from '../../dashboard/delivery-routes';
import { scheduleRoutes } from '../../dashboard/schedule-routes';
import { timelineRoutes } from '../../dashboard/timeline-route';
import { webhookSourceRoutes } from '../../dashboard/webhook-source-routes';
import type { ApiRoute } from '../../http/job-api';
import { awsEventsRoutes } from './events-route';
import type { BatchTable, JobSide, JobSideWithBatches } from './jobs-runtime';
import { schedulesFromEnv } from './schedules-env';
import { awsUploadRoutes } from './upload-routes';

type Env = Readonly<Record<string, string | undefined>>;

/** The record of webhook deliveries on the job table. */
export function awsWebhookDeliveries(pipeline: Pick<JobSide, 'aws' | 'config'>): DynamoDbWebhookDeliveries {
  return new DynamoDbWebhookDeliveries({
    client: pipeline.aws.clients.documents,
    tableName: pipeline.config.tableName,
  });
}

/**
 * The api's batch store, for `createJobsRuntime({ batches })`: built with the engine's dependencies,
 * so the job routes' retry, redrive and cancel of a batch's job leave and rejoin its counts
 * (`rejoinBatch`) as `opflow retry` does, and the batch routes read the same store.
 */
export function awsBatchStore(table: BatchTable): DynamoDbBatchStore {
  return new DynamoDbBatchStore(table);
}

/**
 * The routes read the engine's own batch store (`pipeline.deps.batches`); they change nothing of
 * the dependencies they are given. `schedules` and `webhooks`: from the stack's automation config item (automation.ts); default
 * OPFLOW_SCHEDULES and no webhook sources.
 */
export function awsApiRoutes(
  pipeline: JobSideWithBatches,
  env: Env = process.env,
  schedules: Schedule[] = schedulesFromEnv(env),
  webhooks: Readonly<Record<string, WebhookSource>> = {},
): ApiRoute[] {
  const { deps } = pipeline;
  const { batches } = deps;
  const documents = pipeline.aws.clients.documents;
  const { tableName } = pipeline.config;
  const deliveries = awsWebhookDeliveries(pipeline);
  return [
    ...timelineRoutes({ deps, history: pipeline.history }),
    ...batchRoutes({ deps, batches }),
    ...awsUploadRoutes(pipeline, batches),
    ...scheduleRoutes({
      deps,
      states: new DynamoDbScheduleStateStore(
        documents,
        tableName,
        schedules.map((schedule) => schedule.name),
      ),
      schedules,
    }),
    ...deliveryRoutes({ deliveries }),
    ...webhookSourceRoutes({ deps, webhooks, deliveries }),
    ...awsEventsRoutes(pipeline),
  ];
}
