/**
 * The aws runtime's settings, read from the environment a stack's functions get (or a shell's, for
 * `opflow --backend aws`). A file of its own, apart from the pipeline (./pipeline.ts, which
 * re-exports it): the Lambda functions that build only the job side read their settings here
 * without a static import of the whole AWS backend (the S3 report store, the Open Platform client),
 * which would put them in the functions' cold start (docs/concepts/lambda-bundles.md, "Code splitting").
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
 * - `OPFLOW_API_URL` (else ApiUrl in `OPFLOW_STACK_OUTPUTS`), `OPFLOW_API_TOKEN`: the job API a
 *   command follows (`batch --watch`), signed with SigV4 unless a token (JWT mode) is given.
 */
import { readFileSync } from 'node:fs';
import * as z from 'zod';
import type { AwsClientConfig } from '../../backends/aws/clients';
import type { AwsBackendConfig } from '../../backends/aws/create-aws-backend';
import { errorMessage } from '../../errors/error-message';
import { redactUrl } from '../../openplatform/redact';
import { ConfigError } from '../config-error';

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
   * Admission of jobs waiting for a saturated key's tokens (`OPFLOW_ADMISSION`, default
   * on): parked without a message and released in order by the step workers. `off`: sent back to
   * ask again (the behaviour before; kept for the cost bench's side-by-side run).
   */
  admission?: 'on' | 'off' | undefined;
}

type Env = Readonly<Record<string, string | undefined>>;

/**
 * Admission's settings on aws, read here once for every function that takes a key's tokens: the step
 * workers' engine (pipeline.ts) and the api's new jobs' first messages (../lambda/first-messages.ts),
 * so a job's first token is taken as its later ones are. `reserveHorizonMs` undefined is admission's
 * default (15 s, admission/priority.ts): no variable sets it on aws.
 */
export function awsAdmissionSettings(config: Pick<AwsRuntimeConfig, 'admission'>): {
  admission: boolean;
  reserveHorizonMs: number | undefined;
} {
  return { admission: config.admission !== 'off', reserveHorizonMs: undefined };
}

/** The stack outputs each setting can be read from, by their CloudFormation names. */
const stackOutputNames = {
  tableName: 'TableName',
  queueUrl: 'QueueUrl',
  bucketName: 'BucketName',
  apiKeySecretPrefix: 'ApiKeySecretPrefix',
  apiUrl: 'ApiUrl',
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
    problems.push(`OPFLOW_STACK_OUTPUTS: cannot read ${file} as JSON (${errorMessage(error)})`);
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

/** The stack's job API as a command reaches it (`opflow --backend aws batch --watch` follows its feed). */
export interface JobApiSettings {
  /** `OPFLOW_API_URL`, else ApiUrl in `OPFLOW_STACK_OUTPUTS`. */
  url: string;
  /** `OPFLOW_API_TOKEN`: a bearer token for a stack in JWT mode; absent, requests are signed (SigV4). */
  token?: string | undefined;
}

/**
 * The job API's URL (`OPFLOW_API_URL`, else the stack output ApiUrl in `OPFLOW_STACK_OUTPUTS`) and
 * `OPFLOW_API_TOKEN`; undefined when no URL is set. Throws a ConfigError naming a wrong one.
 */
export function loadJobApiSettings(env: Env = process.env): JobApiSettings | undefined {
  const problems: string[] = [];
  const given = env.OPFLOW_API_URL?.trim() || undefined;
  const value = given ?? readStackOutputs(env, problems).apiUrl;
  if (value === undefined) return undefined;
  const where = given !== undefined ? 'OPFLOW_API_URL' : `ApiUrl in ${env.OPFLOW_STACK_OUTPUTS}`;
  const parsed = url.safeParse(value);
  if (!parsed.success || /^[a-z]+:\/\/[^/]*@/i.test(value))
    throw new ConfigError(
      `invalid aws configuration: ${where}: ${parsed.success ? 'must not carry credentials (OPFLOW_API_TOKEN carries a token)' : 'must be an http(s) URL'} (got ${JSON.stringify(redactUrl(value))})`,
      false,
    );
  const token = env.OPFLOW_API_TOKEN?.trim() || undefined;
  return { url: parsed.data, ...(token === undefined ? {} : { token }) };
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

/**
 * The function variable naming the automation config item (webhook mappings and schedules of
 * opflow.config.json): its sort key, `automation#<sha256 of the body, 16 hex digits>`. The stack
 * writes the item at deploy, under `PK = CONFIG`, in the job table; a function reads it once per
 * container (shared/runtime/lambda/automation.ts). The hash in the name means a changed config is a
 * changed variable, so Lambda starts new containers and none keeps a stale copy.
 */
export const AUTOMATION_CONFIG_VARIABLE = 'OPFLOW_AUTOMATION_CONFIG';

/** The partition key of the stack's config items in the job table. */
export const CONFIG_ITEM_PARTITION = 'CONFIG';

/** The sort key of the automation config item whose body hashes to `hash`. */
export function automationConfigSortKey(hash: string): string {
  return `automation#${hash}`;
}
