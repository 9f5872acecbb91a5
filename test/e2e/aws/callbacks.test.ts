// The bundled callback-sender function on the emulators, on the job table's stream as Lambda's
// stream event source drives it (the filter of the synthesized template): a job created through the
// API with a callbackUrl, run by the bundled step worker, whose end writes its outbox entry due, which
// the stream hands to the callback-sender bundle (signed as a receiver checks it); a retry marked due
// by the bundled sweeper's minute pass; a sender that died after its claim, redelivered after its
// lease; and nothing invoked at all while no entry is due.
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoDbCallbackOutbox } from '../../../shared/backends/aws/dynamodb-callback-outbox';
import { REAL_PROCESS_TIMEOUT_MS } from '../../support/timeouts';
import { AwsWorld } from './harness/aws-world';

const SECRET = `whsec_${Buffer.from('the e2e callback signing secret.').toString('base64')}`;
const PREFIX = 'opflow/callback/';

let world: AwsWorld;
let outbox: DynamoDbCallbackOutbox;
let receiver: Server;
let port: number;
const received: { headers: IncomingHttpHeaders; body: string }[] = [];
const answers: number[] = [];
const saved: Record<string, string | undefined> = {};

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
  world = await AwsWorld.start({ workers: 1 });
  world.emulators.secretsManager!.setSecret(`${PREFIX}default`, SECRET);
  outbox = new DynamoDbCallbackOutbox(world.emulators.clients.documents, world.env.OPFLOW_TABLE_NAME!);
}, REAL_PROCESS_TIMEOUT_MS);

afterAll(async () => {
  await world?.stop();
  receiver?.close();
  for (const [name, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
});

const submitWithCallback = (query: string) =>
  world.submit({
    workflow: 'patent-count',
    input: { query },
    callbackUrl: `http://127.0.0.1:${port}/hook`,
  });

describe('opflow on AWS: the callback-sender function (bundled, emulators, on the job table stream)', {
  timeout: REAL_PROCESS_TIMEOUT_MS,
}, () => {
  it("delivers a finished job's signed callback when the job's end writes its entry due, and runs for nothing else", async () => {
    const id = await submitWithCallback('foldable phone hinge');
    // Created: its entry is written due; the function, handed it, finds the job running and puts the
    // entry back for the recheck, 15 minutes out (a lost end costs at most that), sending nothing.
    expect(await world.deliverCallbacks()).toBe(1);
    expect(received).toHaveLength(0);
    const created = await outbox.entryOf(id);
    expect(created!.dueAt - Date.now()).toBeGreaterThan(890_000);
    // That move is not due: the stream filter invokes nothing for it.
    const invocations = world.callbackStream.invocations;
    expect(await world.deliverCallbacks()).toBe(0);
    expect(world.callbackStream.invocations).toBe(invocations);

    const [job] = await world.settle([id]);
    expect(job?.status).toBe('SUCCEEDED');
    // Ended: the step worker's commit brought the entry forward, due: one record for the function.
    expect(await world.deliverCallbacks()).toBe(1);
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

    // Delivered: the entry is gone, the sweeper marks nothing, the function is not invoked again.
    expect(await outbox.entryOf(id)).toBeUndefined();
    world.advanceTo(Date.now() + 20 * 60_000);
    expect(await world.sweep()).toMatchObject({ callbacksDue: 0 });
    const after = world.callbackStream.invocations;
    expect(await world.deliverCallbacks()).toBe(0);
    expect(world.callbackStream.invocations).toBe(after);
    expect(received).toHaveLength(1);
  });

  it("a 500 is retried at its time, marked due by the sweeper's minute pass", async () => {
    answers.push(500);
    const before = received.length;
    const id = await submitWithCallback('folding helmet');
    await world.settle([id]);
    await world.deliverCallbacks();
    expect(received).toHaveLength(before + 1);
    // The retry waits in the outbox 5 s out; the lease and the retry's move are not due: no invocation.
    const retry = await outbox.entryOf(id);
    expect(retry!.dueAt - Date.now()).toBeGreaterThanOrEqual(4_000);
    expect(await world.deliverCallbacks()).toBe(0);
    world.advanceTo(retry!.dueAt);
    expect(await world.sweep()).toMatchObject({ callbacksDue: 1 });
    expect(await world.deliverCallbacks()).toBe(1);
    expect(received).toHaveLength(before + 2);
    const { body } = await world.api('GET', `/jobs/${id}`);
    const callback = (body.job as { callback: { state: string; attempts: { status: number }[] } }).callback;
    expect(callback.state).toBe('delivered');
    expect(callback.attempts.map((attempt) => attempt.status)).toEqual([500, 204]);
  });

  it('a sender that dies after its claim: the entry is delivered once its lease ends, once', async () => {
    const before = received.length;
    const id = await submitWithCallback('retractable cable reel');
    await world.settle([id]);
    // A sender claims the due entry (moves it a lease ahead) and dies before it sends.
    const due = await outbox.entryOf(id);
    expect(due!.dueAt).toBeLessThanOrEqual(Date.now());
    expect(await outbox.move(due!, Date.now() + 60_000)).toBe(true);
    // The function, handed the end's record, finds the entry claimed: it sends nothing.
    await world.deliverCallbacks();
    expect(received).toHaveLength(before);
    // The lease ends; the sweeper marks the entry due; the function delivers it.
    world.advanceTo(Date.now() + 60_000);
    expect(await world.sweep()).toMatchObject({ callbacksDue: 1 });
    expect(await world.deliverCallbacks()).toBe(1);
    expect(received).toHaveLength(before + 1);
    expect(await outbox.entryOf(id)).toBeUndefined();
    world.advanceTo(Date.now() + 60_000);
    expect(await world.sweep()).toMatchObject({ callbacksDue: 0 });
    expect(await world.deliverCallbacks()).toBe(0);
    expect(received).toHaveLength(before + 1);
  });
});
