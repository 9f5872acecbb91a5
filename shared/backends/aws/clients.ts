/**
 * SDK clients for the AWS backend, built once from one small config. With `endpoint` set they
 * talk to local emulators (S3 then uses path-style URLs, which emulators on 127.0.0.1 need).
 *
 * The S3 and Secrets Manager clients' builders are in s3-client.ts and secrets-manager-client.ts,
 * and the set of all four in aws-clients.ts, not here: this file is imported by every function, and
 * a file a function's entry reaches by static imports puts whatever its lazy chunks use of it in the
 * function's cold start (docs/concepts/lambda-bundles.md, "Code splitting"). The api and schedules
 * functions load S3 only when a report is read or written; the api and the sweeper load Secrets
 * Manager only with the reviewers' pass.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { S3Client } from '@aws-sdk/client-s3';
import type { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { AwsBackendConfig } from './create-aws-backend';

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

type Service = keyof NonNullable<AwsClientConfig['endpoints']>;
export type Instrument = <T>(client: T) => T;
export const unseen: Instrument = (client) => client;

/** Where the SDK clients of a deployment connect, and with which credentials. */
export function awsClientConfig(
  config: Pick<AwsBackendConfig, 'region' | 'endpointUrl' | 'endpoints' | 'credentials'>,
): AwsClientConfig {
  return {
    region: config.region,
    endpoint: config.endpointUrl,
    endpoints: config.endpoints,
    credentials: config.credentials,
  };
}

/** One service's client settings: region, endpoint (the service's own, else the common one), credentials. */
export function settingsFor(config: AwsClientConfig, service: Service) {
  const endpoint = config.endpoints?.[service] ?? config.endpoint;
  return {
    region: config.region,
    ...(endpoint ? { endpoint } : {}),
    ...(config.credentials ? { credentials: config.credentials } : {}),
    ...(config.maxAttempts ? { maxAttempts: config.maxAttempts } : {}),
  };
}

/**
 * `create()`'s client, built on first use: the returned stand-in builds it when a property is first
 * read (`send`, `config`, `middlewareStack`...) and forwards everything to it from then on (methods
 * bound to the real client, `instanceof` still true). A Lambda instance then builds only the clients
 * an invocation reaches (the api sends to S3 only for a report link, to SQS only when a job is
 * created): a client costs some milliseconds to build, on top of its share of the bundle. `destroy()`
 * of a client never built builds nothing.
 */
export function onFirstUse<T extends object>(prototype: object, create: () => T): T {
  let built: T | undefined;
  const client = () => {
    built ??= create();
    return built;
  };
  return new Proxy(Object.create(prototype) as T, {
    get(_target, property) {
      if (property === 'destroy' && built === undefined) return () => {};
      const real = client();
      const value = Reflect.get(real, property, real) as unknown;
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(real) : value;
    },
    set: (_target, property, value) => Reflect.set(client(), property, value),
    has: (_target, property) => Reflect.has(client(), property),
  });
}

/*
 * One builder per service, so that a Lambda function builds (and its bundle holds) only the
 * clients it uses: esbuild drops a builder nobody calls, and with it that service's SDK package.
 * Each client is built on its first use (onFirstUse), not when the builder is called.
 */

/** The DynamoDB client and the document client over it (plain JS values, undefined values removed). */
export function createDynamoDbClients(
  config: AwsClientConfig,
  instrument: Instrument = unseen,
): Pick<AwsClients, 'dynamoDb' | 'documents'> {
  const dynamoDb = onFirstUse(DynamoDBClient.prototype, () =>
    instrument(new DynamoDBClient(settingsFor(config, 'dynamodb'))),
  );
  return {
    dynamoDb,
    documents: onFirstUse(DynamoDBDocumentClient.prototype, () =>
      DynamoDBDocumentClient.from(dynamoDb, { marshallOptions: { removeUndefinedValues: true } }),
    ),
  };
}

export function createSqsClient(config: AwsClientConfig, instrument: Instrument = unseen): SQSClient {
  return onFirstUse(SQSClient.prototype, () => instrument(new SQSClient(settingsFor(config, 'sqs'))));
}
