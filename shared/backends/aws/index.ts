/**
 * The AWS backend: the engine's ports on DynamoDB, SQS, S3 and Secrets Manager, and the SDK clients
 * they use (one builder per service, clients.ts). No other file of shared/ or functions/ imports the
 * AWS SDK; they import this file or the modules it lists. A Lambda function's runtime imports the
 * modules it uses directly, not this file: everything a function's entry reaches by static imports
 * is in its cold start when a lazy chunk uses it (the S3 report store of the api, docs/concepts/lambda-bundles.md).
 */
export { createAwsClients, destroyAwsClients } from './aws-clients';
export {
  type AwsClientConfig,
  type AwsClients,
  awsClientConfig,
  createDynamoDbClients,
  createSqsClient,
} from './clients';
export { type AwsBackend, type AwsBackendConfig, createAwsBackend } from './create-aws-backend';
export { decodeCursor, encodeCursor } from './cursor';
export { DynamoDbBatchStore, type DynamoDbBatchStoreOptions } from './dynamodb-batch-store';
export { DynamoDbJobStore, type DynamoDbJobStoreOptions, inlineInputLimitBytes } from './dynamodb-job-store';
export { DynamoDbPollStats, type DynamoDbPollStatsOptions, pollStatsItemKey } from './dynamodb-poll-stats';
export { DynamoDbRateLimiter, type DynamoDbRateLimiterOptions } from './dynamodb-rate-limiter';
export {
  AwsBackendError,
  AwsConfigError,
  CorruptRecordError,
  InvalidCursorError,
  InvalidSecretError,
  InvalidWorkMessageError,
  JobAlreadyExistsError,
  JobTooLargeError,
  WorkQueueSendError,
} from './errors';
export {
  type MigrateIndexKeysOptions,
  type MigrateIndexKeysResult,
  migrateIndexKeys,
} from './migrate-index-keys';
export { createS3Client } from './s3-client';
export {
  type InboxObject,
  inboxMetadata,
  openS3Object,
  putInboxObject,
  readS3Object,
  s3CreatedEvent,
} from './s3-inbox';
export { S3ReportStore, type S3ReportStoreOptions } from './s3-report-store';
export { createSecretsManagerClient } from './secrets-manager-client';
export {
  apiKeyFromSecret,
  SecretsManagerKeySource,
  type SecretsManagerKeySourceOptions,
} from './secrets-manager-key-source';
export { delaySeconds, SqsWorkQueue, type SqsWorkQueueOptions, sqsMaxDelayMs } from './sqs-work-queue';
export {
  createJobTable,
  dueShard,
  dueShardCount,
  jobTableIndexes,
  rateBucketKey,
  statusShard,
  statusShardCount,
  ttlAttribute,
} from './table';
export { formatWorkMessage, parseWorkMessage, workMessageSchema } from './work-message';
