/**
 * Stage configuration for the opflow CDK app: one typed, zod-validated object per stage. dev and
 * prod are built in; a settings file (opflow.stack.json, or the `opflowStack` CDK context) adds
 * stages of any name and changes any setting. An invalid value stops synthesis with a message
 * naming the file and the field, before anything is bundled.
 */
import * as z from 'zod';
import { parseShares, SharesSettingError } from '../shared/engine/admission/fair-share';
import { finishedRetentionMs } from '../shared/engine/advance';
import { operatorGrantSchema } from '../shared/runtime/lambda/api-auth';
import { functionTracingSchema } from './lib/function-tracing';

/** The stages built in: their settings are {@link stageDefaults}; a settings file may change them or add others. */
export const STAGES = ['dev', 'prod'] as const;
export type StageName = (typeof STAGES)[number];

/**
 * A stage's name: it names the stack (`opflow-<stage>`) and prefixes every physical name, so it is
 * short, lowercase and starts with a letter.
 */
export const stageNameSchema = z
  .string()
  .regex(
    /^[a-z][a-z0-9-]{0,23}$/,
    'must be 1-24 lowercase letters, digits or dashes, starting with a letter',
  );

/** Retention periods CloudWatch Logs accepts (days); anything else is refused at synth. */
export const LOG_RETENTION_DAYS = [
  1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653,
] as const;

const logRetentionDays = z
  .number()
  .int()
  .refine((days) => (LOG_RETENTION_DAYS as readonly number[]).includes(days), {
    message: `must be one of the retention periods CloudWatch Logs accepts: ${LOG_RETENTION_DAYS.join(', ')}`,
  });

const DAY_MS = 24 * 60 * 60_000;

/** Days a finished job's record stays in the job table before its TTL removes it (the engine's `finishedRetentionMs`). */
export const JOB_RETENTION_DAYS = Math.ceil(finishedRetentionMs / DAY_MS);

/**
 * Default days before a job's objects (`reports/<jobId>/...`) expire: the record's retention plus the
 * default deadline (one day). S3 counts from an object's creation, the TTL from the job's end, so an
 * object written at any time of a job that ends within its default deadline outlives the record.
 */
export const DEFAULT_REPORT_EXPIRY_DAYS = JOB_RETENTION_DAYS + 1;

/** Standard-IA bills at least 30 days of storage for every object moved to it. */
const INFREQUENT_ACCESS_MINIMUM_DAYS = 30;

/**
 * The longest one Open Platform call may take: the client's default overall limit of a call or a
 * document fetch (its `bodyTimeoutMs`, 120 s, which also bounds the 10 s connect and 30 s headers).
 */
export const OPEN_PLATFORM_CALL_LIMIT_SECONDS = 120;

/**
 * The shortest step-worker timeout accepted: one call at its limit plus 30 s for what a step does
 * around it (read the key, the input and earlier outputs; write outputs and the report; commit; send).
 * A shorter timeout kills the invocation mid-step, so a slow call is paid for and then made again.
 */
export const MIN_WORKER_TIMEOUT_SECONDS = OPEN_PLATFORM_CALL_LIMIT_SECONDS + 30;

const functionSettings = (maxTimeoutSeconds: number) =>
  z.strictObject({
    /** Lambda timeout in seconds. */
    timeoutSeconds: z.number().int().min(3).max(maxTimeoutSeconds),
    /** Lambda memory in MB. */
    memoryMb: z.number().int().min(128).max(10_240),
  });

const iamAuth = z.strictObject({ mode: z.literal('iam') });
const jwtAuth = z.strictObject({
  mode: z.literal('jwt'),
  /** The OIDC issuer URL, e.g. a Cognito user pool or Auth0 tenant. */
  issuer: z.url({ protocol: /^https$/ }),
  /** Accepted `aud` (or Cognito `client_id`) values. */
  audience: z.array(z.string().min(1)).min(1),
  /**
   * Which tokens are an operator's (see every tenant, name the tenant in a request): those whose
   * `claim` (default `cognito:groups`) contains one of `groups`, e.g. `{ groups: ['opflow-operators'] }`.
   * Without it, a token without a `tenant` claim is refused (403): nobody is an operator by omission.
   */
  operators: operatorGrantSchema.optional(),
});

/** The zod schema of one stage's configuration. Unknown keys are refused (a typo is an error, not a no-op). */
export const stageConfigSchema = z
  .strictObject({
    /** The stage's name (in a settings file, its key under `stages`); dev and prod are built in. */
    stage: stageNameSchema,
    names: z.strictObject({
      /** CloudFormation stack name. */
      stackName: z
        .string()
        .regex(/^[A-Za-z][A-Za-z0-9-]{0,127}$/, 'must be a valid CloudFormation stack name'),
      /** Prefix of every physical name the stack sets (table, queues, secrets, log groups). */
      resourcePrefix: z
        .string()
        .regex(
          /^[a-z][a-z0-9-]{1,30}$/,
          'must be 2-31 lowercase letters, digits or dashes, starting with a letter',
        ),
      /**
       * Generation of the stack's physical names. 1 (the default) uses `resourcePrefix` as is; N > 1
       * appends `-gN` to every physical name, so a stack deployed again after `cdk destroy` does not
       * collide with the resources the previous one retained (docs/guides/deploy.md, "Deploy again after destroy").
       */
      generation: z.number().int().min(1).max(999).default(1),
    }),
    /** Tenants whose API key secrets the stack creates (as placeholders; the key is set with the aws CLI). */
    tenants: z
      .array(z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be 1-64 letters, digits, "_" or "-"'))
      .min(1),
    worker: functionSettings(900).extend({
      /** Messages per invocation (SQS allows up to 10 without a batching window, 10000 with one). */
      batchSize: z.number().int().min(1).max(10_000),
      /** Seconds the event source waits to fill a batch (0-300). */
      maxBatchingWindowSeconds: z.number().int().min(0).max(300),
      /** The SQS event source's own concurrency cap (2-1000). Reserved concurrency is not used. */
      maxConcurrency: z.number().int().min(2).max(1000),
    }),
    api: functionSettings(30).extend({
      auth: z.discriminatedUnion('mode', [iamAuth, jwtAuth]),
      /** Default-stage throttling of the HTTP API. */
      throttle: z.strictObject({
        rateLimit: z.number().positive().max(10_000),
        burstLimit: z.number().int().min(1).max(5_000),
      }),
      /**
       * Origins of a static dashboard (`npm run dashboard:build`) allowed to call the API from a
       * browser (CORS), e.g. `https://opflow.example.com`. Needs `auth.mode: jwt`: a browser holds
       * a person's JWT, not IAM credentials. Default: none (no CORS).
       */
      dashboardOrigins: z
        .array(
          z
            .string()
            .regex(
              /^https:\/\/[a-z0-9.-]+(:\d{1,5})?$|^http:\/\/localhost(:\d{1,5})?$/,
              'must be an origin: https://host[:port] (no path, no trailing slash; http only for localhost)',
            ),
        )
        .max(10)
        .optional(),
    }),
    /**
     * The webhook route (`POST /webhooks/{source}`, no authorizer: the signature authenticates) and its
     * own function, apart from the job API's so that a flood of badly signed deliveries cannot take the
     * API's concurrency.
     */
    webhooks: z
      .strictObject({
        /** The route's own throttle (HTTP API stage route settings): requests per second and burst. */
        throttle: z.strictObject({
          rateLimit: z.number().positive().max(10_000),
          burstLimit: z.number().int().min(1).max(5_000),
        }),
        /**
         * Reserved concurrency of the webhooks function: both its share kept aside and its maximum.
         * Default: none, the route's throttle limits it (Lambda keeps 10 of an account's concurrency
         * unreserved, so an account with a limit of 10, as new accounts often have, can reserve none).
         */
        reservedConcurrency: z.number().int().min(1).max(1000).optional(),
      })
      .default({ throttle: { rateLimit: 10, burstLimit: 20 } }),
    sweeper: functionSettings(900),
    queue: z.strictObject({
      /** Receives before a message moves to the dead-letter queue. */
      maxReceiveCount: z.number().int().min(1).max(1000),
      /** How long the work queue keeps a message (the sweeper recovers anything lost). */
      retentionDays: z.number().int().min(1).max(14),
      /** How long the dead-letter queue keeps a message. */
      dlqRetentionDays: z.number().int().min(1).max(14),
    }),
    openPlatform: z.strictObject({
      /** The Open Platform base URL (OPFLOW_BASE_URL). */
      baseUrl: z.url({ protocol: /^https?$/ }),
      /** Calls per second per API key (OPFLOW_QPS). */
      qps: z.number().positive().max(1000),
      /**
       * Fair shares of a key's calls among tenants, as `OPFLOW_SHARES` says them: `acme=3,beta=1`
       * (a tenant not named weighs 1), or `off`. Default: every tenant weighs 1. Given to the step
       * worker and the api, the functions that take a key's tokens (the api a new job's first).
       */
      shares: z
        .string()
        .max(1000)
        .superRefine((text, ctx) => {
          try {
            parseShares(text);
          } catch (error) {
            if (!(error instanceof SharesSettingError)) throw error;
            ctx.addIssue({ code: 'custom', message: error.message });
          }
        })
        .optional(),
    }),
    retention: z.strictObject({
      /** Function and API access log retention. */
      logDays: logRetentionDays,
      /**
       * Days after which a job's objects (`reports/<jobId>/...`: input, step outputs, report files)
       * expire; `false` keeps them for ever. Default: with the job records (their 30 days of
       * retention, plus the default one-day deadline). An expired object is gone for good after
       * `noncurrentVersionDays` more.
       */
      reportExpiryDays: z
        .union([z.number().int().min(1), z.literal(false)])
        .default(DEFAULT_REPORT_EXPIRY_DAYS),
      /**
       * Days before current report objects move to Standard-IA (S3 requires at least 30); none when
       * left out. Must leave the 30 days Standard-IA bills for before `reportExpiryDays`.
       */
      reportTransitionDays: z.number().int().min(30).optional(),
      /** Days a replaced or deleted report version is kept. */
      noncurrentVersionDays: z.number().int().min(1),
      /** Days before an unfinished multipart upload is aborted. */
      incompleteUploadDays: z.number().int().min(1),
      /** Days S3 server access logs are kept. */
      accessLogDays: z.number().int().min(1),
    }),
    alarms: z.strictObject({
      /** Email address subscribed to the alarm topic (a confirmation mail is sent on deploy). */
      email: z.email().optional(),
      /** An existing SNS topic to notify instead of creating one. */
      snsTopicArn: z
        .string()
        .regex(/^arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]{1,256}$/, 'must be an SNS topic ARN')
        .optional(),
      /**
       * Alarm when the oldest message in the work queue is older than this (seconds); must exceed the
       * visibility timeout, since a record reported failed comes back only after it.
       */
      oldestMessageAgeSeconds: z.number().int().min(60),
      /** Alarm when this percentage of finished jobs failed within 15 minutes. */
      failedJobRatePercent: z.number().min(0).max(100),
      /** ...but only once at least this many jobs finished in those 15 minutes. */
      failedJobRateMinJobs: z.number().int().min(1),
    }),
    /**
     * The stage's CloudWatch dashboard (queue, functions, pipeline metrics): on by default. It is the
     * largest fixed charge of an idle stage ($3 a month past an account's first three dashboards);
     * the alarms do not depend on it.
     */
    cloudWatchDashboard: z.boolean().default(true),
    /** How the functions are traced: `off` (default), `active` (Lambda's own) or `opentelemetry` (an ADOT layer). */
    tracing: functionTracingSchema.default({ mode: 'off' }),
    /**
     * A customer-managed KMS key for the job table, the report bucket and every queue: `enabled`
     * creates one (yearly rotation on), or uses `keyArn`'s. Off (the default), they use AWS-owned
     * keys at no KMS cost. Every function and service that touches them is granted the key.
     */
    kms: z
      .strictObject({
        enabled: z.boolean(),
        /** An existing symmetric key to use instead of creating one (docs/guides/stack-settings.md says what its key policy needs). */
        keyArn: z
          .string()
          .regex(
            /^arn:aws[a-z-]*:kms:[a-z0-9-]+:\d{12}:key\/(mrk-)?[0-9a-f-]{32,36}$/,
            'must be a KMS key ARN: arn:aws:kms:<region>:<account>:key/<key id>',
          )
          .optional(),
      })
      .default({ enabled: false }),
    /** Powertools log level of every function. */
    logLevel: z.enum(['DEBUG', 'INFO', 'WARN', 'ERROR']),
    /** `retain` keeps the table, bucket and logs when the stack is deleted (and turns on deletion protection). */
    removalPolicy: z.enum(['retain', 'destroy']),
  })
  .superRefine((config, ctx) => {
    if (config.worker.timeoutSeconds < MIN_WORKER_TIMEOUT_SECONDS) {
      ctx.addIssue({
        code: 'custom',
        path: ['worker', 'timeoutSeconds'],
        message:
          `must be at least ${MIN_WORKER_TIMEOUT_SECONDS}: one Open Platform call may take up to ` +
          `${OPEN_PLATFORM_CALL_LIMIT_SECONDS} s, and the step needs room around it`,
      });
    }
    const visibility = visibilityTimeoutSeconds(config.worker);
    if (config.alarms.oldestMessageAgeSeconds <= visibility) {
      ctx.addIssue({
        code: 'custom',
        path: ['alarms', 'oldestMessageAgeSeconds'],
        message:
          `must be more than the work queue's visibility timeout (${visibility} s): a message delivered ` +
          'again once is that old without anything being stuck',
      });
    }
    if (config.worker.batchSize > 10 && config.worker.maxBatchingWindowSeconds < 1) {
      ctx.addIssue({
        code: 'custom',
        path: ['worker', 'maxBatchingWindowSeconds'],
        message: 'must be at least 1 when worker.batchSize is above 10 (an SQS event source rule)',
      });
    }
    if ((config.api.dashboardOrigins?.length ?? 0) > 0 && config.api.auth.mode !== 'jwt') {
      ctx.addIssue({
        code: 'custom',
        path: ['api', 'dashboardOrigins'],
        message:
          'a dashboard in a browser signs in with a JWT: set api.auth to {"mode": "jwt", "issuer": ..., "audience": [...]}',
      });
    }
    if (config.alarms.email && config.alarms.snsTopicArn) {
      ctx.addIssue({
        code: 'custom',
        path: ['alarms', 'email'],
        message: 'set either alarms.email (a new topic) or alarms.snsTopicArn (an existing topic), not both',
      });
    }
    const { reportExpiryDays, reportTransitionDays } = config.retention;
    if (
      // Below 30 the field's own rule already refuses it.
      reportTransitionDays !== undefined &&
      reportTransitionDays >= INFREQUENT_ACCESS_MINIMUM_DAYS &&
      reportExpiryDays !== false &&
      reportTransitionDays + INFREQUENT_ACCESS_MINIMUM_DAYS > reportExpiryDays
    ) {
      ctx.addIssue({
        code: 'custom',
        path: ['retention', 'reportTransitionDays'],
        message:
          `must be at most ${reportExpiryDays - INFREQUENT_ACCESS_MINIMUM_DAYS} (retention.reportExpiryDays ` +
          `${reportExpiryDays} minus the ${INFREQUENT_ACCESS_MINIMUM_DAYS} days Standard-IA bills at least), or left out: ` +
          'a report moved later costs more than it saves',
      });
    }
    if (config.kms.keyArn !== undefined && !config.kms.enabled) {
      ctx.addIssue({
        code: 'custom',
        path: ['kms', 'keyArn'],
        message: 'is used only with kms.enabled: true; set it, or leave keyArn out',
      });
    }
    for (const tenant of weightedTenants(config.openPlatform.shares))
      if (!config.tenants.includes(tenant))
        ctx.addIssue({
          code: 'custom',
          path: ['openPlatform', 'shares'],
          message: `tenant "${tenant}" is not one of the stage's tenants (${config.tenants.join(', ')}): add it to tenants, or correct its name`,
        });
    if (config.stage === 'prod' && config.removalPolicy !== 'retain') {
      ctx.addIssue({ code: 'custom', path: ['removalPolicy'], message: 'must be "retain" for prod' });
    }
  });

/** The tenants a shares setting weighs (none when it is absent, `off` or does not parse: its own rule says so). */
function weightedTenants(shares: string | undefined): string[] {
  try {
    const parsed = shares === undefined ? 'equal' : parseShares(shares);
    return typeof parsed === 'string' ? [] : Object.keys(parsed.tenants);
  } catch {
    return [];
  }
}

/** A validated stage configuration. */
export type StageConfig = z.infer<typeof stageConfigSchema>;

/**
 * The prefix of every physical name the stack sets: `names.resourcePrefix`, with `-g<generation>`
 * from generation 2 on (generation 1 keeps the names stacks had before generations existed).
 */
export function physicalPrefix(names: { resourcePrefix: string; generation?: number | undefined }): string {
  const generation = names.generation ?? 1;
  return generation === 1 ? names.resourcePrefix : `${names.resourcePrefix}-g${generation}`;
}

/**
 * The work queue's visibility timeout in seconds: six times the worker's timeout plus its batching
 * window (the AWS guidance for SQS event sources), so a message is never redelivered mid-invocation.
 */
export function visibilityTimeoutSeconds(worker: {
  timeoutSeconds: number;
  maxBatchingWindowSeconds: number;
}) {
  return 6 * worker.timeoutSeconds + worker.maxBatchingWindowSeconds;
}

/** Thrown when a stage configuration does not validate; the message lists every bad field by path. */
export class InvalidStageConfigError extends Error {
  override readonly name = 'InvalidStageConfigError';
  constructor(
    readonly stage: string,
    readonly issues: readonly { path: string; message: string }[],
    options?: ErrorOptions,
  ) {
    super(
      `invalid opflow config for stage "${stage}": ` +
        issues.map((i) => `${i.path}: ${i.message}`).join('; '),
      options,
    );
  }
}

/** What a stage's configuration looks like before validation. */
export type StageConfigInput = z.input<typeof stageConfigSchema>;

/** The configuration of each stage as written; `loadStageConfig` validates it. */
export const stageDefaults: Record<StageName, StageConfigInput> = {
  dev: {
    stage: 'dev',
    names: { stackName: 'opflow-dev', resourcePrefix: 'opflow-dev', generation: 1 },
    tenants: ['default'],
    worker: {
      timeoutSeconds: 180,
      memoryMb: 512,
      batchSize: 5,
      maxBatchingWindowSeconds: 1,
      maxConcurrency: 5,
    },
    api: {
      // A long poll of GET /events waits up to 20 s (2 s short of this); the HTTP API's integration limit is 30 s.
      timeoutSeconds: 25,
      memoryMb: 512,
      auth: { mode: 'iam' },
      throttle: { rateLimit: 10, burstLimit: 20 },
    },
    sweeper: { timeoutSeconds: 60, memoryMb: 256 },
    queue: { maxReceiveCount: 5, retentionDays: 4, dlqRetentionDays: 14 },
    openPlatform: { baseUrl: 'https://connect.patsnap.com', qps: 2 },
    retention: {
      logDays: 14,
      reportExpiryDays: DEFAULT_REPORT_EXPIRY_DAYS,
      noncurrentVersionDays: 7,
      incompleteUploadDays: 1,
      accessLogDays: 30,
    },
    alarms: { oldestMessageAgeSeconds: 1800, failedJobRatePercent: 25, failedJobRateMinJobs: 4 },
    cloudWatchDashboard: true,
    tracing: { mode: 'off' },
    kms: { enabled: false },
    logLevel: 'DEBUG',
    removalPolicy: 'destroy',
  },
  prod: {
    stage: 'prod',
    names: { stackName: 'opflow-prod', resourcePrefix: 'opflow-prod', generation: 1 },
    tenants: ['default'],
    worker: {
      timeoutSeconds: 180,
      memoryMb: 1024,
      batchSize: 10,
      maxBatchingWindowSeconds: 2,
      maxConcurrency: 20,
    },
    api: {
      // A long poll of GET /events waits up to 20 s (2 s short of this); the HTTP API's integration limit is 30 s.
      timeoutSeconds: 25,
      memoryMb: 512,
      auth: { mode: 'iam' },
      throttle: { rateLimit: 50, burstLimit: 100 },
    },
    sweeper: { timeoutSeconds: 120, memoryMb: 256 },
    queue: { maxReceiveCount: 5, retentionDays: 4, dlqRetentionDays: 14 },
    openPlatform: { baseUrl: 'https://connect.patsnap.com', qps: 5 },
    retention: {
      logDays: 90,
      reportExpiryDays: DEFAULT_REPORT_EXPIRY_DAYS,
      noncurrentVersionDays: 30,
      incompleteUploadDays: 1,
      accessLogDays: 365,
    },
    alarms: { oldestMessageAgeSeconds: 1800, failedJobRatePercent: 10, failedJobRateMinJobs: 10 },
    cloudWatchDashboard: true,
    tracing: { mode: 'off' },
    kms: { enabled: false },
    logLevel: 'INFO',
    removalPolicy: 'retain',
  },
};

/**
 * Validates a stage configuration. Throws {@link InvalidStageConfigError} naming every bad field
 * (e.g. `worker.batchSize: Too big: expected number to be <=10000`).
 */
export function parseStageConfig(input: unknown): StageConfig {
  const result = stageConfigSchema.safeParse(input);
  if (result.success) return result.data;
  const stage =
    typeof input === 'object' && input !== null && 'stage' in input ? String(input.stage) : '(unknown)';
  const issues = result.error.issues.map((issue) => ({
    path: issue.path.length > 0 ? issue.path.map(String).join('.') : '(root)',
    message: issue.message,
  }));
  throw new InvalidStageConfigError(stage, issues, { cause: result.error });
}

/** Overrides a deployer may pass on the command line (`-c alarmEmail=...`), applied before validation. */
export interface StageOverrides {
  /** Subscribes this address to the alarm topic. */
  alarmEmail?: string | undefined;
  /** Sends alarms to this existing SNS topic. */
  alarmTopicArn?: string | undefined;
  /** Switches the HTTP API to a JWT authorizer with this issuer (needs `jwtAudience`). */
  jwtIssuer?: string | undefined;
  /** Comma-separated audiences for the JWT authorizer. */
  jwtAudience?: string | undefined;
  /** Comma-separated groups whose members are operators (`api.auth.operators.groups`; JWT only). */
  jwtOperatorGroups?: string | undefined;
  /** The claim that holds those groups (`api.auth.operators.claim`, default `cognito:groups`). */
  jwtOperatorClaim?: string | undefined;
  /** Comma-separated origins of a static dashboard allowed by CORS (`api.dashboardOrigins`). */
  dashboardOrigins?: string | undefined;
}

/**
 * The validated configuration of a stage, with optional command-line overrides applied: the
 * stage of `settings` (a settings file, {@link parseStackSettings}) when given, else a built-in one.
 * Throws {@link InvalidStageConfigError} for an unknown stage or an invalid value.
 */
export function loadStageConfig(
  stage: string,
  overrides: StageOverrides = {},
  settings?: StackSettings,
): StageConfig {
  const known: Record<string, StageConfigInput> = settings?.stages ?? stageDefaults;
  const chosen = Object.hasOwn(known, stage) ? known[stage] : undefined;
  if (!chosen) {
    const where = settings ? ` (the built-in ones and those of ${settings.source})` : '';
    throw new InvalidStageConfigError(stage, [
      { path: 'stage', message: `unknown stage; expected one of ${Object.keys(known).join(', ')}${where}` },
    ]);
  }
  const config = structuredClone(chosen);
  if (overrides.alarmEmail !== undefined) config.alarms.email = overrides.alarmEmail;
  if (overrides.alarmTopicArn !== undefined) config.alarms.snsTopicArn = overrides.alarmTopicArn;
  if (overrides.dashboardOrigins !== undefined) {
    config.api.dashboardOrigins = overrides.dashboardOrigins
      .split(',')
      .map((origin) => origin.trim())
      .filter((origin) => origin.length > 0);
  }
  const list = (value: string) =>
    value
      .split(',')
      .map((item) => item.trim())
      .filter((item) => item.length > 0);
  if (overrides.jwtIssuer !== undefined || overrides.jwtAudience !== undefined) {
    config.api.auth = {
      mode: 'jwt',
      issuer: overrides.jwtIssuer ?? '',
      audience: list(overrides.jwtAudience ?? ''),
    };
  }
  if (overrides.jwtOperatorGroups !== undefined || overrides.jwtOperatorClaim !== undefined) {
    const operators = {
      ...(overrides.jwtOperatorClaim !== undefined ? { claim: overrides.jwtOperatorClaim } : {}),
      ...(overrides.jwtOperatorGroups !== undefined ? { groups: list(overrides.jwtOperatorGroups) } : {}),
    };
    if (config.api.auth.mode !== 'jwt') {
      throw new InvalidStageConfigError(stage, [
        {
          path: 'api.auth.operators',
          message: 'operator groups apply to JWT callers only: set -c jwtIssuer and -c jwtAudience too',
        },
      ]);
    }
    config.api.auth = { ...config.api.auth, operators };
  }
  return parseStageConfig(config);
}

/** Thrown when a settings file (or the `opflowStack` context) is not valid; one line per problem, naming the source and field. */
export class InvalidStackSettingsError extends Error {
  override readonly name = 'InvalidStackSettingsError';
  constructor(
    readonly source: string,
    readonly issues: readonly { path: string; message: string }[],
    options?: ErrorOptions,
  ) {
    super(
      issues
        .map((i) => (i.path ? `${source}: ${i.path}: ${i.message}` : `${source}: ${i.message}`))
        .join('\n'),
      options,
    );
  }
}

/**
 * The shape of a settings file (opflow.stack.json). Each stage is a partial stage config laid over a
 * built-in stage (`base`: the built-in of the same name, else `dev`), then validated whole.
 */
export const stackSettingsFileSchema = z.strictObject({
  /** A JSON schema for editors; ignored. */
  $schema: z.string().optional(),
  stages: z.record(
    z.string(),
    z.looseObject({
      /** The built-in stage whose settings this stage starts from. */
      base: z.enum(STAGES).optional(),
    }),
  ),
});

/** Every stage a settings file makes known, built-in ones included, each merged but not yet validated. */
export interface StackSettings {
  /** Where the settings came from, as errors name it (`opflow.stack.json`, `context "opflowStack"`). */
  readonly source: string;
  readonly stages: Record<string, StageConfigInput>;
}

type Json = Record<string, unknown>;
const isPlainObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** `patch` laid over `base`: objects merge key by key, anything else (lists included) replaces; `null` removes. */
function mergeSettings(base: Json, patch: Json): Json {
  const merged: Json = { ...base };
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete merged[key];
    else if (isPlainObject(value) && isPlainObject(merged[key]))
      merged[key] = mergeSettings(merged[key] as Json, value);
    else merged[key] = value;
  }
  return merged;
}

const issuePath = (prefix: string, path: readonly PropertyKey[]) =>
  [prefix, ...path.map(String)].filter((part) => part.length > 0).join('.');

/**
 * Validates a settings document (the parsed opflow.stack.json) and every stage in it. Names default
 * to `opflow-<stage>`; no two stages may share a stack name or a physical prefix, since two stacks in
 * one account would then collide. Throws {@link InvalidStackSettingsError} listing every problem as
 * `<source>: stages.<stage>.<field>: <message>`.
 */
export function parseStackSettings(value: unknown, source: string): StackSettings {
  const file = stackSettingsFileSchema.safeParse(value);
  if (!file.success) {
    throw new InvalidStackSettingsError(
      source,
      file.error.issues.map((issue) => ({ path: issuePath('', issue.path), message: issue.message })),
      { cause: file.error },
    );
  }
  const stages: Record<string, StageConfigInput> = structuredClone(stageDefaults);
  const issues: { path: string; message: string }[] = [];
  for (const [name, entry] of Object.entries(file.data.stages)) {
    const named = stageNameSchema.safeParse(name);
    if (!named.success) {
      issues.push(...named.error.issues.map((issue) => ({ path: `stages.${name}`, message: issue.message })));
      continue;
    }
    const { base, stage, ...patch } = entry;
    if (stage !== undefined && stage !== name) {
      issues.push({
        path: `stages.${name}.stage`,
        message: `must be "${name}" (the stage's key) or left out`,
      });
    }
    const start = structuredClone(stageDefaults[base ?? (name === 'prod' ? 'prod' : 'dev')]) as Json;
    start['stage'] = name;
    start['names'] = { stackName: `opflow-${name}`, resourcePrefix: `opflow-${name}`, generation: 1 };
    stages[name] = mergeSettings(start, patch) as StageConfigInput;
  }
  const parsed = new Map<string, StageConfig>();
  for (const [name, input] of Object.entries(stages)) {
    const result = stageConfigSchema.safeParse(input);
    if (result.success) parsed.set(name, result.data);
    else
      for (const issue of result.error.issues)
        issues.push({ path: issuePath(`stages.${name}`, issue.path), message: issue.message });
  }
  issues.push(...nameCollisions(parsed));
  if (issues.length > 0) throw new InvalidStackSettingsError(source, issues);
  return { source, stages };
}

/** Stages that share a stack name or a physical prefix: each would overwrite or block the other's resources. */
function nameCollisions(stages: ReadonlyMap<string, StageConfig>): { path: string; message: string }[] {
  const issues: { path: string; message: string }[] = [];
  const seen = { stackName: new Map<string, string>(), prefix: new Map<string, string>() };
  for (const [name, config] of stages) {
    const checks = [
      ['stackName', config.names.stackName, 'stackName', 'stack name'],
      [
        'prefix',
        physicalPrefix(config.names),
        'resourcePrefix',
        'physical prefix (resourcePrefix and generation)',
      ],
    ] as const;
    for (const [kind, value, field, what] of checks) {
      const other = seen[kind].get(value);
      if (other !== undefined) {
        issues.push({
          path: `stages.${name}.names.${field}`,
          message: `"${value}" is also the ${what} of stage "${other}": two stacks in one account would collide; give each stage its own`,
        });
      } else seen[kind].set(value, name);
    }
  }
  return issues;
}
