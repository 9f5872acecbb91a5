// The step worker as the Lambda runs it (createLambdaRuntime + createStepWorker, from source) on the
// emulators, with the real Open Platform client: tenant keys read from Secrets Manager (a rotated
// key picked up on a 401, an unset or empty secret failing the job clearly, a malformed one retried),
// and an upstream call that cannot outlast the function.
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CreateSecretCommand } from '@aws-sdk/client-secrets-manager';
import { ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import type { SQSEvent } from 'aws-lambda';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  type AwsEmulators,
  startAwsEmulators,
  uniqueName,
} from '../../../../scripts/emulators/aws-emulators';
import { lambdaContext, sqsRecord } from '../../../../scripts/lambda/lambda-events';
import { submitJob } from '../../../../shared/engine/job-commands';
import { keyFingerprint } from '../../../../shared/engine/runner';
import { createLambdaRuntime, type LambdaRuntime } from '../../../../shared/runtime/lambda/runtime';
import { createStepWorker } from '../../../../shared/runtime/lambda/step-worker';
import { type Sandbox, startSandbox } from '../../../../shared/sandbox';

const OLD_KEY = 'sk-opflow-old-0123456789';
const NEW_KEY = 'sk-opflow-new-9876543210';
const novelty = { workflow: 'novelty-check', input: { text: 'A hinge with a friction damper.' } };

let emulators: AwsEmulators;
let sandbox: Sandbox;
/** An upstream that takes every request and never answers. */
let silent: Server;
let silentRequests = 0;
let env: Record<string, string>;
const runtimes: LambdaRuntime[] = [];
/** What the functions printed (Powertools JSON lines), kept out of the test output. */
const printed: string[] = [];
const streams = [process.stdout, process.stderr] as const;
const writes = streams.map((stream) => stream.write);

beforeAll(async () => {
  [emulators, sandbox] = await Promise.all([
    startAwsEmulators(),
    startSandbox({ keys: [{ key: NEW_KEY }], streamChunkDelayMs: 0 }),
  ]);
  silent = createServer(() => {
    silentRequests += 1;
  });
  silent.listen(0, '127.0.0.1');
  await once(silent, 'listening');
  const endpoints = emulators.clientConfig.endpoints!;
  env = {
    OPFLOW_TABLE_NAME: await emulators.createTable(),
    OPFLOW_QUEUE_URL: emulators.createQueue().queueUrl,
    OPFLOW_BUCKET_NAME: emulators.createBucket(),
    OPFLOW_BASE_URL: sandbox.url,
    AWS_REGION: emulators.region,
    AWS_ENDPOINT_URL_DYNAMODB: endpoints.dynamodb!,
    AWS_ENDPOINT_URL_SQS: endpoints.sqs!,
    AWS_ENDPOINT_URL_S3: endpoints.s3!,
    AWS_ENDPOINT_URL_SECRETS_MANAGER: endpoints.secretsManager!,
  };
  for (const stream of streams) {
    stream.write = ((chunk: string | Uint8Array) => {
      printed.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
      return true;
    }) as typeof stream.write;
  }
});
afterEach(async () => {
  await Promise.all(runtimes.splice(0).map((runtime) => runtime.pipeline.close()));
});
afterAll(async () => {
  streams.forEach((stream, index) => {
    stream.write = writes[index]!;
  });
  silent?.closeAllConnections();
  await Promise.allSettled([
    emulators?.stop(),
    sandbox?.close(),
    silent && new Promise((resolve) => silent.close(resolve)),
  ]);
});

/** A step worker instance with its own secrets prefix (so its own cache), talking to `baseUrl`. */
function instance(options: { baseUrl?: string; deadlineMarginMs?: number; upstreamReserveMs?: number } = {}) {
  const prefix = `${uniqueName('opflow')}/api-key/`;
  const runtime = createLambdaRuntime({
    env: {
      ...env,
      OPFLOW_API_KEY_SECRET_PREFIX: prefix,
      ...(options.baseUrl ? { OPFLOW_BASE_URL: options.baseUrl } : {}),
    },
  });
  runtimes.push(runtime);
  const worker = createStepWorker({
    deps: runtime.deps,
    observability: runtime.observability,
    deadlineMarginMs: options.deadlineMarginMs,
    upstreamReserveMs: options.upstreamReserveMs,
  });
  return { prefix, runtime, worker };
}

/** The work queue's waiting messages as one SQS event, as the event source would build it. */
async function receiveEvent(): Promise<SQSEvent> {
  const answer = await emulators.clients.sqs.send(
    new ReceiveMessageCommand({
      QueueUrl: env.OPFLOW_QUEUE_URL,
      MaxNumberOfMessages: 10,
      MessageSystemAttributeNames: ['All'],
    }),
  );
  return {
    Records: (answer.Messages ?? []).map((message) =>
      sqsRecord(
        {
          messageId: message.MessageId!,
          receiptHandle: message.ReceiptHandle!,
          body: message.Body!,
          receiveCount: Number(message.Attributes?.ApproximateReceiveCount ?? 1),
          sentAt: Date.now(),
        },
        'arn:aws:sqs:us-east-1:000000000000:work',
      ),
    ),
  };
}

describe('step worker: tenant keys from Secrets Manager', () => {
  it('picks up a rotated key when the upstream answers 401, and carries on', async () => {
    const { prefix, runtime, worker } = instance();
    emulators.secretsManager!.setSecret(`${prefix}default`, OLD_KEY);
    // An instance that ran earlier steps holds the old key in its cache; then the key is rotated.
    expect(await runtime.deps.keys.getKey('default')).toBe(OLD_KEY);
    emulators.secretsManager!.setSecret(`${prefix}default`, JSON.stringify({ apiKey: NEW_KEY }));

    const { job } = await submitJob(runtime.deps, novelty);
    const event = await receiveEvent();
    // The job's first message (it may hold its first call's token: `tokenAt`).
    expect(event.Records.map((record) => JSON.parse(record.body))).toEqual([
      expect.objectContaining({ jobId: job.id, version: 1 }),
    ]);
    const answer = await worker.handle(event, lambdaContext('opflow-step-worker'));
    expect(answer.batchItemFailures).toEqual([]);

    const after = (await runtime.deps.store.get(job.id))!;
    expect(after).toMatchObject({
      status: 'WAITING',
      step: 'summary',
      context: { taskId: expect.any(String) },
    });
    expect(after.lastError).toBeUndefined();
    // The 401 and the call that went through with the new key.
    expect(after.usage).toMatchObject({ calls: 2, failedCalls: 1 });
    expect(sandbox.ledger.entries({ keyFingerprint: keyFingerprint(NEW_KEY), outcome: 'ok' })).toHaveLength(
      1,
    );
    expect(emulators.secretsManager!.reads(`${prefix}default`)).toBe(2);
    const output = printed.join('');
    expect(output).toContain(job.id);
    // The record's log lines carry the job's keys from the moment the engine read it.
    const done = output
      .split('\n')
      .filter((line) => line.includes('"step done"') && line.includes(job.id))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(done).toEqual([
      expect.objectContaining({
        workflow: 'novelty-check',
        step: 'submit',
        operation: 'ai35-1NoveltySearchSubmit',
        tenant: 'default',
        nextStep: 'summary',
      }),
    ]);
    expect(output).not.toContain(OLD_KEY);
    expect(output).not.toContain(NEW_KEY);
  });

  it('fails the job, not the record, when the tenant has no key: unset secret or empty one', async () => {
    const { prefix, runtime, worker } = instance();
    // The stack creates each tenant's secret without a value; the deployer puts the key later.
    await emulators.clients.secretsManager.send(new CreateSecretCommand({ Name: `${prefix}unset` }));
    emulators.secretsManager!.setSecret(`${prefix}blank`, ' \n');
    const ids = [
      (await submitJob(runtime.deps, { ...novelty, tenant: 'unset' })).job.id,
      (await submitJob(runtime.deps, { ...novelty, tenant: 'blank' })).job.id,
    ];
    const answer = await worker.handle(await receiveEvent(), lambdaContext('opflow-step-worker'));
    expect(answer.batchItemFailures).toEqual([]);
    for (const [index, tenant] of ['unset', 'blank'].entries()) {
      expect(await runtime.deps.store.get(ids[index]!)).toMatchObject({
        status: 'FAILED',
        lastError: {
          kind: 'auth',
          retryable: false,
          message: `no API key is configured for tenant "${tenant}"`,
        },
      });
    }
  });

  it('leaves the record for redelivery when the secret is malformed, naming it but not its value', async () => {
    const { prefix, runtime, worker } = instance();
    emulators.secretsManager!.setSecret(`${prefix}broken`, '{"key":"sk-broken-value"}');
    const { job } = await submitJob(runtime.deps, { ...novelty, tenant: 'broken' });
    const event = await receiveEvent();
    const answer = await worker.handle(event, lambdaContext('opflow-step-worker'));
    // An operator's mistake, fixed by putting a proper value: the job waits for it (or its deadline).
    expect(answer.batchItemFailures).toEqual([{ itemIdentifier: event.Records[0]!.messageId }]);
    expect((await runtime.deps.store.get(job.id))?.version).toBe(1);
    const failure = printed
      .join('')
      .split('\n')
      .find((line) => line.includes('step failed') && line.includes(job.id));
    expect(failure).toContain(`InvalidSecretError: secret ${prefix}broken is JSON without a string`);
    expect(printed.join('')).not.toContain('sk-broken-value');
  });
});

describe("step worker: the function's deadline", () => {
  it('cuts an upstream call that would outlast the function, and commits the timeout', async () => {
    const silentUrl = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
    const { prefix, runtime, worker } = instance({
      baseUrl: silentUrl,
      deadlineMarginMs: 7_500,
      upstreamReserveMs: 300,
    });
    emulators.secretsManager!.setSecret(`${prefix}default`, NEW_KEY);
    const { job } = await submitJob(runtime.deps, novelty);
    // Without the cut, the call would wait for the client's own 30-second limits. The event is
    // received before the function's clock starts, and the margin leaves 7.2 s after the cut (the
    // call is cut 1.8 s in), so a loaded machine does not eat the whole allowance before the commit.
    const event = await receiveEvent();
    const context = lambdaContext('opflow-step-worker', 9_000);
    const answer = await worker.handle(event, context);
    expect(context.getRemainingTimeInMillis()).toBeGreaterThan(0);
    expect(answer.batchItemFailures).toEqual([]);
    expect(silentRequests).toBe(1);

    // A create call that may have reached the upstream is not sent again (it could be billed twice).
    expect(await runtime.deps.store.get(job.id)).toMatchObject({
      status: 'FAILED',
      lastError: {
        step: 'submit',
        kind: 'timeout',
        retryable: false,
        message: expect.stringMatching(/aborted by the caller \(time limit\)/),
      },
    });
  });

  it('refuses a reserve that leaves no margin', () => {
    const { runtime } = instance();
    expect(() =>
      createStepWorker({
        deps: runtime.deps,
        observability: runtime.observability,
        deadlineMarginMs: 1_000,
        upstreamReserveMs: 1_000,
      }),
    ).toThrow(/upstreamReserveMs \(1000\) must be at least 0 and less than deadlineMarginMs \(1000\)/);
  });
});
