/**
 * SDK clients for the AWS backend, built once from one small config. With `endpoint` set they
 * talk to local emulators (S3 then uses path-style URLs, which emulators on 127.0.0.1 need).
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

export interface AwsClientConfig {
  region: string;
  /** One endpoint for every service (emulators); per-service endpoints override it. */
  endpoint?: string | undefined;
  endpoints?: Partial<Record<'dynamodb' | 'sqs' | 's3' | 'secretsManager', string>> | undefined;
  /** Static credentials (emulators); the SDK's default chain is used when absent. */
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string } | undefined;
  /** Attempts per SDK call, including the first (SDK default 3). */
  maxAttempts?: number | undefined;
}

export interface AwsClients {
  dynamoDb: DynamoDBClient;
  /** The document client over `dynamoDb` (plain JS values, undefined values removed). */
  documents: DynamoDBDocumentClient;
  sqs: SQSClient;
  s3: S3Client;
  secretsManager: SecretsManagerClient;
}

/**
 * Create the four SDK clients (and the DynamoDB document client) from `config`. `instrument` sees
 * each client once before use (the Lambda runtime passes the tracer's `captureAWSv3Client`).
 */
export function createAwsClients(config: AwsClientConfig, instrument?: <T>(client: T) => T): AwsClients {
  const seen = instrument ?? (<T>(client: T) => client);
  const base = (service: keyof NonNullable<AwsClientConfig['endpoints']>) => {
    const endpoint = config.endpoints?.[service] ?? config.endpoint;
    return {
      region: config.region,
      ...(endpoint ? { endpoint } : {}),
      ...(config.credentials ? { credentials: config.credentials } : {}),
      ...(config.maxAttempts ? { maxAttempts: config.maxAttempts } : {}),
    };
  };
  const dynamoDb = seen(new DynamoDBClient(base('dynamodb')));
  const s3Base = base('s3');
  return {
    dynamoDb,
    documents: DynamoDBDocumentClient.from(dynamoDb, {
      marshallOptions: { removeUndefinedValues: true },
    }),
    sqs: seen(new SQSClient(base('sqs'))),
    s3: seen(new S3Client({ ...s3Base, forcePathStyle: 'endpoint' in s3Base })),
    secretsManager: seen(new SecretsManagerClient(base('secretsManager'))),
  };
}

/** Close the clients' connection pools (tests; Lambda keeps them for the next invocation). */
export function destroyAwsClients(clients: AwsClients): void {
  clients.documents.destroy();
  clients.dynamoDb.destroy();
  clients.sqs.destroy();
  clients.s3.destroy();
  clients.secretsManager.destroy();
}
