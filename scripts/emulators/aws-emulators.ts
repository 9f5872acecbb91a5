/**
 * Starts and stops the local stand-ins for AWS that the aws backend's tests run against:
 * fauxqs in-process (SQS and S3), AWS's DynamoDB Local (a JVM on a free port, installed on first
 * use by scripts/emulators) and the Secrets Manager stand-in of scripts/emulators. Each suite starts
 * what it needs in `beforeAll` and stops it in `afterAll`; nothing is left running. When the run
 * shares one (`OPFLOW_TEST_DYNAMODB=shared`), DynamoDB Local is that one (scripts/emulators/shared-dynamodb-local.ts): `stop()`
 * then deletes the tables this process created on it instead of stopping the JVM.
 */
import { DeleteTableCommand } from '@aws-sdk/client-dynamodb';
import { startFauxqs } from 'fauxqs';
import {
  type AwsClientConfig,
  type AwsClients,
  createAwsClients,
  createJobTable,
  destroyAwsClients,
} from '../../shared/backends/aws';
import { type DynamoDbLocal, startDynamoDbLocal } from './dynamodb-local';
import { type SecretsManagerEmulator, startSecretsManagerEmulator } from './secrets-manager';
import { sharedDynamoDbLocal } from './shared-dynamodb-local';

type Fauxqs = Awaited<ReturnType<typeof startFauxqs>>;

export interface AwsEmulators {
  region: string;
  /** Endpoints and dummy credentials for `createAwsClients()`. */
  clientConfig: AwsClientConfig;
  clients: AwsClients;
  /**
   * The variables a process (a bundled function, the CLI) needs to reach these emulators as the aws
   * backend: the region, dummy credentials and an `AWS_ENDPOINT_URL_*` for each emulator started.
   */
  environment(): Record<string, string>;
  fauxqs: Fauxqs | undefined;
  dynamoDb: DynamoDbLocal | undefined;
  secretsManager: SecretsManagerEmulator | undefined;
  /** A new, empty job table with the design's indexes and TTL. */
  createTable(): Promise<string>;
  /** A new standard queue (visibility timeout in seconds, default 30), with a DLQ when asked. */
  createQueue(options?: { visibilityTimeoutSeconds?: number; maxReceiveCount?: number }): {
    queueUrl: string;
    queueName: string;
    dlqUrl?: string;
    dlqName?: string;
  };
  createBucket(): string;
  stop(): Promise<void>;
}

export interface StartAwsEmulatorsOptions {
  /** Which emulators to start (default: all three). */
  dynamoDb?: boolean;
  sqsAndS3?: boolean;
  secretsManager?: boolean;
}

let names = 0;
/** A name no other test of this process uses. */
export function uniqueName(prefix: string): string {
  names += 1;
  return `${prefix}-${process.pid}-${names}-${Math.random().toString(36).slice(2, 8)}`;
}

/** The test run's shared DynamoDB Local when there is one, else one of this process's own. */
async function dynamoDbLocal(): Promise<DynamoDbLocal & { shared?: true }> {
  return (await sharedDynamoDbLocal()) ?? (await startDynamoDbLocal());
}

export async function startAwsEmulators(options: StartAwsEmulatorsOptions = {}): Promise<AwsEmulators> {
  const region = 'us-east-1';
  const started: { stop(): Promise<void> }[] = [];
  try {
    // Wait for every start to settle, so a failure of one still stops the others.
    const results = await Promise.allSettled([
      options.sqsAndS3 === false ? undefined : startFauxqs({ port: 0, logger: false }),
      options.dynamoDb === false ? undefined : dynamoDbLocal(),
      options.secretsManager === false ? undefined : startSecretsManagerEmulator({ region }),
    ] as const);
    for (const result of results)
      if (result.status === 'fulfilled' && result.value) started.push(result.value);
    for (const result of results) if (result.status === 'rejected') throw result.reason;
    const value = <T>(result: PromiseSettledResult<T>): T | undefined =>
      result.status === 'fulfilled' ? result.value : undefined;
    const fauxqs = value(results[0]);
    const dynamoDb = value(results[1]);
    // On a shared DynamoDB Local, the tables this process created (deleted when it stops).
    const tables = new Set<string>();
    const secretsManager = value(results[2]);
    const clientConfig: AwsClientConfig = {
      region,
      credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
      endpoints: {
        ...(fauxqs ? { sqs: fauxqs.address, s3: fauxqs.address } : {}),
        ...(dynamoDb ? { dynamodb: dynamoDb.endpoint } : {}),
        ...(secretsManager ? { secretsManager: secretsManager.endpoint } : {}),
      },
      maxAttempts: 2,
    };
    const clients = createAwsClients(clientConfig);
    const need = <T>(emulator: T | undefined, what: string): T => {
      if (!emulator) throw new Error(`${what} was not started (see startAwsEmulators options)`);
      return emulator;
    };
    return {
      region,
      clientConfig,
      clients,
      environment() {
        return {
          AWS_REGION: region,
          AWS_ACCESS_KEY_ID: 'test',
          AWS_SECRET_ACCESS_KEY: 'test',
          ...(dynamoDb ? { AWS_ENDPOINT_URL_DYNAMODB: dynamoDb.endpoint } : {}),
          ...(fauxqs ? { AWS_ENDPOINT_URL_SQS: fauxqs.address, AWS_ENDPOINT_URL_S3: fauxqs.address } : {}),
          ...(secretsManager ? { AWS_ENDPOINT_URL_SECRETS_MANAGER: secretsManager.endpoint } : {}),
        };
      },
      fauxqs,
      dynamoDb,
      secretsManager,
      async createTable() {
        need(dynamoDb, 'DynamoDB Local');
        const name = uniqueName('jobs');
        // DynamoDB Local's JVM, just started on a busy machine, now and then answers its first
        // requests with a 500 (seen as UnknownError while esbuild bundles beside it): try again.
        for (let attempt = 1; ; attempt++) {
          try {
            await createJobTable(clients.dynamoDb, name);
            if (dynamoDb?.shared) tables.add(name);
            return name;
          } catch (error) {
            const inUse = error instanceof Error && error.name === 'ResourceInUseException';
            if (inUse) {
              if (dynamoDb?.shared) tables.add(name);
              return name;
            }
            if (attempt >= 5) throw error;
            await new Promise((resolve) => setTimeout(resolve, 500 * attempt));
          }
        }
      },
      createQueue(queueOptions = {}) {
        const server = need(fauxqs, 'fauxqs');
        const queueName = uniqueName('work');
        const attributes: Record<string, string> = {
          VisibilityTimeout: String(queueOptions.visibilityTimeoutSeconds ?? 30),
        };
        if (queueOptions.maxReceiveCount === undefined) {
          return { queueName, queueUrl: server.createQueue(queueName, { attributes }).queueUrl };
        }
        const dlqName = `${queueName}-dlq`;
        const dlq = server.createQueue(dlqName);
        attributes.RedrivePolicy = JSON.stringify({
          deadLetterTargetArn: dlq.queueArn,
          maxReceiveCount: String(queueOptions.maxReceiveCount),
        });
        return {
          queueName,
          queueUrl: server.createQueue(queueName, { attributes }).queueUrl,
          dlqName,
          dlqUrl: dlq.queueUrl,
        };
      },
      createBucket() {
        return need(fauxqs, 'fauxqs').createBucket(uniqueName('reports')).bucketName;
      },
      async stop() {
        // The shared JVM serves the whole run: leave it as this file found it (its memory stays flat).
        await Promise.allSettled(
          [...tables].map((TableName) =>
            clients.dynamoDb.send(new DeleteTableCommand({ TableName }), {
              abortSignal: AbortSignal.timeout(10_000),
            }),
          ),
        );
        tables.clear();
        destroyAwsClients(clients);
        await Promise.all(started.map((emulator) => emulator.stop()));
      },
    };
  } catch (error) {
    await Promise.allSettled(started.map((emulator) => emulator.stop()));
    throw error;
  }
}
