/**
 * Webhooks, schedules and reviewers on aws: their settings (mappings, schedules and rules in the
 * automation config item the stack writes from opflow.config.json) and the target of the
 * EventBridge Scheduler schedules (event `{"schedule": <the schedule's config>, "slot":
 * "<aws.scheduler.scheduled-time>"}`). The webhook route's handler, which reads its secrets from
 * Secrets Manager, is in webhook-handler.ts: the api imports this file, and would otherwise hold the
 * Secrets Manager SDK at start (docs/concepts/lambda-bundles.md, "Code splitting").
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import type { Context } from 'aws-lambda';
import * as z from 'zod';
import { DynamoDbScheduleStateStore } from '../../backends/aws/dynamodb-schedule-state-store';
import { type OpflowConfig, opflowConfigSchema, scheduleSchema } from '../../config/opflow-config';
import { formatIssues } from '../../errors/zod-issues';
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
