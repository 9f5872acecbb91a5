/**
 * vitest globalSetup: one DynamoDB Local for the whole run instead of one per file. Starts the broker
 * of scripts/emulators/shared-dynamodb-local.ts in vitest's main process and hands its address to the
 * test processes (`OPFLOW_TEST_DYNAMODB_LOCAL`, read by `startAwsEmulators()`); the JVM starts when a
 * file first asks for it and stops when the run ends. Opt-in for now: `OPFLOW_TEST_DYNAMODB=shared`
 * turns it on; the default, `per-file`, has each file start its own as before (why, and the
 * comparison: docs/guides/testing.md).
 */
import {
  SHARED_DYNAMODB_LOCAL_ENV,
  startDynamoDbLocalBroker,
} from '../../scripts/emulators/shared-dynamodb-local';

export default async function setup(): Promise<(() => Promise<void>) | undefined> {
  const mode = process.env.OPFLOW_TEST_DYNAMODB ?? 'per-file';
  if (mode === 'per-file') {
    delete process.env[SHARED_DYNAMODB_LOCAL_ENV];
    return undefined;
  }
  if (mode !== 'shared')
    throw new Error(`OPFLOW_TEST_DYNAMODB=${mode}: expected "shared" or "per-file" (the default)`);
  // Heap for every file's tables at once (one file's JVM had 512m).
  const broker = await startDynamoDbLocalBroker({ maxHeap: '1g' });
  process.env[SHARED_DYNAMODB_LOCAL_ENV] = broker.url;
  return async () => {
    delete process.env[SHARED_DYNAMODB_LOCAL_ENV];
    await broker.stop();
    if (broker.starts > 0)
      process.stdout.write(
        `DynamoDB Local: started ${broker.starts === 1 ? 'once' : `${broker.starts} times`}, served ${broker.served} test setups\n`,
      );
  };
}
