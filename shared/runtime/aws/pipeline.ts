/**
 * The aws runtime: the engine wired to the AWS backend of a deployed stack (or of local
 * emulators), from the stack's outputs in the environment. The Lambda functions build it once per
 * instance; `opflow --backend aws` builds it to submit, read, answer and cancel jobs, while the
 * work itself happens in Lambda.
 *
 * Its settings come from the environment (`loadAwsConfig`, ./config.ts, which names every variable).
 */

import { type AwsBackend, createAwsBackend, putInboxObject } from '../../backends/aws';
import { DynamoDbBatchStore } from '../../backends/aws/dynamodb-batch-store';
import { DynamoDbCallbackOutbox } from '../../backends/aws/dynamodb-callback-outbox';
import { DynamoDbJobHistory } from '../../backends/aws/dynamodb-job-history';
import { DynamoDbKeyBuckets } from '../../backends/aws/dynamodb-key-buckets';
import type { CallbackNotifier } from '../../callbacks/notifier';
import { shareWeightsFromEnv } from '../../engine/admission/fair-share';
import { keyFingerprint } from '../../engine/admission/rate-bucket';
import { maxParkAheadMs } from '../../engine/admission/reserve-next';
import type { EngineDeps, EngineMetrics } from '../../engine/deps';
import { firstMessageSender } from '../../engine/first-message';
import type { PartialAnswerStore } from '../../engine/partial-answer';
import type { Clock } from '../../engine/ports';
import type { WorkflowRegistry } from '../../engine/workflow';
import { namedErrorMessage } from '../../errors/error-message';
import type { Logger } from '../../log/logger';
import { createOpenPlatformClient } from '../../openplatform/client';
import type { CallUsage, OpenPlatformClient } from '../../openplatform/types';
import type { Backend, Inbox, WorkElsewhere } from '../backend';
import { wireEngine } from '../engine-wiring';
import { createJobChangeHub } from '../job-change-hub';
import { identifyUpstream } from '../upstream-identity';
import { awsCallbackNotifier } from './callback-notifier';
import { type AwsRuntimeConfig, awsAdmissionSettings, loadAwsConfig } from './config';

export {
  type AwsRuntimeConfig,
  type AwsTableConfig,
  awsConfigSources,
  loadAwsConfig,
  loadAwsTableConfig,
} from './config';

type Env = Readonly<Record<string, string | undefined>>;

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

/**
 * The engine on a stack's AWS resources: a Backend but for `work.checks()`, which only `opflow
 * doctor` asks for. The opflow command's aws backend adds them (cli-backend.ts): a dynamic import
 * in a module a function bundles would put part of the checks' SDK clients in its cold start.
 */
export interface AwsPipeline extends Omit<Backend, 'work'> {
  readonly kind: 'aws';
  readonly work: Omit<WorkElsewhere, 'checks' | 'jobApi' | 'queue'>;
  readonly aws: AwsBackend;
  readonly config: AwsRuntimeConfig;
  /**
   * The job history (`HIST#` items, the dashboard's timeline), written after each commit this
   * process makes; a Lambda awaits `history.flush()` before it returns (`close()` flushes too).
   */
  readonly history: DynamoDbJobHistory;
  /** Tells the callback sender of jobs with a callback that end (their outbox entry, due now). */
  readonly callbackNotifier: CallbackNotifier;
}

/**
 * The engine on a deployed stack's AWS resources. Nothing runs here: the step worker and the
 * sweeper are Lambda functions. `close()` releases the connections. Throws a ConfigError naming
 * every wrong variable when the environment is incomplete.
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

/**
 * The least time between two publications of a streamed answer's text on aws: each is DynamoDB
 * writes (dynamodb-partial-answers.ts), so once a second, and only when the text grew.
 */
export const awsAnswerEveryMs = 1_000;

/** {@link createAwsPipeline}, synchronously (for a Lambda's module scope). */
export function buildAwsPipeline(options: AwsPipelineOptions): AwsPipeline {
  const loaded = options.config ?? loadAwsConfig(options.env);
  const config = options.qps === undefined ? loaded : { ...loaded, qps: options.qps };
  const env = options.env ?? process.env;
  // Fair shares are kept in each key's bucket item, charged by every function that takes a token.
  const aws = createAwsBackend(
    { ...config, shares: shareWeightsFromEnv(env), random: options.random },
    options.instrumentAwsClient,
  );
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
        error: namedErrorMessage(error),
      }),
  });
  changes.subscribe((job) => history.record(job));
  const callbackOutbox = new DynamoDbCallbackOutbox(aws.clients.documents, config.tableName);
  const callbackNotifier = awsCallbackNotifier({ outbox: callbackOutbox, clock, log: options.log });
  changes.subscribe((job) => callbackNotifier.noticed(job));
  const baseUrl = config.baseUrl ?? 'https://connect.patsnap.com';
  const batches = new DynamoDbBatchStore({ client: aws.clients.documents, tableName: config.tableName });
  const partialAnswers = partialAnswersOnFirstUse(aws, config.tableName, clock);
  // Each tenant's key's bucket is recorded as the key is read, for the api (dynamodb-key-buckets.ts).
  const keyBuckets = new DynamoDbKeyBuckets({ client: aws.clients.documents, tableName: config.tableName });
  const deps = wireEngine({
    ports: { ...aws, keys: keyBuckets.watch(aws.keys, options.log), batches, callbackOutbox },
    client,
    workflows: options.workflows,
    clock,
    random: options.random,
    env,
    upstream: { scope: baseUrl, identify: (apiKey) => identifyUpstream(apiKey, baseUrl) },
    log: options.log,
    metrics: options.metrics,
    onJobChange: changes.emit,
    partialAnswers: {
      store: partialAnswers,
      everyMs: awsAnswerEveryMs,
      onText: changes.emitText,
      onError: (error) =>
        options.log?.warn('a partial answer could not be published (the stream goes on)', {
          error: namedErrorMessage(error),
        }),
    },
    tuning: { ...awsAdmissionSettings(config), bookAheadMs: maxParkAheadMs },
  });
  // A job submitted here (`opflow --backend aws run`) sends its first message with its token.
  deps.sendFirstMessage = awsFirstMessageSender(aws, deps);
  const pipeline: AwsPipeline = {
    kind: 'aws',
    deps,
    aws,
    config,
    history,
    callbackNotifier,
    description: `aws (table ${config.tableName}, region ${config.region}${config.endpointUrl || config.endpoints ? ', emulated' : ''})`,
    onJobChange: changes.subscribe,
    onAnswerText: changes.subscribeText,
    partialAnswers: async () => partialAnswers,
    work: { where: 'elsewhere', inbox: awsInbox(aws, config.bucketName, config.tableName) },
    batches: async () => batches,
    changeFeed: () =>
      Promise.reject(
        new Error(
          'the aws backend keeps no change feed: GET /events and its live updates are opflow serve’s',
        ),
      ),
    ...awsFeatureStores(aws, config.tableName),
    // Loaded only when asked for (the CLI's callbacks commands): no function's cold start holds them.
    callbackSecrets: async () => (await import('./callbacks')).awsCallbackSecrets(pipeline, env),
    callbackSender: async () => (await import('./callbacks')).callbackSenderDeps(pipeline, env),
    async close() {
      await history.flush();
      await callbackNotifier.flush();
      if (!options.client) await client.close();
      aws.close();
    },
  };
  return pipeline;
}

/**
 * The sender of a job's first message with its first call's token, for a job submitted here
 * (`opflow --backend aws run`, the api).
 */
function awsFirstMessageSender(aws: AwsBackend, deps: EngineDeps) {
  return firstMessageSender({
    rateLimiter: aws.rateLimiter,
    buckets: {
      bucketOf: async (tenant) => {
        const key = await deps.keys.getKey(tenant);
        return key === undefined ? undefined : keyFingerprint(key);
      },
    },
    // Read at each send, as the step runner reads them: a bench or a test that changes the engine's
    // settings after building the pipeline changes the first messages' too.
    get reserveHorizonMs() {
      return deps.reserveHorizonMs;
    },
    get admission() {
      return deps.admission;
    },
    get random() {
      return deps.random;
    },
  });
}

/**
 * The stores of the features beside the engine, all items of the job table; each module is loaded
 * on first use, so no Lambda function that does not use one holds it in its cold start.
 */
function awsFeatureStores(
  aws: AwsBackend,
  tableName: string,
): Pick<Backend, 'scheduleStates' | 'webhookDeliveries'> {
  const client = aws.clients.documents;
  return {
    scheduleStates: async () => {
      // The schedules are EventBridge Scheduler schedules the stack made from the config file; their
      // state (last slots, jobs, a pause) is the SCHED# items of the job table.
      const { DynamoDbScheduleStateStore } = await import('../../backends/aws/dynamodb-schedule-state-store');
      return new DynamoDbScheduleStateStore(client, tableName);
    },
    webhookDeliveries: async () => {
      const { DynamoDbWebhookDeliveries } = await import('../../backends/aws/dynamodb-webhook-deliveries');
      return new DynamoDbWebhookDeliveries({ client, tableName });
    },
  };
}

/**
 * The partial-answer store, its module loaded when a stream first publishes or a feed first reads
 * (most of the worker's steps stream nothing: its cold start does not hold it).
 */
function partialAnswersOnFirstUse(aws: AwsBackend, tableName: string, clock: Clock): PartialAnswerStore {
  let loaded: Promise<PartialAnswerStore> | undefined;
  const store = () => {
    loaded ??= import('../../backends/aws/dynamodb-partial-answers').then(
      ({ DynamoDbPartialAnswers }) =>
        new DynamoDbPartialAnswers({ client: aws.clients.documents, tableName, now: () => clock.now() }),
    );
    return loaded;
  };
  return {
    publish: async (answer) => (await store()).publish(answer),
    read: async (jobId) => (await store()).read(jobId),
  };
}

/** The report bucket's inbox, and the ingest schedule in the job table that the ingest function follows. */
function awsInbox(aws: AwsBackend, bucket: string, tableName: string): Inbox {
  const schedule = async () => {
    const { DynamoDbIngestSchedule } = await import('../../backends/aws/dynamodb-ingest-schedule');
    return new DynamoDbIngestSchedule(aws.clients.documents, tableName);
  };
  return {
    location: `s3://${bucket}/`,
    // A static import: the backend's barrel reaches s3-inbox.ts at start anyway, and a dynamic import
    // would keep every export of that file in each function's cold start.
    put: (key, body, metadata) => putInboxObject(aws.clients.s3, { bucket, key }, body, metadata),
    received: async (upload) => (await schedule()).hasUpload({ bucket, ...upload }),
    handBack: async (batchId) => {
      await (await schedule()).scheduleBatch(batchId, Date.now(), { restart: true });
    },
  };
}
