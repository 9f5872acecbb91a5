/**
 * The aws runtime: the engine wired to the AWS backend of a deployed stack (or of local
 * emulators), from the stack's outputs in the environment. The Lambda functions build it once per
 * instance; `opflow --backend aws` builds it to submit, read, answer and cancel jobs, while the
 * work itself happens in Lambda.
 *
 * Its settings come from the environment (`loadAwsConfig`, ./config.ts, which names every variable).
 */

import { type AwsBackend, createAwsBackend } from '../../backends/aws';
import { DynamoDbBatchStore } from '../../backends/aws/dynamodb-batch-store';
import { DynamoDbCallbackOutbox } from '../../backends/aws/dynamodb-callback-outbox';
import { DynamoDbJobHistory } from '../../backends/aws/dynamodb-job-history';
import type { CallbackNotifier } from '../../callbacks/notifier';
import { callbackPolicyFromEnv } from '../../callbacks/ssrf-guard';
import { maxParkAheadMs } from '../../engine/admission/reserve-next';
import type { EngineDeps, EngineMetrics } from '../../engine/deps';
import type { Job } from '../../engine/job-record';
import { messageBudgetFromEnv } from '../../engine/job-record';
import type { Clock } from '../../engine/ports';
import type { WorkflowRegistry } from '../../engine/workflow';
import { namedErrorMessage } from '../../errors/error-message';
import type { Logger } from '../../log/logger';
import { createOpenPlatformClient } from '../../openplatform/client';
import type { CallUsage, OpenPlatformClient } from '../../openplatform/types';
import { writeJobReport } from '../../reports/write-job-report';
import { createJobChangeHub } from '../job-change-hub';
import type { Pipeline } from '../pipeline';
import { identifyUpstream } from '../upstream-identity';
import { awsCallbackNotifier } from './callback-notifier';
import { type AwsRuntimeConfig, loadAwsConfig } from './config';

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

export interface AwsPipeline extends Pipeline {
  readonly backend: 'aws';
  readonly aws: AwsBackend;
  readonly config: AwsRuntimeConfig;
  /**
   * The job history (`HIST#` items, the dashboard's timeline), written after each commit this
   * process makes; a Lambda awaits `history.flush()` before it returns (`close()` flushes too).
   */
  readonly history: DynamoDbJobHistory;
  /** Tells the callback sender of jobs with a callback that end (with OPFLOW_CALLBACK_QUEUE_URL). */
  readonly callbackNotifier: CallbackNotifier | undefined;
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
        error: namedErrorMessage(error),
      }),
  });
  changes.subscribe((job) => history.record(job));
  const callbackOutbox = new DynamoDbCallbackOutbox(aws.clients.documents, config.tableName);
  const callbackNotifier = awsCallbackNotifier({
    outbox: callbackOutbox,
    sqs: aws.clients.sqs,
    clock,
    env: options.env ?? process.env,
    log: options.log,
  });
  if (callbackNotifier) changes.subscribe((job) => callbackNotifier.noticed(job));
  const deps: EngineDeps = {
    store: aws.store,
    queue: aws.queue,
    reports: aws.reports,
    keys: aws.keys,
    rateLimiter: aws.rateLimiter,
    batches: new DynamoDbBatchStore({ client: aws.clients.documents, tableName: config.tableName }),
    admission: config.admission !== 'off',
    bookAheadMs: maxParkAheadMs,
    messageBudget: messageBudgetFromEnv(options.env ?? process.env),
    pollStats: aws.pollStats,
    pollStatsScope: config.baseUrl ?? 'https://connect.patsnap.com',
    upstreamOf: (apiKey) => identifyUpstream(apiKey, config.baseUrl ?? 'https://connect.patsnap.com'),
    clock,
    random: options.random ?? Math.random,
    client,
    workflows: options.workflows,
    writeReport: writeJobReport,
    log: options.log,
    metrics: options.metrics,
    callbacks: {
      outbox: callbackOutbox,
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
    callbackNotifier,
    description: `aws (table ${config.tableName}, region ${config.region}${config.endpointUrl || config.endpoints ? ', emulated' : ''})`,
    onJobChange: changes.subscribe,
    async close() {
      await history.flush();
      await callbackNotifier?.flush();
      if (!options.client) await client.close();
      aws.close();
    },
  };
}
