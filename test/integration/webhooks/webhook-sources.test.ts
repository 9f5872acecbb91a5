// Webhook sources as the real `opflow serve` (bin/opflow.js) reads them: one source per secret whatever
// the spelling of its path, secrets checked when the server starts, the timestamp window as configured.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killRunningOpflows, type OpflowProcess, runOpflow } from '../../e2e/local/opflow-process';
import { childEnv, startServe } from '../../e2e/local/serve-process';

const secret = `whsec_${Buffer.from('a signing secret of thirty-two bytes!').toString('base64')}`;

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'opflow-webhook-sources-'));
});

afterAll(() => {
  killRunningOpflows();
  rmSync(dir, { recursive: true, force: true });
});

/** A fresh folder with this config file, and the environment of a server there. */
function place(name: string, config: unknown, extra: Record<string, string> = {}) {
  const cwd = join(dir, name);
  mkdirSync(cwd, { recursive: true });
  writeFileSync(join(cwd, 'opflow.config.json'), JSON.stringify(config));
  const env = childEnv({
    OPFLOW_DB: join(cwd, 'opflow.db'),
    OPFLOW_OUT: join(cwd, 'out'),
    OPFLOW_SANDBOX_SPEED: '1000',
    ...extra,
  });
  return { cwd, env };
}

function signed(body: string, id: string, at = Math.floor(Date.now() / 1000), key = secret) {
  return {
    'content-type': 'application/json',
    'webhook-id': id,
    'webhook-timestamp': String(at),
    'webhook-signature': new Webhook(key).sign(id, new Date(at * 1000), body),
  };
}

async function post(url: string, source: string, body: string, headers: Record<string, string>) {
  const answer = await fetch(`${url}/webhooks/${source}`, { method: 'POST', headers, body });
  return {
    status: answer.status,
    json: (await answer.json()) as { jobId?: string; created?: boolean; error?: { message: string } },
  };
}

describe('a webhook source is its secret, whatever the spelling of its path', () => {
  let serve: OpflowProcess;
  let url: string;
  let cwd: string;
  let env: NodeJS.ProcessEnv;
  beforeAll(async () => {
    ({ cwd, env } = place(
      'aliases',
      {
        webhooks: {
          'my-hook': { workflow: 'patent-count', input: { query: { $from: '/q' } }, tenant: 'acme' },
        },
      },
      { OPFLOW_WEBHOOK_SECRET_MY_HOOK: secret, OPFLOW_WEBHOOK_SECRET_PLAIN_HOOK: secret },
    ));
    ({ run: serve, url } = await startServe([], { env, cwd }));
  });
  afterAll(() => {
    serve.child.kill('SIGTERM');
    return serve.done;
  });

  it('refuses another spelling of a mapped source: no second job, no bypass of its mapping and tenant', async () => {
    const body = JSON.stringify({ q: 'solid-state battery' });
    const headers = signed(body, 'm1');
    const first = await post(url, 'my-hook', body, headers);
    expect(first.status).toBe(202);
    expect(first.json.created).toBe(true);
    const alias = await post(url, 'my_hook', body, headers);
    expect(alias.status).toBe(404);
    expect(alias.json.error?.message).toContain('no webhook source my_hook');
    // A job request through the alias would have fallen back to the default mapping and tenant.
    const request = JSON.stringify({ workflow: 'patent-count', input: { query: 'x' } });
    expect((await post(url, 'my_hook', request, signed(request, 'm2'))).status).toBe(404);
    const list = async (...args: string[]) =>
      JSON.parse((await runOpflow(['list', '--json', ...args], { env, cwd })).stdout) as { id: string }[];
    expect(await list()).toHaveLength(1);
    expect((await list('--tenant', 'acme')).map((job) => job.id)).toEqual([first.json.jobId]);
  });

  it('takes both spellings of an unmapped source as one source: a replay through the other finds the first job', async () => {
    const body = JSON.stringify({ workflow: 'patent-count', input: { query: 'heat pump' } });
    const headers = signed(body, 'r1');
    const first = await post(url, 'plain-hook', body, headers);
    const again = await post(url, 'plain_hook', body, headers);
    expect(first.status).toBe(202);
    expect(first.json.created).toBe(true);
    expect(again.status).toBe(202);
    expect(again.json).toMatchObject({ jobId: first.json.jobId, created: false });
  });
});

describe('opflow serve refuses, before it starts', () => {
  it('a config with two sources that share one secret variable', async () => {
    const { cwd, env } = place('two-spellings', {
      webhooks: { 'my-hook': { tenant: 'a' }, my_hook: { tenant: 'b' } },
    });
    const result = await runOpflow(['serve', '--port', '0'], { env, cwd });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('webhooks.my_hook');
    expect(result.stderr).toContain('OPFLOW_WEBHOOK_SECRET_MY_HOOK');
  });
});

describe('signing secrets are checked when they are read', () => {
  it.each([
    ['OPFLOW_CALLBACK_SECRET', 'abc', 'at least 24'],
    ['OPFLOW_CALLBACK_SECRET_ACME', 'whsec_c2hvcnQ=', 'at least 24'],
    ['OPFLOW_WEBHOOK_SECRET_MY_HOOK', 'whsec_not base64 at all!!', 'base64'],
    ['OPFLOW_WEBHOOK_SECRET_MY_HOOK', 'short one', 'at least 24'],
  ])('%s=%s stops opflow serve before it starts, naming the variable', async (variable, value, rule) => {
    const { cwd, env } = place(`secret-${variable}-${value.length}`, {}, { [variable]: value });
    const result = await runOpflow(['serve', '--port', '0'], { env, cwd });
    expect(result.code).toBe(5);
    expect(result.stderr).toContain(variable);
    expect(result.stderr).toContain(rule);
    expect(result.stderr).not.toContain(value);
    expect(result.stderr).not.toMatch(/^\s+at /m);
  });

  it('OPFLOW_CALLBACK_SECRET=abc stops a command that runs jobs', async () => {
    const { cwd, env } = place('callback-secret-run', {}, { OPFLOW_CALLBACK_SECRET: 'abc' });
    writeFileSync(join(cwd, 'q.json'), '{"query": "x"}');
    const result = await runOpflow(['run', 'patent-count', 'q.json'], { env, cwd });
    expect(result.code).toBe(5);
    expect(result.stderr).toContain(
      'OPFLOW_CALLBACK_SECRET is too short: 3 bytes; a key needs at least 24 bytes',
    );
  });

  it('opflow webhooks sign refuses a malformed secret, naming the variable', async () => {
    const { cwd, env } = place('sign-malformed', {}, { OPFLOW_WEBHOOK_SECRET_MY_HOOK: 'whsec_***' });
    writeFileSync(join(cwd, 'body.json'), '{}');
    const result = await runOpflow(['webhooks', 'sign', 'my-hook', 'body.json'], { env, cwd });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('OPFLOW_WEBHOOK_SECRET_MY_HOOK is not a usable signing secret');
  });
});

describe('a source’s timestamp window is the one configured', () => {
  let serve: OpflowProcess;
  let url: string;
  beforeAll(async () => {
    const { cwd, env } = place(
      'tolerance',
      { webhooks: { wide: { tolerance: '1h' }, narrow: { tolerance: '30s' } } },
      { OPFLOW_WEBHOOK_SECRET_WIDE: secret, OPFLOW_WEBHOOK_SECRET_NARROW: secret },
    );
    ({ run: serve, url } = await startServe([], { env, cwd }));
  });
  afterAll(() => {
    serve.child.kill('SIGTERM');
    return serve.done;
  });
  const body = JSON.stringify({ workflow: 'patent-count', input: { query: 'wind turbine' } });
  const now = () => Math.floor(Date.now() / 1000);

  it('takes a delivery 30 minutes old within a 1h window', async () => {
    const answer = await post(url, 'wide', body, signed(body, 'w1', now() - 1800));
    expect(answer.status, JSON.stringify(answer.json)).toBe(202);
  });

  it('refuses one outside the window saying by how much, not that the signature does not match', async () => {
    const past = await post(url, 'wide', body, signed(body, 'w2', now() - 7200));
    expect(past.status).toBe(401);
    expect(past.json.error?.message).toMatch(
      /webhook-timestamp is 7\d\d\d s in the past, outside the window of 1h/,
    );
    const future = await post(url, 'narrow', body, signed(body, 'n1', now() + 120));
    expect(future.status).toBe(401);
    expect(future.json.error?.message).toMatch(/1[12]\d s in the future, outside the window of 30s/);
  });

  it('still refuses a wrong signature, saying so', async () => {
    const headers = signed(body, 'w3', now(), `whsec_${Buffer.from('x'.repeat(32)).toString('base64')}`);
    const answer = await post(url, 'wide', body, headers);
    expect(answer.status).toBe(401);
    expect(answer.json.error?.message).toContain('no v1 signature');
  });
});

describe('GET /mcp', () => {
  it('is answered 405 at once instead of holding an event stream open', async () => {
    const { cwd, env } = place('mcp-get', {});
    const { run, url } = await startServe(['--mcp'], { env, cwd });
    try {
      const answer = await fetch(`${url}/mcp`, {
        headers: { accept: 'text/event-stream' },
        signal: AbortSignal.timeout(5000),
      });
      expect(answer.status).toBe(405);
      expect(answer.headers.get('allow')).toBe('POST');
      expect(await answer.text()).toContain('POST only');
    } finally {
      run.child.kill('SIGTERM');
      await run.done;
    }
  });
});
