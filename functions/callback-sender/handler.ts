/**
 * Lambda `callback-sender`, on the job table's stream (the outbox entries that come due): delivers
 * the signed callbacks of finished jobs and retries them on their schedule
 * (shared/runtime/lambda/callback-sender.ts). It builds only what a delivery reads, like the
 * sweeper: the job store, the callback outbox (DynamoDB), the report store for presigned links (S3)
 * and the signing secrets (Secrets Manager); no Open Platform client (and so no undici), no workflows.
 */
import type { Context, DynamoDBStreamEvent } from 'aws-lambda';
import {
  awsClientConfig,
  createDynamoDbClients,
  createS3Client,
  createSecretsManagerClient,
} from '../../shared/backends/aws';
import { DynamoDbCallbackOutbox } from '../../shared/backends/aws/dynamodb-callback-outbox';
import { DynamoDbJobStore } from '../../shared/backends/aws/dynamodb-job-store';
import { S3ReportStore } from '../../shared/backends/aws/s3-report-store';
import { SecretsManagerCallbackSecrets } from '../../shared/backends/aws/secrets-manager-callback-secrets';
import { presignedReportLinks } from '../../shared/callbacks/sender';
import { callbackPolicyFromEnv } from '../../shared/callbacks/ssrf-guard';
import { callbackSecretPrefixVariable } from '../../shared/runtime/aws/callbacks';
import { loadAwsConfig } from '../../shared/runtime/aws/pipeline';
import { createCallbackSenderHandler } from '../../shared/runtime/lambda/callback-sender';
import { createObservability } from '../../shared/runtime/lambda/observability';

// Once per instance: clients and caches live across invocations.
const config = loadAwsConfig(process.env);
const prefix = process.env[callbackSecretPrefixVariable]?.trim();
if (!prefix) {
  throw new Error(`${callbackSecretPrefixVariable} is not set (the stack output CallbackSecretPrefix)`);
}
const clientConfig = awsClientConfig(config);
const { documents } = createDynamoDbClients(clientConfig);
const reports = new S3ReportStore({
  client: createS3Client(clientConfig),
  bucket: config.bucketName,
  kmsKeyId: config.reportKmsKeyId,
});
const sender = createCallbackSenderHandler({
  deps: {
    store: new DynamoDbJobStore({ client: documents, tableName: config.tableName, reports }),
    outbox: new DynamoDbCallbackOutbox(documents, config.tableName),
    secrets: new SecretsManagerCallbackSecrets(createSecretsManagerClient(clientConfig), prefix),
    clock: { now: () => Date.now() },
    send: { policy: callbackPolicyFromEnv(process.env) },
    // Presigned links made with a role's session credentials die with the session: an hour is honest.
    reportLinks: presignedReportLinks(reports, 3600),
  },
  observability: createObservability(),
});

export function handler(event: DynamoDBStreamEvent, context: Context) {
  return sender.handle(event, context);
}
