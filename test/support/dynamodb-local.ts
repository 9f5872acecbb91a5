/**
 * DynamoDB Local alone (no SQS, S3 or Secrets Manager emulator) for the tests of one file: reached
 * before them (the run's shared instance, test/support/dynamodb-local.global.ts, or one of the file's
 * own outside that), let go after (the file's tables deleted), and a fresh job table for each test
 * that asks for one.
 */
import { afterAll, beforeAll } from 'vitest';
import { type AwsEmulators, startAwsEmulators } from '../../scripts/emulators/aws-emulators';
import { REAL_PROCESS_TIMEOUT_MS } from './timeouts';

export interface DynamoDbLocal {
  /** The running emulators (once the file's `beforeAll` has run). */
  readonly emulators: AwsEmulators;
  /** A new job table and the document client to reach it. */
  newTable(): Promise<{ tableName: string; client: AwsEmulators['clients']['documents'] }>;
}

/** Call at the top of a test file. */
export function dynamoDbLocalForThisFile(): DynamoDbLocal {
  let started: AwsEmulators | undefined;
  beforeAll(async () => {
    started = await startAwsEmulators({ sqsAndS3: false, secretsManager: false });
  }, REAL_PROCESS_TIMEOUT_MS);
  afterAll(async () => {
    await started?.stop();
  });
  const running = (): AwsEmulators => {
    if (!started) throw new Error('DynamoDB Local is not started yet (use it inside a test or a hook)');
    return started;
  };
  return {
    get emulators() {
      return running();
    },
    newTable: async () => ({ tableName: await running().createTable(), client: running().clients.documents }),
  };
}
