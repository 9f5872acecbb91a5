// The ingest function's runaway guard (shared/runtime/lambda/ingest.ts): with Lambda's recursive
// loop detection off for it, a batch that would take more rounds than its budget is stopped loudly:
// no longer driven (its entry leaves the ingest schedule), an error naming the batch, a metric, and
// a notice in the ingest dead-letter queue (whose alarm fires). Rounds within the budget run as
// usual; only rounds that change nothing count. Here the batch's one job never runs (no step
// worker), so the batch never settles.
import { ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import type { Context } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type AwsEmulators, startAwsEmulators } from '../../../../scripts/emulators/aws-emulators';
import { lambdaContext } from '../../../../scripts/lambda/lambda-events';
import {
  awsClientConfig,
  createS3Client,
  putInboxObject,
  s3CreatedEvent,
} from '../../../../shared/backends/aws';
import { DynamoDbIngestSchedule } from '../../../../shared/backends/aws/dynamodb-ingest-schedule';
import { loadAwsConfig } from '../../../../shared/runtime/aws/config';
import { createIngestFunction } from '../../../../shared/runtime/lambda/ingest';
import { createJobsRuntime } from '../../../../shared/runtime/lambda/jobs-runtime';
import { captureProcessOutput } from '../../../support/process-output';
import { REAL_PROCESS_TIMEOUT_MS } from '../../../support/timeouts';

let emulators: AwsEmulators;
let env: Record<string, string>;
let deadLetterQueueUrl: string;
const saved: Record<string, string | undefined> = {};

beforeAll(async () => {
  vi.useFakeTimers({ toFake: ['Date'], now: Date.UTC(2026, 0, 5, 9) });
  emulators = await startAwsEmulators({ secretsManager: false });
  deadLetterQueueUrl = emulators.createQueue().queueUrl;
  env = {
    OPFLOW_TABLE_NAME: await emulators.createTable(),
    OPFLOW_QUEUE_URL: emulators.createQueue().queueUrl,
    OPFLOW_BUCKET_NAME: emulators.createBucket(),
    OPFLOW_API_KEY_SECRET_PREFIX: 'opflow/test/api-key/',
    ...emulators.environment(),
  };
  // The function's credentials come from its environment, as on Lambda.
  for (const [name, value] of Object.entries(env)) {
    saved[name] = process.env[name];
    process.env[name] = value;
  }
}, 120_000);
afterAll(async () => {
  await emulators?.stop();
  for (const [name, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  vi.useRealTimers();
});

describe('the ingest continuation budget', () => {
  // The first invocation meets a cold DynamoDB Local (its JVM's first queries of each kind): 13 s of
  // the test's 17 s at load 22 on the shared two-core machine, past vitest's 30 s under more load.
  // Its work is a real process's: the limit of the tests that start one (test/support/timeouts.ts).
  it('stops a batch past its budget of rounds loudly, and runs the rounds within it', {
    timeout: REAL_PROCESS_TIMEOUT_MS,
  }, async () => {
    const s3 = createS3Client(awsClientConfig(loadAwsConfig(env)));
    const runtime = createJobsRuntime({ env, s3 });
    const handOvers: unknown[] = [];
    const ingest = createIngestFunction({
      runtime,
      s3,
      continueWith: async (event) => {
        handOvers.push(event);
      },
      deadLetterQueueUrl,
      continuationBudget: 3,
    });
    const schedule = new DynamoDbIngestSchedule(emulators.clients.documents, env.OPFLOW_TABLE_NAME!);
    const bucket = env.OPFLOW_BUCKET_NAME!;
    const key = 'inbox/patent-count/lamps/lamps.jsonl';
    const { etag } = await putInboxObject(
      s3,
      { bucket, key },
      `${JSON.stringify({ id: 'a', query: 'TTL:(lamp)' })}\n`,
    );
    const context = () => lambdaContext('opflow-ingest', 120_000) as Context;
    const rounds: number[] = [];
    const { output } = await captureProcessOutput(async () => {
      // The upload's event: the batch is opened and driven once, its line read and its item
      // released (a round that changed something: not counted); its job never ends.
      await ingest.handle(s3CreatedEvent({ bucket, key }, etag), context());
      for (let invocation = 0; invocation < 5; invocation++) {
        const entry = (await schedule.entries()).find((e) => e.kind === 'batch');
        rounds.push(entry?.kind === 'batch' ? entry.rounds : -1);
        // The sweeper's pass once the batch is due again (10 s later).
        vi.setSystemTime(Date.now() + 10_000);
        await ingest.handle({ kind: 'continue' }, context());
      }
    });
    // Rounds 1 to 3 that changed nothing within the budget; the 4th stops it: its entry is gone.
    expect(rounds).toEqual([0, 1, 2, 3, -1]);
    expect(await schedule.entries()).toEqual([]);
    expect(handOvers).toEqual([]);
    const logged = output.replace(/\\"/g, '"');
    expect(logged).toContain('ingest continuation budget exhausted; the batch is stopped');
    expect(logged).toContain(
      'batch lamps took 3 rounds that changed nothing without settling (OPFLOW_INGEST_CONTINUATION_BUDGET 3)',
    );
    expect(logged).toContain('"IngestContinuationBudgetExhausted":1');
    const notices = await emulators.clients.sqs.send(
      new ReceiveMessageCommand({ QueueUrl: deadLetterQueueUrl, MaxNumberOfMessages: 10 }),
    );
    expect(notices.Messages?.map((message) => JSON.parse(message.Body ?? '{}'))).toEqual([
      { kind: 'stopped', batchId: 'lamps', reason: expect.stringContaining('batch lamps took 3 rounds') },
    ]);
  });
});
