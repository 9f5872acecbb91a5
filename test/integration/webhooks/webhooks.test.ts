// POST /webhooks/{source} on the local job API server (real SQLite, real sockets): a signed webhook
// starts a job; a bad signature, a stale timestamp, an unknown source, an unmappable body and an
// oversized body are refused with the right status; a replayed webhook-id answers the same job; a
// sender mid-rotation (two signatures) is accepted; a BOM-prefixed body is verified byte for byte.
import { Webhook } from 'standardwebhooks';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { LocalBackend } from '../../../shared/backends/local';
import { parseOpflowConfig } from '../../../shared/config/opflow-config';
import type { EngineDeps } from '../../../shared/engine/deps';
import { type JobApiServer, startJobApiServer } from '../../../shared/http/node-server';
import { webhookMount } from '../../../shared/http/webhook-mount';
import { createWebhookHandler, type WebhookSecrets } from '../../../shared/http/webhooks';
import { workflows } from '../../../shared/workflows';
import { localEngine, type TestEngine } from '../../support/engines';

const secretOf = (text: string) => `whsec_${Buffer.from(text).toString('base64')}`;
const current = secretOf('the current secret of source acme!');
const previous = secretOf('the previous secret of source acme');

let engine: TestEngine;
let local: LocalBackend;
let deps: EngineDeps;
let server: JobApiServer;
let secrets: Record<string, string>;
let reads: number;

const config = parseOpflowConfig(
  {
    webhooks: {
      tracker: {
        workflow: 'patent-count',
        input: { query: { $from: '/issue/title' } },
        label: { $from: '/issue/key', default: 'no key' },
        tenant: 'acme',
        maxBodyBytes: 2048,
      },
    },
  },
  'opflow.config.json',
  new Set(workflows.keys()),
);

beforeEach(async () => {
  engine = await localEngine();
  ({ local, deps } = engine);
  secrets = { tracker: current, plain: current };
  reads = 0;
  const store: WebhookSecrets = {
    get: async (source) => secrets[source],
    refresh: async (source) => {
      reads += 1;
      return secrets[source];
    },
  };
  server = await startJobApiServer({
    deps,
    mounts: [webhookMount(createWebhookHandler({ deps, config, secrets: store }), config)],
  });
});
afterEach(async () => {
  await server.close();
  await engine.close();
});

function signed(
  body: string | Buffer,
  options: { id?: string; at?: number; keys?: string[]; signature?: string } = {},
): Record<string, string> {
  const id = options.id ?? `msg_${Math.random().toString(36).slice(2)}`;
  const at = options.at ?? Math.floor(Date.now() / 1000);
  const payload = typeof body === 'string' ? body : body.toString('utf8');
  const signature =
    options.signature ??
    (options.keys ?? [current])
      .map((key) => new Webhook(key).sign(id, new Date(at * 1000), payload))
      .join(' ');
  return {
    'content-type': 'application/json',
    'webhook-id': id,
    'webhook-timestamp': String(at),
    'webhook-signature': signature,
  };
}

async function post(source: string, body: string | Buffer, headers: Record<string, string>) {
  const answer = await fetch(`${server.url}/webhooks/${source}`, { method: 'POST', headers, body });
  return {
    status: answer.status,
    json: (await answer.json()) as {
      jobId: string;
      created: boolean;
      error: { code: string; message: string };
    },
  };
}

describe('POST /webhooks/{source}', () => {
  it('starts the mapped job for a signed webhook', async () => {
    const body = JSON.stringify({ issue: { key: 'IP-7', title: 'solid-state battery' } });
    const answer = await post('tracker', body, signed(body));
    expect(answer.status).toBe(202);
    const job = await local.store.get(answer.json.jobId);
    expect(job).toMatchObject({
      workflow: 'patent-count',
      tenant: 'acme',
      source: 'webhook',
      label: 'IP-7',
      input: { inline: expect.objectContaining({ query: 'solid-state battery' }) },
    });
  });

  it('takes a job request as the body of a source without a mapping', async () => {
    const body = JSON.stringify({ workflow: 'patent-count', input: { query: 'wind turbine' } });
    const answer = await post('plain', body, signed(body));
    expect(answer.status).toBe(202);
    expect((await local.store.get(answer.json.jobId))?.workflow).toBe('patent-count');
  });

  it('answers a replayed webhook-id with the same job and creates nothing', async () => {
    const body = JSON.stringify({ issue: { key: 'IP-8', title: 'heat pump dryer' } });
    const headers = signed(body, { id: 'msg_replayed' });
    const first = await post('tracker', body, headers);
    const second = await post('tracker', body, headers);
    expect(first.status).toBe(202);
    expect(second).toMatchObject({ status: 202, json: { jobId: first.json.jobId, created: false } });
    expect((await local.store.list({})).jobs).toHaveLength(1);
  });

  it('refuses a bad signature (after reading the secret again once), a stale and a future timestamp', async () => {
    const body = JSON.stringify({ issue: { key: 'IP-9', title: 'x' } });
    const forged = await post(
      'tracker',
      body,
      signed(body, { keys: [secretOf('not the secret at all, really')] }),
    );
    expect(forged).toMatchObject({
      status: 401,
      json: { error: { message: "no v1 signature in webhook-signature matches the source's secret" } },
    });
    expect(reads).toBe(1);
    const tampered = await post('tracker', body.replace('x', 'y'), signed(body));
    expect(tampered.status).toBe(401);
    const stale = await post('tracker', body, signed(body, { at: Math.floor(Date.now() / 1000) - 6 * 60 }));
    expect(stale).toMatchObject({
      status: 401,
      json: { error: { message: expect.stringMatching(/36\d s in the past, outside the window of 5m/) } },
    });
    const future = await post('tracker', body, signed(body, { at: Math.floor(Date.now() / 1000) + 6 * 60 }));
    expect(future.status).toBe(401);
    const unsigned = await post('tracker', body, { 'content-type': 'application/json' });
    expect(unsigned.status).toBe(401);
    expect((await local.store.list({})).jobs).toHaveLength(0);
  });

  it('accepts a sender mid-rotation (old and new signatures), and a secret rotated since it was read', async () => {
    const body = JSON.stringify({ issue: { key: 'IP-10', title: 'rotation' } });
    const both = await post('tracker', body, signed(body, { keys: [previous, current] }));
    expect(both.status).toBe(202);
    // The secret changes under the server: the first check fails, the re-read one passes.
    let first = true;
    const rotated = secretOf('the brand new secret after rotation');
    secrets.tracker = current;
    const handler = createWebhookHandler({
      deps,
      config,
      secrets: {
        get: async () => current,
        refresh: async () => {
          if (!first) return current;
          first = false;
          return rotated;
        },
      },
    });
    const answer = await handler({
      source: 'tracker',
      headers: signed(body, { keys: [rotated] }),
      body: Buffer.from(body),
    });
    expect(answer.status).toBe(202);
  });

  it('answers 404 for an unknown source, 400 naming the field for an unmappable body, 413 when too large', async () => {
    const body = JSON.stringify({ issue: { key: 'IP-11' } });
    expect((await post('unknown', body, signed(body))).status).toBe(404);
    const unmappable = await post('tracker', body, signed(body));
    expect(unmappable).toMatchObject({
      status: 400,
      json: { error: { message: 'mapping.input.query: the payload has nothing at /issue/title' } },
    });
    const noWorkflow = JSON.stringify({ input: {} });
    expect((await post('plain', noWorkflow, signed(noWorkflow))).json.error.message).toMatch(
      /body\.workflow/,
    );
    const badInput = JSON.stringify({ workflow: 'patent-count', input: { nope: 1 } });
    expect((await post('plain', badInput, signed(badInput))).json.error.message).toMatch(/input/);
    const notJson = 'not json';
    expect((await post('plain', notJson, signed(notJson))).status).toBe(400);
    const big = JSON.stringify({ issue: { key: 'x', title: 'y'.repeat(3000) } });
    expect((await post('tracker', big, signed(big))).status).toBe(413);
    expect((await local.store.list({})).jobs).toHaveLength(0);
  });

  it('verifies the raw bytes: a body starting with a byte order mark', async () => {
    const body = Buffer.concat([
      Buffer.from([0xef, 0xbb, 0xbf]),
      Buffer.from(JSON.stringify({ workflow: 'patent-count', input: { query: 'bom' } })),
    ]);
    const headers = signed(body);
    const answer = await post('plain', body, headers);
    // Signed over the bytes as sent: the signature matches; the BOM makes it no JSON, so a 400.
    expect(answer.status).toBe(400);
    expect(answer.json.error.code).toBe('invalid-json');
  });

  it('needs no bearer token when the server has one (the signature authenticates)', async () => {
    await server.close();
    server = await startJobApiServer({
      deps,
      token: 'a-long-enough-serve-token-123456',
      mounts: [
        webhookMount(
          createWebhookHandler({
            deps,
            config,
            secrets: { get: async () => current, refresh: async () => current },
          }),
          config,
        ),
      ],
    });
    const body = JSON.stringify({ workflow: 'patent-count', input: { query: 'token' } });
    expect((await post('plain', body, signed(body))).status).toBe(202);
    expect((await fetch(`${server.url}/jobs`)).status).toBe(401);
  });
});
