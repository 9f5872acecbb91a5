/**
 * What the `sweeper` Lambda builds once per instance: only what a sweep uses, a DynamoDB job store,
 * the callback outbox (its due entries are marked for the callback function), the ingest schedule
 * (the ingest function is woken when an entry is due) and the SQS work queue (no S3, no Secrets Manager, no Open Platform client, no workflows), so its
 * bundle and its cold start stay small. Settings come from the same environment
 * and checks as every function's (`loadAwsConfig`).
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import {
  type AwsClientConfig,
  awsClientConfig,
  createDynamoDbClients,
  createSqsClient,
} from '../../backends/aws/clients';
import { DynamoDbCallbackOutbox } from '../../backends/aws/dynamodb-callback-outbox';
import { DynamoDbIngestSchedule, ingestFunctionVariable } from '../../backends/aws/dynamodb-ingest-schedule';
import { DynamoDbJobStore } from '../../backends/aws/dynamodb-job-store';
import { SqsWorkQueue } from '../../backends/aws/sqs-work-queue';
import type { SweepDeps } from '../../engine/deps';
import { messageBudgetFromEnv } from '../../engine/job-record';
import type { ReviewPassResult } from '../../reviewers/review-pass';
import { reviewSecretPrefixVariable } from '../../reviewers/reviewer-secrets';
import { loadAwsConfig } from '../aws/config';
import { createObservability, type Observability } from './observability';
import type { SweeperOptions } from './sweeper';

/** The sweeper's engine dependencies and observability, from `env` (default `process.env`). */
export function createSweeperRuntime(
  env: Readonly<Record<string, string | undefined>> = process.env,
): SweeperOptions & { observability: Observability } {
  const config = loadAwsConfig(env);
  const clientConfig = awsClientConfig(config);
  const { documents } = createDynamoDbClients(clientConfig);
  const store = new DynamoDbJobStore({ client: documents, tableName: config.tableName });
  const deps: SweepDeps = {
    store,
    queue: new SqsWorkQueue({
      client: createSqsClient(clientConfig),
      queueUrl: config.queueUrl,
    }),
    clock: { now: () => Date.now() },
    messageBudget: messageBudgetFromEnv(env),
  };
  const outbox = new DynamoDbCallbackOutbox(documents, config.tableName);
  return {
    deps,
    observability: createObservability(),
    callbacks: (now) => outbox.announceDue(now),
    ...(env[ingestFunctionVariable]?.trim()
      ? {
          ingest: ingestWake(documents, config.tableName, clientConfig, env[ingestFunctionVariable].trim()),
        }
      : {}),
    ...(config.admission !== 'off' ? { parked: store } : {}),
    ...(env[reviewSecretPrefixVariable]?.trim() ? { reviews: reviewsOnFirstUse(env) } : {}),
  };
}

/**
 * The ingest pass: one Query of the ingest schedule's partition (a handful of items); when an entry
 * is due, one asynchronous invocation of the ingest function, whose Lambda client is loaded then (a
 * chunk of its own: idle, the sweeper never loads it).
 */
function ingestWake(
  documents: DynamoDBDocumentClient,
  tableName: string,
  clientConfig: AwsClientConfig,
  functionName: string,
): NonNullable<SweeperOptions['ingest']> {
  const schedule = new DynamoDbIngestSchedule(documents, tableName);
  let lambda: Promise<(payload: unknown) => Promise<void>> | undefined;
  return async (now) => {
    if ((await schedule.due(now)).length === 0) return false;
    lambda ??= import('../../backends/aws/lambda-invoke').then(({ createLambdaClient, invokeAsync }) => {
      const client = createLambdaClient(clientConfig);
      return (payload: unknown) => invokeAsync(client, functionName, payload);
    });
    lambda.catch(() => {
      lambda = undefined;
    });
    await (await lambda)({ kind: 'continue', hop: 0 });
    return true;
  };
}

/**
 * The reviewers' pass, its code (the job side of the engine, the workflows, mail and Secrets
 * Manager) loaded and built on the first run: a chunk of its own, so a stack without reviewers
 * never loads it.
 */
function reviewsOnFirstUse(env: Readonly<Record<string, string | undefined>>): SweeperOptions['reviews'] {
  let built: Promise<(until: number) => Promise<ReviewPassResult | undefined>> | undefined;
  return async (until) => {
    built ??= import('./review-sweep').then(({ createReviewSweep }) => createReviewSweep(env));
    built.catch(() => {
      built = undefined;
    });
    return (await built)(until);
  };
}
