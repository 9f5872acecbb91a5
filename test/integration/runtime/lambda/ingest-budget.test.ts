// The ingest function's runaway guard (shared/runtime/lambda/ingest.ts): with Lambda's recursive
// loop detection off for it, a continuation past the batch's budget is not run. It fails, so the
// message ends in the ingest dead-letter queue, with an error naming the batch and a metric; one
// within the budget is run as before (here: a batch that no longer exists, dropped quietly).
import type { Context, SQSEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AwsEmulators, startAwsEmulators } from '../../../../scripts/emulators/aws-emulators';
import { lambdaContext, sqsRecord } from '../../../../scripts/lambda/lambda-events';
import { awsClientConfig, createS3Client } from '../../../../shared/backends/aws';
import { loadAwsConfig } from '../../../../shared/runtime/aws/config';
import { createIngestFunction } from '../../../../shared/runtime/lambda/ingest';
import { createJobsRuntime } from '../../../../shared/runtime/lambda/jobs-runtime';

let emulators: AwsEmulators;
let env: Record<string, string>;
const saved: Record<string, string | undefined> = {};

beforeAll(async () => {
  emulators = await startAwsEmulators({ secretsManager: false });
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
});

function continuation(hop: number | undefined): SQSEvent {
  const body = JSON.stringify({ kind: 'continue', batchId: 'lamps', ...(hop === undefined ? {} : { hop }) });
  return {
    Records: [
      sqsRecord(
        { messageId: `m-${hop}`, receiptHandle: 'r', body, receiveCount: 1, sentAt: Date.now() },
        'arn:aws:sqs:us-east-1:000000000000:ingest',
      ),
    ],
  };
}

describe('the ingest continuation budget', () => {
  it('fails a continuation past the budget loudly, and runs one within it', async () => {
    const s3 = createS3Client(awsClientConfig(loadAwsConfig(env)));
    const runtime = createJobsRuntime({ env, s3 });
    const ingest = createIngestFunction({
      runtime,
      s3,
      queueUrl: env.OPFLOW_QUEUE_URL,
      continuationBudget: 3,
    });
    const lines: string[] = [];
    // Powertools writes errors to stderr and metrics to stdout.
    const streams = [process.stdout, process.stderr];
    const writes = streams.map((stream) => stream.write);
    for (const stream of streams) {
      stream.write = ((chunk: string) => {
        lines.push(String(chunk));
        return true;
      }) as typeof stream.write;
    }
    try {
      const context = lambdaContext('opflow-ingest', 60_000) as Context;
      for (const hop of [undefined, 0, 2]) {
        expect((await ingest.handle(continuation(hop), context)).batchItemFailures, `hop ${hop}`).toEqual([]);
      }
      expect((await ingest.handle(continuation(3), context)).batchItemFailures).toEqual([
        { itemIdentifier: 'm-3' },
      ]);
    } finally {
      streams.forEach((stream, index) => {
        stream.write = writes[index]!;
      });
    }
    const logged = lines.join('');
    expect(logged).toContain('ingest continuation budget exhausted');
    expect(logged).toContain('batch lamps sent 3 continuations without settling');
    expect(logged).toContain('"IngestContinuationBudgetExhausted":1');
  });
});
