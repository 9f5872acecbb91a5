// The bundled callback-sender function on the emulators: a job created through the API with a
// callbackUrl, run by the bundled step worker, then delivered by the callback-sender bundle (which
// builds only its own store, outbox, report store and secrets), signed as a receiver checks it.
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Context } from 'aws-lambda';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lambdaContext } from '../../../scripts/lambda/lambda-events';
import { REAL_PROCESS_TIMEOUT_MS } from '../../support/timeouts';
import { AwsWorld } from './harness/aws-world';

const SECRET = `whsec_${Buffer.from('the e2e callback signing secret.').toString('base64')}`;
const PREFIX = 'opflow/callback/';

let world: AwsWorld;
let receiver: Server;
let port: number;
const received: { headers: IncomingHttpHeaders; body: string }[] = [];
const saved: Record<string, string | undefined> = {};

beforeAll(async () => {
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(204).end();
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
}, REAL_PROCESS_TIMEOUT_MS);

afterAll(async () => {
  await world?.stop();
  receiver?.close();
  for (const [name, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
});

describe('opflow on AWS: the callback-sender function (bundled, emulators)', {
  timeout: REAL_PROCESS_TIMEOUT_MS,
}, () => {
  it("delivers a finished job's signed callback once", async () => {
    const id = await world.submit({
      workflow: 'patent-count',
      input: { query: 'foldable phone hinge' },
      callbackUrl: `http://127.0.0.1:${port}/hook`,
    });
    const [job] = await world.settle([id]);
    expect(job?.status).toBe('SUCCEEDED');

    const sender = await world.bundles.load<{
      handler: (event: unknown, context: Context) => Promise<{ attempted: number; delivered: number }>;
    }>('callbacks');
    // Less time left than the sender keeps in reserve: one pass, then it returns.
    const result = await sender.handler({}, lambdaContext('opflow-callbacks', 10_000));
    expect(result).toMatchObject({ attempted: 1, delivered: 1 });
    expect(received).toHaveLength(1);
    const [delivery] = received;
    const payload = new Webhook(SECRET).verify(delivery!.body, {
      'webhook-id': String(delivery!.headers['webhook-id']),
      'webhook-timestamp': String(delivery!.headers['webhook-timestamp']),
      'webhook-signature': String(delivery!.headers['webhook-signature']),
    }) as { type: string; data: { id?: string; jobId?: string } };
    expect(payload.type).toBe('job.succeeded');
    expect(JSON.stringify(payload)).toContain(id);

    // Delivered: a second run sends nothing.
    const again = await sender.handler({}, lambdaContext('opflow-callbacks', 10_000));
    expect(again).toMatchObject({ attempted: 0 });
    expect(received).toHaveLength(1);
  });
});
