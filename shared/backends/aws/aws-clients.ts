/**
 * Every SDK client of one deployment (the CLI's aws runtime, the step worker, the emulators), each
 * built on its first use (clients.ts). Apart from clients.ts, which every function imports: this
 * file reaches the S3 client.
 */
import {
  type AwsClientConfig,
  type AwsClients,
  createDynamoDbClients,
  createSqsClient,
  type Instrument,
  unseen,
} from './clients';
import { createS3Client } from './s3-client';
import { createSecretsManagerClient } from './secrets-manager-client';

/**
 * Create the four SDK clients (and the DynamoDB document client) from `config`. `instrument` sees
 * each client once before use (the Lambda runtime passes the tracer's `captureAWSv3Client`).
 */
export function createAwsClients(config: AwsClientConfig, instrument: Instrument = unseen): AwsClients {
  return {
    ...createDynamoDbClients(config, instrument),
    sqs: createSqsClient(config, instrument),
    s3: createS3Client(config, instrument),
    secretsManager: createSecretsManagerClient(config, instrument),
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
