/**
 * The routes of the Lambda api beside the job API's own, the same as `opflow serve`'s: a job's
 * timeline (its `HIST#` history), batches (`BATCH#` items), schedules (their `SCHED#` state, the
 * schedules themselves from the stack's automation config item, or OPFLOW_SCHEDULES in a harness) with
 * trigger, pause and resume, and the record of webhook deliveries (`HOOKLOG` items).
 */
import { DynamoDbBatchStore } from '../../backends/aws/dynamodb-batch-store';
import { DynamoDbScheduleStateStore } from '../../backends/aws/dynamodb-schedule-state-store';
import { DynamoDbWebhookDeliveries } from '../../backends/aws/dynamodb-webhook-deliveries';
import { opflowConfigSchema, type Schedule } from '../../config/opflow-config';
import { batchRoutes } from '../../dashboard/batch-routes';
import { deliveryRoutes } from '../../dashboard/delivery-routes';
import { scheduleRoutes } from '../../dashboard/schedule-routes';
import { timelineRoutes } from '../../dashboard/timeline-route';
import { errorMessage } from '../../errors/error-message';
import { formatIssues } from '../../errors/zod-issues';
import type { ApiRoute } from '../../http/job-api';
import { awsEventsRoutes } from './events-route';
import type { JobSide } from './jobs-runtime';

type Env = Readonly<Record<string, string | undefined>>;

/** The schedules of OPFLOW_SCHEDULES (a JSON list, as in opflow.config.json); none when unset. */
export function schedulesFromEnv(env: Env): Schedule[] {
  const raw = env.OPFLOW_SCHEDULES?.trim();
  if (!raw) return [];
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (error) {
    throw new Error(`OPFLOW_SCHEDULES is not JSON: ${errorMessage(error)}`);
  }
  const parsed = opflowConfigSchema.safeParse({ schedules: value });
  if (!parsed.success) throw new Error(`OPFLOW_SCHEDULES: ${formatIssues(parsed.error)}`);
  return parsed.data.schedules;
}

/** The record of webhook deliveries on the job table. */
export function awsWebhookDeliveries(pipeline: Pick<JobSide, 'aws' | 'config'>): DynamoDbWebhookDeliveries {
  return new DynamoDbWebhookDeliveries({
    client: pipeline.aws.clients.documents,
    tableName: pipeline.config.tableName,
  });
}

/** `schedules`: from the stack's automation config item (automation.ts); default OPFLOW_SCHEDULES. */
export function awsApiRoutes(
  pipeline: JobSide,
  env: Env = process.env,
  schedules: Schedule[] = schedulesFromEnv(env),
): ApiRoute[] {
  const { deps } = pipeline;
  const documents = pipeline.aws.clients.documents;
  const { tableName } = pipeline.config;
  return [
    ...timelineRoutes({ deps, history: pipeline.history }),
    ...batchRoutes({ deps, batches: new DynamoDbBatchStore({ client: documents, tableName }) }),
    ...scheduleRoutes({
      deps,
      states: new DynamoDbScheduleStateStore(
        documents,
        tableName,
        schedules.map((schedule) => schedule.name),
      ),
      schedules,
    }),
    ...deliveryRoutes({ deliveries: awsWebhookDeliveries(pipeline) }),
    ...awsEventsRoutes(pipeline),
  ];
}
