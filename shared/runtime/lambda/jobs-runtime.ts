/**
 * What the api, schedules and ingest functions build once per instance: the job side of the engine
 * (the DynamoDB job store with its S3 report store, the SQS work queue, the job history, the
 * callback outbox, the workflows) and nothing a step needs. Only the step worker runs steps, so
 * only it builds the Open Platform client, the API key source (Secrets Manager), the rate limiter
 * and the poll statistics (runtime.ts); these functions' bundles then hold neither the client nor
 * its HTTP stack, nor the SDK clients they never call. Their dependencies are typed `JobDeps`, which
 * has no upstream port: a route, a schedule or ingest code that needed one would not compile. The report store (S3) is loaded on its first
 * use. Settings come from the same environment and checks as every function's (`loadAwsConfig`).
 */
import {
  type AwsClients,
  awsClientConfig,
  createDynamoDbClients,
  createSqsClient,
} from '../../backends/aws/clients';
import { DynamoDbCallbackOutbox } from '../../backends/aws/dynamodb-callback-outbox';
import { DynamoDbJobHistory } from '../../backends/aws/dynamodb-job-history';
import { DynamoDbJobStore } from '../../backends/aws/dynamodb-job-store';
import { s3ReportStoreOnFirstUse } from '../../backends/aws/s3-report-store-on-first-use';
import { SqsWorkQueue } from '../../backends/aws/sqs-work-queue';
import { callbackPolicyFromEnv } from '../../callbacks/ssrf-guard';
import type { BatchStore } from '../../engine/batch-store';
import type { JobDeps } from '../../engine/deps';
import type { FirstMessageSender } from '../../engine/first-message';
import type { Job } from '../../engine/job-record';
import type { WorkflowRegistry } from '../../engine/workflow';
import { namedErrorMessage } from '../../errors/error-message';
import { workflows as allWorkflows } from '../../workflows';
import { awsCallbackNotifier } from '../aws/callback-notifier';
import { type AwsRuntimeConfig, loadAwsConfig } from '../aws/config';
import { createJobChangeHub } from '../job-change-hub';
import { createObservability, type Observability } from './observability';

/**
 * The parts of a runtime the api's routes, the schedule target and ingest read: the engine's
 * dependencies, the settings, the job history and the SDK clients they use. The step worker's
 * whole pipeline (`AwsPipeline`) has them too.
 */
export interface JobSide {
  readonly deps: JobDeps;
  readonly config: AwsRuntimeConfig;
  readonly history: DynamoDbJobHistory;
  readonly aws: { readonly clients: Pick<AwsClients, 'documents' | 'sqs'> };
}

/** What a first-message sender is built on: the job table and the runtime's settings. */
export interface FirstMessageTable {
  client: AwsClients['documents'];
  tableName: string;
  config: AwsRuntimeConfig;
  /** The function's environment (`OPFLOW_SHARES`: the key's fair shares, kept in its bucket item). */
  env: Readonly<Record<string, string | undefined>>;
}

/** What the batch store is built on: the job table (its `BATCH#` items). */
export interface BatchTable {
  client: AwsClients['documents'];
  tableName: string;
}

/** A job side whose engine has the batch store (the api's: its routes and its retry, redrive and cancel). */
export interface JobSideWithBatches extends JobSide {
  readonly deps: JobDeps & { batches: BatchStore };
}

export interface JobsRuntime extends JobSide {
  readonly observability: Observability;
  /** Adds a listener of the jobs this instance changes (after the job history's); returns its removal. */
  onJobChange(listener: (job: Job) => void): () => void;
  /**
   * Runs one invocation and then waits for what it started in the background (the job history's
   * writes): a frozen instance would drop them.
   */
  settle<T>(work: Promise<T>): Promise<T>;
}

/** What `createJobsRuntime` is built with. */
export interface JobsRuntimeOptions {
  env?: Readonly<Record<string, string | undefined>>;
  workflows?: WorkflowRegistry;
  /**
   * An S3 client the function builds anyway (ingest reads its inbox in every invocation): the report
   * store uses it. Without one, the report store loads S3 on first use (s3-report-store-on-first-use.ts).
   */
  s3?: AwsClients['s3'] | undefined;
  /**
   * Builds the sender of new jobs' first messages holding their first token (first-messages.ts):
   * passed by the api's handler, so other functions' bundles do not hold admission. Absent: the
   * first message goes at once and the step worker takes its token.
   */
  firstMessages?: ((table: FirstMessageTable) => FirstMessageSender) | undefined;
  /**
   * Builds the engine's batch store (`JobDeps.batches`): passed by the api's handler, whose routes
   * read batches and whose retry, redrive and cancel of a batch's job leave and rejoin its counts
   * (`rejoinBatch`), so other functions' bundles do not hold it.
   */
  batches?: ((table: BatchTable) => BatchStore) | undefined;
}

/** The job side of the engine for one Lambda instance: call once, at module scope. */
export function createJobsRuntime(
  options: JobsRuntimeOptions & { batches: (table: BatchTable) => BatchStore },
): JobsRuntime & JobSideWithBatches;
export function createJobsRuntime(options?: JobsRuntimeOptions): JobsRuntime;
export function createJobsRuntime(options: JobsRuntimeOptions = {}): JobsRuntime {
  const env = options.env ?? process.env;
  const config = loadAwsConfig(env);
  const observability = createObservability();
  const clientConfig = awsClientConfig(config);
  const { documents } = createDynamoDbClients(clientConfig);
  const sqs = createSqsClient(clientConfig);
  // Loaded and built on first use: most api and schedule invocations read or write no S3 object.
  const reports = s3ReportStoreOnFirstUse({
    clientConfig,
    client: options.s3,
    bucket: config.bucketName,
    kmsKeyId: config.reportKmsKeyId,
  });
  const { tableName } = config;
  const history = new DynamoDbJobHistory({
    client: documents,
    tableName,
    onError: (error) =>
      observability.logger.warn('job history: an event was not written (the job itself is committed)', {
        error: namedErrorMessage(error),
      }),
  });
  const changes = createJobChangeHub();
  changes.subscribe((job) => history.record(job));
  const callbackOutbox = new DynamoDbCallbackOutbox(documents, tableName);
  // A job with a callback that ends (cancelled by the api) brings its outbox entry forward: the wake-up.
  const clock = { now: () => Date.now() };
  const callbackNotifier = awsCallbackNotifier({ outbox: callbackOutbox, clock });
  changes.subscribe((job) => callbackNotifier.noticed(job));
  const deps: JobDeps = {
    store: new DynamoDbJobStore({ client: documents, tableName, reports }),
    queue: new SqsWorkQueue({ client: sqs, queueUrl: config.queueUrl }),
    reports,
    clock,
    workflows: options.workflows ?? allWorkflows,
    callbacks: {
      outbox: callbackOutbox,
      policy: callbackPolicyFromEnv(env),
    },
    onJobChange: changes.emit,
    sendFirstMessage: options.firstMessages?.({ client: documents, tableName, config, env }),
    batches: options.batches?.({ client: documents, tableName }),
  };
  return {
    deps,
    config,
    history,
    aws: { clients: { documents, sqs } },
    observability,
    onJobChange: changes.subscribe,
    settle: (work) => work.finally(() => Promise.all([history.flush(), callbackNotifier.flush()])),
  };
}
