// The bundled callback-sender function on the emulators, woken by its queue as Lambda's SQS event
// source would: a job created through the API with a callbackUrl, run by the bundled step worker,
// whose end sends the wake-up the callback-sender bundle delivers from (signed as a receiver checks
// it); a retry woken by the delayed message the sender sent itself; and nothing left queued, so
// nothing runs, once the callbacks are delivered.
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CreateQueueCommand, GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqsEventSource } from '../../../scripts/lambda/sqs-event-source';
import { REAL_PROCESS_TIMEOUT_MS } from '../../support/timeouts';
import { AwsWorld } from './harness/aws-world';

const SECRET = `whsec_${Buffer.from('the e2e callback signing secret.').toString('base64')}`;
const PREFIX = 'opflow/callback/';
const QUEUE = `callbacks-e2e-${process.pid}`;

let world: AwsWorld;
let receiver: Server;
let port: number;
let source: SqsEventSource;
let sender: (
  event: SQSEvent,
  context: Context,
) => Promise<SQSBatchResponse & { result: { attempted: number; delivered: number } }>;
const received: { headers: IncomingHttpHeaders; body: string }[] = [];
const answers: number[] = [];
const saved: Record<string, string | undefined> = {};

/** The callback queue's messages as fauxqs holds them. */
function callbackQueue() {
  const state = world.emulators.fauxqs!.inspectQueue(QUEUE)!;
  const now = Date.now();
  const delayed = state.messages.delayed.filter((message) => (message.delayUntil ?? 0) > now);
  return {
    ready: state.messages.ready.length + state.messages.delayed.length - delayed.length,
    delayed: delayed.map((message) => ({ body: JSON.parse(message.body), at: message.delayUntil! })),
    total: state.messages.ready.length + state.messages.delayed.length + state.messages.inflight.length,
  };
}

beforeAll(async () => {
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(answers.shift() ?? 204).end();
    });
  });
  receiver.listen(0, '127.0.0.1');
  await once(receiver, 'listening');
  port = (receiver.address() as AddressInfo).port;
  // Read by the api function (the policy a callbackUrl is checked against) and the sender.
  for (const [name, value] of Object.entries({
    OPFLOW_CALLBACK_ALLOW_HOSTS: `127.0.0.1:${port}`,
    OPFLOW_CALLBACK_SECRET_PREFIX: PREFIX,
  })) {
    saved[name] = process.env[name];
    process.env[name] = value;
  }
  world = await AwsWorld.start({
    workers: 1,
    // The stack's callback queue, given to the functions that create and end jobs, as the stack does.
    env: async (env) => {
      const sqs = new SQSClient({
        region: env.AWS_REGION,
        endpoint: env.AWS_ENDPOINT_URL_SQS,
        credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
      });
      const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: QUEUE }));
      sqs.destroy();
      return { ...env, OPFLOW_CALLBACK_QUEUE_URL: QueueUrl! };
    },
  });
  world.emulators.secretsManager!.setSecret(`${PREFIX}default`, SECRET);
  sender = (await world.bundles.load<{ handler: typeof sender }>('callbacks')).handler;
  const attributes = await world.emulators.clients.sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: world.env.OPFLOW_CALLBACK_QUEUE_URL,
      AttributeNames: ['QueueArn'],
    }),
  );
  source = new SqsEventSource({
    sqs: world.emulators.clients.sqs,
    queueUrl: world.env.OPFLOW_CALLBACK_QUEUE_URL!,
    queueArn: attributes.Attributes!.QueueArn!,
    batchSize: 10,
  });
}, REAL_PROCESS_TIMEOUT_MS);

afterAll(async () => {
  await world?.stop();
  receiver?.close();
  for (const [name, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
});

describe('opflow on AWS: the callback-sender function (bundled, emulators, queue-triggered)', {
  timeout: REAL_PROCESS_TIMEOUT_MS,
}, () => {
  it("delivers a finished job's signed callback when the job's end wakes it, and leaves nothing queued", async () => {
    const id = await world.submit({
      workflow: 'patent-count',
      input: { query: 'foldable phone hinge' },
      callbackUrl: `http://127.0.0.1:${port}/hook`,
    });
    // Created: one wake-up for the recheck, 15 minutes out (a lost end message costs at most that).
    const created = callbackQueue();
    expect(created.ready).toBe(0);
    expect(created.delayed).toEqual([
      { body: { jobId: id, dueAt: expect.any(Number) }, at: expect.any(Number) },
    ]);
    expect(created.delayed[0]!.at - Date.now()).toBeGreaterThan(890_000);

    const [job] = await world.settle([id]);
    expect(job?.status).toBe('SUCCEEDED');
    // Ended: the step worker's commit woke the sender at once.
    expect(callbackQueue().ready).toBe(1);
    const invocation = await source.poll(sender);
    expect(invocation).toMatchObject({ received: 1, failed: 0 });
    expect(received).toHaveLength(1);
    const [delivery] = received;
    const payload = new Webhook(SECRET).verify(delivery!.body, {
      'webhook-id': String(delivery!.headers['webhook-id']),
      'webhook-timestamp': String(delivery!.headers['webhook-timestamp']),
      'webhook-signature': String(delivery!.headers['webhook-signature']),
    }) as { type: string; data: { jobId: string; report: { files: { name: string; url?: string }[] } } };
    expect(payload.type).toBe('job.succeeded');
    expect(payload.data.jobId).toBe(id);
    // Report files as presigned S3 links, never a path of the function's machine.
    expect(payload.data.report.files.length).toBeGreaterThan(0);
    for (const file of payload.data.report.files) expect(file.url).toMatch(/^https?:\/\/.*X-Amz-Signature=/);

    // The recheck arrives later, finds the callback delivered, and sends nothing: the queue is empty.
    world.advanceTo(callbackQueue().delayed[0]!.at);
    expect(await source.poll(sender)).toMatchObject({ received: 1, failed: 0 });
    expect(received).toHaveLength(1);
    expect(callbackQueue().total).toBe(0);
  });

  it('a 500 is retried 5 s later by the delayed message the sender sent itself', async () => {
    answers.push(500);
    const before = received.length;
    const id = await world.submit({
      workflow: 'patent-count',
      input: { query: 'folding helmet' },
      callbackUrl: `http://127.0.0.1:${port}/hook`,
    });
    await world.settle([id]);
    await source.poll(sender);
    expect(received).toHaveLength(before + 1);
    const retry = callbackQueue().delayed.find((message) => message.at - Date.now() < 60_000)!;
    expect(retry.body).toMatchObject({ jobId: id });
    expect(retry.at - Date.now()).toBeGreaterThanOrEqual(4_000);
    world.advanceTo(retry.at);
    await source.poll(sender);
    expect(received).toHaveLength(before + 2);
    const { body } = await world.api('GET', `/jobs/${id}`);
    const callback = (body.job as { callback: { state: string; attempts: { status: number }[] } }).callback;
    expect(callback.state).toBe('delivered');
    expect(callback.attempts.map((attempt) => attempt.status)).toEqual([500, 204]);
  });
});
