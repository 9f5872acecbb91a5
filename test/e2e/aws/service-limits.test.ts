// The limits of the services between a user and opflow on AWS, enforced by the simulated deployment
// from the synthesized template (scripts/lambda/api-gateway.ts, harness/template-synth.ts): what a
// user sees at each, and what opflow does to stay under it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  HTTP_API_MAX_INTEGRATION_TIMEOUT_MS,
  HTTP_API_MAX_PAYLOAD_BYTES,
  LAMBDA_SYNC_PAYLOAD_BYTES,
  startApiGateway,
} from '../../../scripts/lambda/api-gateway';
import { SqsEventSource } from '../../../scripts/lambda/sqs-event-source';
import { SQS_MAX_DELAY_SECONDS } from '../../../scripts/lambda/sqs-trace-proxy';
import { SqsWorkQueue } from '../../../shared/backends/aws/sqs-work-queue';
import type { Job } from '../../../shared/engine/job-record';
import { maxListBodyBytes } from '../../../shared/http/job-api';
import { makeJob } from '../../support/factories';
import { freshFetch } from '../../support/fresh-fetch';
import { REAL_PROCESS_TIMEOUT_MS } from '../../support/timeouts';
import { AwsWorld } from './harness/aws-world';
import { stackRules } from './harness/template-synth';

let world: AwsWorld;
beforeAll(async () => {
  world = await AwsWorld.start();
}, REAL_PROCESS_TIMEOUT_MS);
afterAll(async () => {
  await world?.stop();
});

const post = (bytes: number) =>
  freshFetch(`${world.gateway.url}/jobs`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    // A job request whose text field makes the body `bytes` long.
    body: JSON.stringify({ workflow: 'novelty-check', input: { text: 'x'.repeat(bytes - 60) } }),
  });

describe('service limits on the request path', { timeout: REAL_PROCESS_TIMEOUT_MS }, () => {
  it('reads the timeouts from the template: the api function stops well before the gateway gives up', () => {
    const { api, worker } = world.rules;
    expect(api.integrationTimeoutMs).toBeLessThanOrEqual(HTTP_API_MAX_INTEGRATION_TIMEOUT_MS);
    expect(api.timeoutMs).toBeLessThan(api.integrationTimeoutMs);
    expect(worker.timeoutMs).toBeLessThanOrEqual(15 * 60_000);
    // The rules the run's processes share (devStackRules) are those this process synthesizes.
    expect(world.rules).toEqual(stackRules());
  });

  it("answers a job request over the job API's 1 MB itself, long before Lambda's 6 MB", async () => {
    const answer = await post(2 * 1024 * 1024);
    expect(answer.status).toBe(413);
    expect(answer.headers.get('x-harness-limit')).toBeNull();
    const body = (await answer.json()) as { error: { message: string } };
    expect(body.error.message).toMatch(/1 MB|1048576|too large/i);
  });

  it("gets API Gateway's bare 500 for a request between Lambda's 6 MB and the gateway's 10 MB (opflow never sees it)", async () => {
    const answer = await post(LAMBDA_SYNC_PAYLOAD_BYTES + 100_000);
    expect(answer.status).toBe(500);
    expect(answer.headers.get('x-harness-limit')).toBe('lambda-request-payload-6MB');
    expect(await answer.json()).toEqual({ message: 'Internal Server Error' });
  });

  it("gets the gateway's 413 for a request over 10 MB", async () => {
    const answer = await post(HTTP_API_MAX_PAYLOAD_BYTES + 1_000);
    expect(answer.status).toBe(413);
    expect(answer.headers.get('x-harness-limit')).toBe('http-api-payload-10MB');
    expect(await answer.json()).toEqual({ message: 'Request Entity Too Large' });
  });

  it('keeps a page of GET /jobs under 6 MB: a page of large jobs comes back shorter, with a cursor to the rest', async () => {
    // 30 jobs of about 250 KB each (long option lists): 7.5 MB in one page of 50.
    const detail = 'd'.repeat(2_500);
    const options = Array.from({ length: 100 }, (_, i) => ({
      id: `f${i}`,
      label: `feature ${i}`,
      detail,
      preselected: false,
    }));
    const ids: string[] = [];
    for (let i = 0; i < 30; i++) {
      const job: Job = makeJob({
        tenant: 'large-pages',
        status: 'AWAITING_INPUT',
        pending: {
          step: 'features',
          nextStep: 'search',
          prompt: 'Choose',
          options,
          min: 1,
          max: 100,
          offeredAt: 0,
        },
      });
      await world.store.create(job);
      ids.push(job.id);
    }
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const answer = await freshFetch(
        `${world.gateway.url}/jobs?tenant=large-pages&limit=50${cursor ? `&cursor=${cursor}` : ''}`,
      );
      expect(answer.status, answer.headers.get('x-harness-limit') ?? '').toBe(200);
      const text = await answer.text();
      expect(Buffer.byteLength(text)).toBeLessThanOrEqual(maxListBodyBytes);
      const body = JSON.parse(text) as { jobs: { id: string }[]; cursor?: string };
      seen.push(...body.jobs.map((job) => job.id));
      cursor = body.cursor;
      pages++;
    } while (cursor !== undefined && pages < 10);
    expect(pages).toBeGreaterThan(1);
    expect(seen.sort()).toEqual(ids.sort());
  });

  it("refuses a job record before DynamoDB's 400 KB item (which DynamoDB Local enforces too), naming its size", async () => {
    const { PutCommand } = await import('@aws-sdk/lib-dynamodb');
    // DynamoDB Local, as DynamoDB: an item over 400 KB is a ValidationException.
    await expect(
      world.emulators.clients.documents.send(
        new PutCommand({
          TableName: world.env.OPFLOW_TABLE_NAME,
          Item: { PK: 'LIMIT#probe', SK: 'LIMIT#probe', blob: 'b'.repeat(410 * 1024) },
        }),
      ),
    ).rejects.toThrow(/Item size has exceeded the maximum allowed size/);
    // opflow's store refuses a new job record over 350 KB first, with its size.
    const job = makeJob({ tenant: 'large-items' });
    await expect(world.store.create({ ...job, context: { blob: 'b'.repeat(360 * 1024) } })).rejects.toThrow(
      /is \d+ bytes as JSON, over the 358400-byte item budget; keep large data in the report store/,
    );
    // A running job whose record outgrows the item fails at once, at the version it was to write,
    // instead of failing the same write on every redelivery.
    await world.store.create(job);
    const huge: Job = { ...job, version: 2, context: { blob: 'b'.repeat(360 * 1024) } };
    expect(await world.store.commit(huge, 1)).toBe(true);
    const stored = await world.store.get(job.id);
    expect(stored).toMatchObject({ version: 2, status: 'FAILED', context: {} });
    expect(stored?.lastError).toMatchObject({ kind: 'record-too-large', retryable: false });
    expect(stored?.lastError?.message).toMatch(/grew to \d+ bytes as JSON, over the 358400-byte budget/);
  });
});

describe("SQS's message size and delay, as the functions' SQS endpoint enforces them", {
  timeout: REAL_PROCESS_TIMEOUT_MS,
}, () => {
  const client = async () => {
    const { SQSClient } = await import('@aws-sdk/client-sqs');
    return new SQSClient({
      endpoint: world.sqsProxy.url,
      region: world.emulators.region,
      credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    });
  };

  it("refuses a message over the work queue's MaximumMessageSize and a delay over 900 s, with SQS's errors", async () => {
    const { SendMessageCommand } = await import('@aws-sdk/client-sqs');
    const sqs = await client();
    const QueueUrl = world.queueUrl;
    const max = world.rules.workQueueMaxMessageBytes;
    try {
      await expect(
        sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: 'm'.repeat(max + 1) })),
      ).rejects.toThrow(`Message must be shorter than ${max} bytes`);
      await expect(
        sqs.send(
          new SendMessageCommand({ QueueUrl, MessageBody: 'late', DelaySeconds: SQS_MAX_DELAY_SECONDS + 1 }),
        ),
      ).rejects.toThrow(/DelaySeconds is invalid. Reason: must be between 0 and 900/);
      // At the limits themselves, SQS takes the message.
      await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: 'm'.repeat(max), DelaySeconds: 900 }));
      // (The SDK may send a refused request twice; the reasons are the two limits.)
      const reasons = new Set(world.sqsProxy.refused.map((refusal) => `${refusal.code}: ${refusal.message}`));
      expect([...reasons]).toEqual([
        `InvalidParameterValue: One or more parameters are invalid. Reason: Message must be shorter than ${max} bytes (this one is ${max + 1}).`,
        'InvalidParameterValue: Value 901 for parameter DelaySeconds is invalid. Reason: must be between 0 and 900, if provided.',
      ]);
    } finally {
      sqs.destroy();
    }
  });

  it("keeps opflow's own work messages under both: a wait of two hours is sent as 900 s, the sweeper does the rest", async () => {
    const sqs = await client();
    const refusedBefore = world.sqsProxy.refused.length;
    try {
      const queue = new SqsWorkQueue({ client: sqs, queueUrl: world.queueUrl });
      await queue.send({ jobId: 'limits-probe', version: 1 }, 2 * 60 * 60_000);
      await queue.sendBatch(
        Array.from({ length: 12 }, (_, i) => ({
          message: { jobId: `limits-probe-${i}`, version: 1 },
          delayMs: 24 * 60 * 60_000,
        })),
      );
      expect(world.sqsProxy.refused.length).toBe(refusedBefore);
    } finally {
      sqs.destroy();
    }
  });
});

describe('the gateway and function timeouts, as a slow integration meets them', () => {
  it("stops a step-worker invocation at the template's Timeout (Task timed out): none of its records deleted", async () => {
    // What if: every function's Timeout at 2 s; the handler never answers.
    const rules = stackRules((resources) => {
      for (const resource of Object.values(resources))
        if ((resource as { Type?: string }).Type === 'AWS::Lambda::Function')
          resource.Properties['Timeout'] = 2;
    });
    expect(rules.worker.timeoutMs).toBe(2_000);
    const { SendMessageCommand } = await import('@aws-sdk/client-sqs');
    const body = JSON.stringify({ jobId: 'timeout-probe', version: 1 });
    await world.emulators.clients.sqs.send(
      new SendMessageCommand({ QueueUrl: world.queueUrl, MessageBody: body }),
    );
    const source = new SqsEventSource({
      sqs: world.emulators.clients.sqs,
      queueUrl: world.queueUrl,
      queueArn: 'arn:aws:sqs:us-east-1:000000000000:work',
      functionTimeoutMs: rules.worker.timeoutMs,
    });
    // The world fakes Date: real time from performance.now().
    const started = performance.now();
    const invocation = await source.poll(() => new Promise(() => {}));
    const tookMs = performance.now() - started;
    expect(invocation).toMatchObject({ crashed: true, deleted: 0, bodies: [body] });
    expect(tookMs).toBeGreaterThanOrEqual(1_990);
    expect(tookMs).toBeLessThan(10_000);
  }, 30_000);

  it('answers 503 at the integration timeout and 500 at the function timeout, as the template sets them', async () => {
    // What if: the template's integration timeout at 300 ms, a function timeout of 600 ms.
    const rules = stackRules((resources) => {
      for (const resource of Object.values(resources)) {
        if ((resource as { Type?: string }).Type === 'AWS::ApiGatewayV2::Integration')
          resource.Properties['TimeoutInMillis'] = 300;
      }
    });
    expect(rules.api.integrationTimeoutMs).toBe(300);
    const slow = (ms: number) => async () => {
      await new Promise((resolve) => setTimeout(resolve, ms));
      return { statusCode: 200, body: '{}' };
    };
    const gatewayFirst = await startApiGateway(slow(2_000), {
      integrationTimeoutMs: rules.api.integrationTimeoutMs,
      functionTimeoutMs: 600,
    });
    const functionFirst = await startApiGateway(slow(2_000), { functionTimeoutMs: 200 });
    try {
      const cut = await freshFetch(`${gatewayFirst.url}/jobs`);
      expect(cut.status).toBe(503);
      expect(await cut.json()).toEqual({ message: 'Service Unavailable' });
      const stopped = await freshFetch(`${functionFirst.url}/jobs`);
      expect(stopped.status).toBe(500);
      expect(stopped.headers.get('x-harness-limit')).toBe('lambda-function-timeout');
    } finally {
      await Promise.all([gatewayFirst.close(), functionFirst.close()]);
    }
  });
});
