/**
 * What the `sweeper` Lambda builds once per instance: only what a sweep uses, a DynamoDB job store,
 * the callback outbox (its due entries are marked for the callback function), the ingest schedule
 * (the ingest function is woken when an entry is due) and the SQS work queue (no S3, no Secrets Manager, no Open Platform client, no workflows), so its
 * bundle and its cold start stay small. Settings come from the same environment
 * and checks as every function's (`loadAwsConfig`).
 */
import { awsClientConfig, createDynamoDbClients, createSqsClient } from '../../backends/aws/clients';
import { DynamoDbCallbackOutbox } from '../../backends/aws/dynamodb-callback-outbox';
import { DynamoDbJobStore } from '../../backends/aws/dynamodb-job-store';
import { SqsWorkQueue } from '../../backends/aws/sqs-work-queue';
import type { SweepDeps } from '../../engine/deps';
import { messageBudgetFromEnv } from '../../engine/job-record';
import type { ReviewPassResult } from '../../reviewers/review-pass';
import { reviewSecretPrefixVariable } from '../../reviewers/reviewer-secrets';
import { loadAwsConfig } from '../aws/config';
import { ingestFunctionName, sweeperIngestWake } from './ingest-wake';
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
  const ingestFunction = ingestFunctionName(env);
  return {
    deps,
    observability: createObservability(),
    callbacks: (now) => outbox.announceDue(now),
    ...(ingestFunction
      ? { ingest: sweeperIngestWake(documents, config.tableName, clientConfig, ingestFunction) }
      : {}),
    ...(config.admission !== 'off' ? { parked: store } : {}),
    ...(env[reviewSecretPrefixVariable]?.trim() ? { reviews: reviewsOnFirstUse(env) } : {}),
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
