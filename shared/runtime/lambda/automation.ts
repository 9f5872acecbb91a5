/**
 * Webhooks and schedules on aws: the webhook route (raw body bytes, secrets in Secrets Manager under
 * OPFLOW_WEBHOOK_SECRET_PREFIX, mappings in the automation config item the stack writes from
 * opflow.config.json) and the target of the EventBridge Scheduler schedules (event
 * `{"schedule": <the schedule's config>, "slot": "<aws.scheduler.scheduled-time>"}`).
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import type { Context } from 'aws-lambda';
import * as z from 'zod';
import { awsClientConfig, createSecretsManagerClient } from '../../backends/aws/clients';
import { DynamoDbScheduleStateStore } from '../../backends/aws/dynamodb-schedule-state-store';
import { DynamoDbWebhookDeliveries } from '../../backends/aws/dynamodb-webhook-deliveries';
import { SecretsManagerWebhookSecrets } from '../../backends/aws/secrets-manager-webhook-secrets';
import { type OpflowConfig, opflowConfigSchema, scheduleSchema } from '../../config/opflow-config';
import { formatIssues } from '../../errors/zod-issues';
import type { JobApiResponse } from '../../http/job-api';
import { createWebhookHandler, type WebhookRequest } from '../../http/webhooks';
import { handleScheduledSlot } from '../../schedules/target';
import { AUTOMATION_CONFIG_VARIABLE, CONFIG_ITEM_PARTITION } from '../aws/config';
import type { JobSide } from './jobs-runtime';
import { engineLogger, type Observability } from './observability';
import { schedulesFromEnv } from './schedules-env';

type Env = Readonly<Record<string, string | undefined>>;

/** The webhook and schedule variables the functions read beside loadAwsConfig's. */
export const automationVariables = [
  'OPFLOW_WEBHOOK_SECRET_PREFIX',
  AUTOMATION_CONFIG_VARIABLE,
  'OPFLOW_WEBHOOK_MAPPINGS',
  'OPFLOW_CALLBACK_SECRET_PREFIX',
  'OPFLOW_CALLBACK_ALLOW_HOSTS',
  'OPFLOW_SCHEDULES',
  'OPFLOW_REVIEWERS',
] as const;

/** The webhook mappings, schedules and reviewers a function serves. */
export type AutomationSettings = Pick<OpflowConfig, 'webhooks' | 'schedules' | 'reviewers'>;

/**
 * A section of the config file given as JSON in `variable` (a harness's way to set the webhook
 * mappings or the reviewers without the config item), validated as the file's; undefined when unset.
 */
function sectionFromEnv<K extends 'webhooks' | 'reviewers'>(
  env: Env,
  variable: string,
  section: K,
): OpflowConfig[K] | undefined {
  const raw = env[variable]?.trim();
  if (!raw) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (error) {
    throw new Error(`${variable} is not JSON: ${(error as Error).message}`);
  }
  const parsed = opflowConfigSchema.safeParse({ [section]: value });
  if (!parsed.success) throw new Error(`${variable}: ${formatIssues(parsed.error)}`);
  return parsed.data[section];
}

const configItemSchema = z.object({ body: z.string() });

/** The settings read by this container, by the item they came from (one per container in practice). */
const cachedSettings = new Map<string, Promise<AutomationSettings>>();

/**
 * The webhook mappings, schedules and reviewers of this stack: the config item OPFLOW_AUTOMATION_CONFIG names
 * (`PK = CONFIG`, written by the stack at deploy), read once per container and kept (a changed config
 * is a new item and a new variable, so a new container). Without the variable (a harness, aws-local),
 * OPFLOW_WEBHOOK_MAPPINGS, OPFLOW_SCHEDULES and OPFLOW_REVIEWERS are read instead. A missing or malformed item throws
 * naming the item, and is read again at the next call.
 */
export function loadAutomationSettings(
  pipeline: Pick<JobSide, 'aws' | 'config'>,
  env: Env = process.env,
): Promise<AutomationSettings> {
  const sortKey = env[AUTOMATION_CONFIG_VARIABLE]?.trim();
  if (!sortKey)
    return Promise.resolve({
      webhooks: sectionFromEnv(env, 'OPFLOW_WEBHOOK_MAPPINGS', 'webhooks') ?? {},
      schedules: schedulesFromEnv(env),
      reviewers: sectionFromEnv(env, 'OPFLOW_REVIEWERS', 'reviewers'),
    });
  const { tableName } = pipeline.config;
  const cacheKey = `${tableName}/${sortKey}`;
  const cached = cachedSettings.get(cacheKey);
  if (cached) return cached;
  const where = `the automation config item (${CONFIG_ITEM_PARTITION}, ${sortKey}) of table ${tableName}`;
  const loading = (async () => {
    const { Item } = await pipeline.aws.clients.documents.send(
      new GetCommand({
        TableName: tableName,
        Key: { PK: CONFIG_ITEM_PARTITION, SK: sortKey },
        // Written by the deploy moments before this container started.
        ConsistentRead: true,
      }),
    );
    const item = configItemSchema.safeParse(Item);
    if (!item.success) throw new Error(`${where} is missing: deploy the stack again to write it`);
    let value: unknown;
    try {
      value = JSON.parse(item.data.body);
    } catch (error) {
      throw new Error(`${where} is not JSON: ${(error as Error).message}`);
    }
    const parsed = opflowConfigSchema.safeParse(value);
    if (!parsed.success) throw new Error(`${where}: ${formatIssues(parsed.error)}`);
    return {
      webhooks: parsed.data.webhooks,
      schedules: parsed.data.schedules,
      reviewers: parsed.data.reviewers,
    };
  })();
  cachedSettings.set(cacheKey, loading);
  loading.catch(() => cachedSettings.delete(cacheKey));
  return loading;
}

/**
 * The webhook handler for these mappings, or undefined when the stack set up no webhook secrets.
 * As it is built (the function's first request) it reads the secret of every mapped source and logs,
 * naming the source and the secret (never its value), each one missing or malformed: said when the
 * function starts, not found by a delivery's 500. Such a source's deliveries are refused as
 * misconfigured until it is fixed.
 */
export function awsWebhookHandler(
  pipeline: Pick<JobSide, 'deps' | 'aws' | 'config'> & { observability?: Observability | undefined },
  webhooks: OpflowConfig['webhooks'],
  env: Env = process.env,
): ((request: WebhookRequest) => Promise<JobApiResponse>) | undefined {
  const prefix = env.OPFLOW_WEBHOOK_SECRET_PREFIX?.trim();
  if (!prefix) return undefined;
  const parsed = opflowConfigSchema.parse({ webhooks });
  // Its own Secrets Manager client: built only where the stack set up webhooks.
  const secrets = new SecretsManagerWebhookSecrets(
    createSecretsManagerClient(awsClientConfig(pipeline.config)),
    prefix,
  );
  const log = pipeline.observability?.logger;
  // In the background: no request waits for it, and the reads warm the secrets' cache.
  void secrets.problems(Object.keys(parsed.webhooks)).then(
    (problems) => {
      for (const problem of problems)
        log?.error('webhook secret not usable (read at cold start)', { problem });
    },
    (error: unknown) =>
      log?.warn('webhook secrets not checked at cold start', {
        error: error instanceof Error ? error.message : String(error),
      }),
  );
  return createWebhookHandler({
    deps: pipeline.deps,
    config: parsed,
    deliveries: new DynamoDbWebhookDeliveries({
      client: pipeline.aws.clients.documents,
      tableName: pipeline.config.tableName,
    }),
    secrets,
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
        observability.logger.error('not a schedule event', { problem: formatIssues(parsed.error) });
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
