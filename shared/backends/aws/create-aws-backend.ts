/**
 * Builds every port of one AWS deployment over one set of SDK clients (the aws counterpart of
 * ../local/create-local-backend.ts). The settings come from shared/runtime/aws/pipeline.ts's
 * `loadAwsConfig`, whose `AwsRuntimeConfig` is one of these.
 */
import type { ShareWeights } from '../../engine/admission/fair-share';
import { CachedPollStats, type PollStatsStore } from '../../engine/poll-stats';
import { createAwsClients, destroyAwsClients } from './aws-clients';
import { type AwsClientConfig, type AwsClients, awsClientConfig } from './clients';
import { DynamoDbJobStore } from './dynamodb-job-store';
import { DynamoDbPollStats } from './dynamodb-poll-stats';
import { DynamoDbRateLimiter } from './dynamodb-rate-limiter';
import { S3ReportStore } from './s3-report-store';
import { SecretsManagerKeySource } from './secrets-manager-key-source';
import { SqsWorkQueue } from './sqs-work-queue';

/** What the AWS ports are built from: the resources of a stack and where to reach them. */
export interface AwsBackendConfig {
  tableName: string;
  queueUrl: string;
  bucketName: string;
  /** Tenant `t`'s key is the secret `<prefix>t`. */
  apiKeySecretPrefix: string;
  region: string;
  /** One endpoint for every AWS service (emulators). */
  endpointUrl?: string | undefined;
  /** Per-service endpoints, which win over `endpointUrl`. */
  endpoints?: AwsClientConfig['endpoints'];
  /** Upstream calls per second per API key, shared by every worker. */
  qps: number;
  reportKmsKeyId?: string | undefined;
  /** How long a tenant's key is reused before Secrets Manager is asked again. */
  keyCacheSeconds: number;
  /** Static credentials; the SDK's default chain when absent. */
  credentials?: AwsClientConfig['credentials'];
  /**
   * The tenants' weights of fair shares (`OPFLOW_SHARES`), kept in each key's bucket item and
   * charged in the write that takes a token (dynamodb-share-ledger.ts). Absent: fair shares off.
   */
  shares?: ShareWeights | undefined;
  /** Spreads the retries of writes that lost to another worker (the poll stats). Default: `Math.random`. */
  random?: (() => number) | undefined;
}

/** Where the SDK clients of this deployment connect (clients.ts; exported here too, as before). */
export { awsClientConfig };

/** The ports of one AWS deployment, over one set of SDK clients. */
export interface AwsBackend {
  readonly clients: AwsClients;
  readonly store: DynamoDbJobStore;
  readonly queue: SqsWorkQueue;
  readonly reports: S3ReportStore;
  readonly keys: SecretsManagerKeySource;
  readonly rateLimiter: DynamoDbRateLimiter;
  /** Learned poll timing (`POLLSTAT#` items), cached for two seconds per worker. */
  readonly pollStats: PollStatsStore;
  /** Releases the SDK clients' connections. */
  close(): void;
}

/** Builds the AWS ports from a configuration; `instrument` sees each SDK client once (tracing). */
export function createAwsBackend(config: AwsBackendConfig, instrument?: <T>(client: T) => T): AwsBackend {
  const clients = createAwsClients(awsClientConfig(config), instrument);
  const reports = new S3ReportStore({
    client: clients.s3,
    bucket: config.bucketName,
    kmsKeyId: config.reportKmsKeyId,
  });
  return {
    clients,
    reports,
    store: new DynamoDbJobStore({ client: clients.documents, tableName: config.tableName, reports }),
    queue: new SqsWorkQueue({ client: clients.sqs, queueUrl: config.queueUrl }),
    keys: new SecretsManagerKeySource({
      client: clients.secretsManager,
      prefix: config.apiKeySecretPrefix,
      maxAgeSeconds: config.keyCacheSeconds,
    }),
    rateLimiter: new DynamoDbRateLimiter({
      client: clients.documents,
      tableName: config.tableName,
      ratePerSecond: config.qps,
      shares: config.shares,
    }),
    pollStats: new CachedPollStats(
      new DynamoDbPollStats({
        client: clients.documents,
        tableName: config.tableName,
        random: config.random,
      }),
    ),
    close: () => destroyAwsClients(clients),
  };
}
