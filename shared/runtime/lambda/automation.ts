/**
 * Webhooks and schedules on aws: the webhook route of the api function (raw body bytes, secrets in Secrets
 * Manager under OPFLOW_WEBHOOK_SECRET_PREFIX, mappings in OPFLOW_WEBHOOK_MAPPINGS as set by the
 * stack from opflow.config.json) and the target of the EventBridge Scheduler schedules (event
 * `{"schedule": <the schedule's config>, "slot": "<aws.scheduler.scheduled-time>"}`).
 */
import type { Context } from 'aws-lambda';
import * as z from 'zod';
import { awsClientConfig, createSecretsManagerClient } from '../../backends/aws/clients';
import { DynamoDbScheduleStateStore } from '../../backends/aws/dynamodb-schedule-state-store';
import { DynamoDbWebhookDeliveries } from '../../backends/aws/dynamodb-webhook-deliveries';
import { SecretsManagerWebhookSecrets } from '../../backends/aws/secrets-manager-webhook-secrets';
import { opflowConfigSchema, scheduleSchema } from '../../config/opflow-config';
import type { JobApiResponse } from '../../http/job-api';
import { createWebhookHandler, type WebhookRequest } from '../../http/webhooks';
import { handleScheduledSlot } from '../../schedules/target';
import type { JobSide } from './jobs-runtime';
import { engineLogger, type Observability } from './observability';

type Env = Readonly<Record<string, string | undefined>>;

/** The webhook and schedule variables the functions read beside loadAwsConfig's. */
export const automationVariables = [
  'OPFLOW_WEBHOOK_SECRET_PREFIX',
  'OPFLOW_WEBHOOK_MAPPINGS',
  'OPFLOW_CALLBACK_SECRET_PREFIX',
  'OPFLOW_CALLBACK_ALLOW_HOSTS',
  'OPFLOW_CALLBACK_QUEUE_URL',
  'OPFLOW_SCHEDULES',
] as const;

/** The webhook handler of the api function, or undefined when the stack set up no webhook secrets. */
export function awsWebhookHandler(
  pipeline: Pick<JobSide, 'deps' | 'aws' | 'config'>,
  env: Env = process.env,
): ((request: WebhookRequest) => Promise<JobApiResponse>) | undefined {
  const prefix = env.OPFLOW_WEBHOOK_SECRET_PREFIX?.trim();
  if (!prefix) return undefined;
  const parsed = opflowConfigSchema.safeParse({ webhooks: JSON.parse(env.OPFLOW_WEBHOOK_MAPPINGS || '{}') });
  if (!parsed.success) {
    throw new Error(`OPFLOW_WEBHOOK_MAPPINGS: ${z.prettifyError(parsed.error)}`);
  }
  return createWebhookHandler({
    deps: pipeline.deps,
    config: parsed.data,
    deliveries: new DynamoDbWebhookDeliveries({
      client: pipeline.aws.clients.documents,
      tableName: pipeline.config.tableName,
    }),
    // Its own Secrets Manager client: the api builds one only when the stack set up webhooks.
    secrets: new SecretsManagerWebhookSecrets(
      createSecretsManagerClient(awsClientConfig(pipeline.config)),
      prefix,
    ),
  });
}

const scheduledEventSchema = z.lazy(() =>
  z.object({ schedule: scheduleSchema, slot: z.iso.datetime({ offset: true }) }),
);

export function createScheduleTargetHandler(options: {
  pipeline: Pick<JobSide, 'deps' | 'aws' | 'config'>;
  observability: Observability;
}) {
  const { pipeline, observability } = options;
  const states = new DynamoDbScheduleStateStore(pipeline.aws.clients.documents, pipeline.config.tableName);
  return {
    async handle(event: unknown, context: Context) {
      observability.logger.addContext(context);
      const parsed = scheduledEventSchema.safeParse(event);
      if (!parsed.success) {
        // A malformed event would fail the same way on every retry: say why and let it go to the DLQ.
        observability.logger.error('not a schedule event', { problem: z.prettifyError(parsed.error) });
        throw new Error('not a schedule event: {schedule, slot} expected');
      }
      const deps = { ...pipeline.deps, log: engineLogger(observability.logger) };
      const outcomes = await handleScheduledSlot(
        deps,
        states,
        parsed.data.schedule,
        Date.parse(parsed.data.slot),
      );
      observability.logger.info('schedule slot', {
        schedule: parsed.data.schedule.name,
        slot: parsed.data.slot,
        outcomes,
      });
      return { outcomes };
    },
  };
}
