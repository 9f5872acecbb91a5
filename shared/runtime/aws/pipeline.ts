/**
 * The aws runtime: the engine wired to the AWS backend of a deployed stack (or of local
 * emulators), from the stack's outputs in the environment. The Lambda functions build it once per
 * instance; `opflow --backend aws` builds it to submit, read, answer and cancel jobs, while the
 * work itself happens in Lambda.
 *
 * Environment (validated up front; every problem is named by its variable):
 * - `OPFLOW_TABLE_NAME`, `OPFLOW_QUEUE_URL`, `OPFLOW_BUCKET_NAME`, `OPFLOW_API_KEY_SECRET_PREFIX`:
 *   the stack's outputs (TableName, QueueUrl, BucketName, ApiKeySecretPrefix). Or, for a saved
 *   profile of a stack, `OPFLOW_STACK_OUTPUTS`: the JSON file `cdk deploy --outputs-file` writes
 *   (`OPFLOW_STACK_NAME` picks the stack when it holds several); variables set win over it.
 * - `AWS_REGION` (or `AWS_DEFAULT_REGION`, else the region of the queue URL); credentials from the
 *   SDK's usual chain (`AWS_PROFILE`, ...).
 * - `AWS_ENDPOINT_URL`, or per service `AWS_ENDPOINT_URL_DYNAMODB`, `_SQS`, `_S3`,
 *   `_SECRETS_MANAGER`: emulators (S3 then goes path-style; without credentials in the
 *   environment, emulator credentials `test`/`test` are used).
 * - `OPFLOW_BASE_URL` (default the real platform), `OPFLOW_QPS` (default 5 calls per second per key),
 *   `OPFLOW_REPORT_KMS_KEY_ID` (reports encrypted with SSE-KMS instead of SSE-S3),
 *   `OPFLOW_KEY_CACHE_SECONDS` (default 300), `OPFLOW_ADMISSION` (`on`, the default, or `off`: see
 *   AwsRuntimeConfig.admission).
 */
import { readFileSync } from 'node:fs';
import * as z from 'zod';
import {
  type AwsBackend,
  type AwsBackendConfig,
  type AwsClientConfig,
  createAwsBackend,
} from '../../backends/aws';
import { DynamoDbCallbackOutbox } from '../../backends/aws/dynamodb-callback-outbox';
import { DynamoDbJobHistory } from '../../backends/aws/dynamodb-job-history';
import { callbackPolicyFromEnv } from '../../callbacks/ssrf-guard';
import type { EngineDeps, EngineMetrics } from '../../engine/deps';
import type { Job } from '../../engine/job-record';
import type { Clock } from '../../engine/ports';
import type { WorkflowRegistry } from '../../engine/workflow';
import type { Logger } from '../../log/logger';
import { createOpenPlatformClient } from '../../openplatform/client';
import { redactUrl } from '../../openplatform/redact';
import type { CallUsage, OpenPlatformClient } from '../../openplatform/types';
import { writeJobReport } from '../../reports/write-job-report';
import { ConfigError } from '../config-error';
import { createJobChangeHub } from '../job-change-hub';
import type { Pipeline } from '../pipeline';

/** Where each setting of the aws runtime comes from. */
export const awsConfigSources = {
  tableName: 'OPFLOW_TABLE_NAME',
  queueUrl: 'OPFLOW_QUEUE_URL',
  bucketName: 'OPFLOW_BUCKET_NAME',
  apiKeySecretPrefix: 'OPFLOW_API_KEY_SECRET_PREFIX',
  region: 'AWS_REGION',
  endpointUrl: 'AWS_ENDPOINT_URL',
  baseUrl: 'OPFLOW_BASE_URL',
  qps: 'OPFLOW_QPS',
  reportKmsKeyId: 'OPFLOW_REPORT_KMS_KEY_ID',
  keyCacheSeconds: 'OPFLOW_KEY_CACHE_SECONDS',
  admission: 'OPFLOW_ADMISSION',
} as const;

const serviceEndpointVariables = {
  dynamodb: 'AWS_ENDPOINT_URL_DYNAMODB',
  sqs: 'AWS_ENDPOINT_URL_SQS',
  s3: 'AWS_ENDPOINT_URL_S3',
  secretsManager: 'AWS_ENDPOINT_URL_SECRETS_MANAGER',
} as const;

const required = z.string({ error: 'is not set' }).trim().min(1, 'is not set');
const url = z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' });
const fieldSchemas = {
  tableName: required,
  queueUrl: required.pipe(url),
  bucketName: required,
  apiKeySecretPrefix: required.regex(/^[A-Za-z0-9/_+=.@-]+$/, 'may only hold letters, digits and /_+=.@-'),
  region: required,
  endpointUrl: url.optional(),
  baseUrl: url.optional(),
  qps: z.coerce.number({ error: 'must be a number' }).positive('must be more than 0').max(10_000).default(5),
  reportKmsKeyId: z.string().trim().min(1).optional(),
  keyCacheSeconds: z.coerce.number({ error: 'must be a number' }).int().min(0).max(86_400).default(300),
  admission: z.enum(['on', 'off'], { error: 'must be on or off' }).default('on'),
};

/** The aws runtime's settings: the backend's, and the Open Platform to call. */
export interface AwsRuntimeConfig extends AwsBackendConfig {
  /** The Open Platform; absent means the real platform. */
  baseUrl?: string | undefined;
  /**
   * Admission of jobs waiting for a saturated key's tokens (issue 10; `OPFLOW_ADMISSION`, default
   * on): parked without a message and released in order by the step workers. `off`: sent back to
   * ask again (the behaviour before; kept for the cost bench's side-by-side run).
   */
  admission?: 'on' | 'off' | undefined;
}

type Env = Readonly<Record<string, string | undefined>>;

/** The stack outputs each setting can be read from, by their CloudFormation names. */
const stackOutputNames = {
  tableName: 'TableName',
  queueUrl: 'QueueUrl',
  bucketName: 'BucketName',
  apiKeySecretPrefix: 'ApiKeySecretPrefix',
} as const;
type StackOutputs = Partial<Record<keyof typeof stackOutputNames, string>> & { file?: string };

/** What `cdk deploy --outputs-file` writes: `{"<stack name>": {"<output>": "<value>", ...}, ...}`. */
const outputsFileSchema = z.record(z.string(), z.record(z.string(), z.unknown()));

/** The outputs of one stack from the file `OPFLOW_STACK_OUTPUTS` names (nothing when unset). */
function readStackOutputs(env: Env, problems: string[]): StackOutputs {
  const file = env.OPFLOW_STACK_OUTPUTS?.trim();
  if (!file) return {};
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    problems.push(`OPFLOW_STACK_OUTPUTS: cannot read ${file} as JSON (${(error as Error).message})`);
    return {};
  }
  const parsed = outputsFileSchema.safeParse(value);
  if (!parsed.success) {
    problems.push(`OPFLOW_STACK_OUTPUTS: ${file} is not what cdk deploy --outputs-file writes`);
    return {};
  }
  const stacks = Object.keys(parsed.data);
  const wanted = env.OPFLOW_STACK_NAME?.trim() || undefined;
  const name = wanted ?? (stacks.length === 1 ? stacks[0] : undefined);
  const outputs = name === undefined ? undefined : parsed.data[name];
  if (!outputs) {
    problems.push(
      wanted
        ? `OPFLOW_STACK_NAME: ${file} has no stack "${wanted}" (it has ${stacks.join(', ') || 'none'})`
        : `OPFLOW_STACK_NAME: is not set, and ${file} has ${stacks.length} stacks (${stacks.join(', ') || 'none'})`,
    );
    return { file };
  }
  const found: StackOutputs = { file };
  for (const [key, output] of Object.entries(stackOutputNames) as [keyof typeof stackOutputNames, string][]) {
    const text = outputs[output];
    if (typeof text === 'string') found[key] = text;
  }
  return found;
}

/** `https://sqs.<region>.amazonaws.com/<account>/<name>` (or `.amazonaws.com.cn`): its region. */
function regionOfQueueUrl(queueUrl: string | undefined): string | undefined {
  return queueUrl?.match(/^https:\/\/sqs\.([a-z]{2}(?:-[a-z]+)+-\d+)\.amazonaws\.com(?:\.cn)?\//)?.[1];
}

/** Reads the aws runtime's settings from the environment; throws one ConfigError naming every problem. */
export function loadAwsConfig(env: Env = process.env): AwsRuntimeConfig {
  return loadSettings(env, Object.keys(fieldSchemas) as (keyof typeof fieldSchemas)[], [
    'dynamodb',
    'sqs',
    's3',
    'secretsManager',
  ]) as unknown as AwsRuntimeConfig;
}

/** What a tool that only reads and writes the job table needs (`npm run migrate:aws`). */
export interface AwsTableConfig {
  tableName: string;
  region: string;
  endpointUrl?: string | undefined;
  endpoints?: { dynamodb?: string | undefined } | undefined;
  credentials?: { accessKeyId: string; secretAccessKey: string } | undefined;
}

/**
 * Only the job table's settings: `OPFLOW_TABLE_NAME` (or TableName in `OPFLOW_STACK_OUTPUTS`), the
 * region (`AWS_REGION`, `AWS_DEFAULT_REGION`, or the region of `OPFLOW_QUEUE_URL` / the outputs'
 * QueueUrl when one is there), `AWS_ENDPOINT_URL` / `AWS_ENDPOINT_URL_DYNAMODB`. The queue, bucket
 * and secrets prefix are neither needed nor checked. Throws one ConfigError naming every problem.
 */
export function loadAwsTableConfig(env: Env = process.env): AwsTableConfig {
  return loadSettings(env, ['tableName', 'region', 'endpointUrl'], ['dynamodb']) as unknown as AwsTableConfig;
}

function loadSettings(
  env: Env,
  keys: readonly (keyof typeof fieldSchemas)[],
  services: readonly (keyof typeof serviceEndpointVariables)[],
): Record<string, unknown> {
  const problems: string[] = [];
  const config: Record<string, unknown> = {};
  const outputs = readStackOutputs(env, problems);
  for (const key of keys) {
    const variable = awsConfigSources[key];
    const set = (text: string | undefined) => (text === undefined || text.trim() === '' ? undefined : text);
    let value = set(env[variable]);
    if (key in stackOutputNames) value ??= set(outputs[key as keyof typeof stackOutputNames]);
    if (key === 'region') {
      value ??=
        set(env.AWS_DEFAULT_REGION) ?? regionOfQueueUrl(set(env.OPFLOW_QUEUE_URL) ?? outputs.queueUrl);
    }
    const parsed = fieldSchemas[key].safeParse(value);
    if (parsed.success) config[key] = parsed.data;
    else {
      const shown = value === undefined ? '' : ` (got ${JSON.stringify(redactUrl(value))})`;
      const where =
        value === undefined && outputs.file && key in stackOutputNames
          ? `, nor ${stackOutputNames[key as keyof typeof stackOutputNames]} in ${outputs.file}`
          : '';
      problems.push(`${variable}: ${parsed.error.issues[0]?.message ?? 'is not valid'}${where}${shown}`);
    }
  }
  const endpoints: NonNullable<AwsClientConfig['endpoints']> = {};
  for (const service of services) {
    const variable = serviceEndpointVariables[service];
    const value = env[variable]?.trim();
    if (!value) continue;
    const parsed = url.safeParse(value);
    if (parsed.success) endpoints[service] = parsed.data;
    else problems.push(`${variable}: must be an http(s) URL (got ${JSON.stringify(redactUrl(value))})`);
  }
  if (problems.length > 0) throw new ConfigError(`invalid aws configuration: ${problems.join('; ')}`, false);
  const usesEmulators = config.endpointUrl !== undefined || Object.keys(endpoints).length > 0;
  const hasCredentials = Boolean(
    env.AWS_ACCESS_KEY_ID || env.AWS_PROFILE || env.AWS_CONTAINER_CREDENTIALS_FULL_URI,
  );
  return {
    ...config,
    ...(Object.keys(endpoints).length > 0 ? { endpoints } : {}),
    ...(usesEmulators && !hasCredentials
      ? { credentials: { accessKeyId: 'test', secretAccessKey: 'test' } }
      : {}),
  };
}

export interface AwsPipelineOptions {
  /** The workflows jobs may name. */
  workflows: WorkflowRegistry;
  /** Settings; read from `env` with {@link loadAwsConfig} when absent. */
  config?: AwsRuntimeConfig | undefined;
  /** Default: `process.env`. */
  env?: Env | undefined;
  /** Overrides the configured calls per second per API key (`--qps`). */
  qps?: number | undefined;
  /** Default: the wall clock. */
  clock?: Clock | undefined;
  /** Default: `Math.random`. */
  random?: (() => number) | undefined;
  log?: Logger | undefined;
  metrics?: EngineMetrics | undefined;
  /** A client to use instead of one built from the configuration (tests). */
  client?: OpenPlatformClient | undefined;
  /** Told the cost of every upstream call (metrics). */
  onUsage?: ((usage: CallUsage) => void) | undefined;
  /** Sees each SDK client once before use (the Lambda runtime's tracer). */
  instrumentAwsClient?: (<T>(client: T) => T) | undefined;
}

export interface AwsPipeline extends Pipeline {
  readonly backend: 'aws';
  readonly aws: AwsBackend;
  readonly config: AwsRuntimeConfig;
  /**
   * The job history (`HIST#` items, the dashboard's timeline), written after each commit this
   * process makes; a Lambda awaits `history.flush()` before it returns (`close()` flushes too).
   */
  readonly history: DynamoDbJobHistory;
  onJobChange(listener: (job: Job) => void): () => void;
}

/**
 * The engine on a deployed stack's AWS resources. Nothing runs here (`start` is absent): the
 * step worker and the sweeper are Lambda functions. `close()` releases the connections. Throws a
 * ConfigError naming every wrong variable when the environment is incomplete.
 */
export async function createAwsPipeline(options: AwsPipelineOptions): Promise<AwsPipeline> {
  const pipeline = buildAwsPipeline(options);
  // Like an open database connection, an open pipeline keeps the process alive until closed: a
  // command waiting for Lambda to finish jobs has nothing else to hold the event loop (its store
  // polls run on unref'd timers), and Node would otherwise end it with exit code 13.
  const hold = setInterval(() => undefined, 60_000);
  return {
    ...pipeline,
    async close() {
      clearInterval(hold);
      await pipeline.close();
    },
  };
}

/** {@link createAwsPipeline}, synchronously (for a Lambda's module scope). */
export function buildAwsPipeline(options: AwsPipelineOptions): AwsPipeline {
  const loaded = options.config ?? loadAwsConfig(options.env);
  const config = options.qps === undefined ? loaded : { ...loaded, qps: options.qps };
  const aws = createAwsBackend(config, options.instrumentAwsClient);
  const clock = options.clock ?? { now: () => Date.now() };
  const client =
    options.client ??
    createOpenPlatformClient({
      baseUrl: config.baseUrl,
      now: () => clock.now(),
      onUsage: options.onUsage,
    });
  const changes = createJobChangeHub();
  const history = new DynamoDbJobHistory({
    client: aws.clients.documents,
    tableName: config.tableName,
    onError: (error) =>
      options.log?.warn('job history: an event was not written (the job itself is committed)', {
        error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
      }),
  });
  changes.subscribe((job) => history.record(job));
  const deps: EngineDeps = {
    store: aws.store,
    queue: aws.queue,
    reports: aws.reports,
    keys: aws.keys,
    rateLimiter: aws.rateLimiter,
    admission: config.admission !== 'off',
    pollStats: aws.pollStats,
    pollStatsScope: config.baseUrl ?? 'https://connect.patsnap.com',
    clock,
    random: options.random ?? Math.random,
    client,
    workflows: options.workflows,
    writeReport: writeJobReport,
    log: options.log,
    metrics: options.metrics,
    callbacks: {
      outbox: new DynamoDbCallbackOutbox(aws.clients.documents, config.tableName),
      policy: callbackPolicyFromEnv(options.env ?? process.env),
    },
    onJobChange: changes.emit,
  };
  return {
    backend: 'aws',
    deps,
    aws,
    config,
    history,
    description: `aws (table ${config.tableName}, region ${config.region}${config.endpointUrl || config.endpoints ? ', emulated' : ''})`,
    onJobChange: changes.subscribe,
    async close() {
      await history.flush();
      if (!options.client) await client.close();
      aws.close();
    },
  };
}
