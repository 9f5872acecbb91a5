// Callback URLs at IPv6 forms that carry or reach an IPv4 address (SIIT, Teredo, NAT64 outside its
// well-known /96, 6to4, ISATAP) are refused by the real `opflow serve` (bin/opflow.js) when the job
// is created, naming callbackUrl, and no job is made.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killRunningOpflows, type OpflowProcess, runOpflow } from '../../e2e/local/opflow-process';
import { childEnv, startServe } from '../../e2e/local/serve-process';

let dir: string;
let env: NodeJS.ProcessEnv;
let serve: OpflowProcess;
let url: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'opflow-callback-urls-'));
  env = childEnv({ OPFLOW_DB: join(dir, 'opflow.db'), OPFLOW_OUT: join(dir, 'out') });
  ({ run: serve, url } = await startServe([], { env, cwd: dir }));
});
afterAll(async () => {
  serve.child.kill('SIGTERM');
  await serve.done;
  killRunningOpflows();
  rmSync(dir, { recursive: true, force: true });
});

describe('POST /jobs refuses a callbackUrl at an IPv4-embedding IPv6 form', () => {
  it.each([
    ['SIIT, loopback', 'https://[::ffff:0:7f00:1]/'],
    ['SIIT, metadata', 'https://[::ffff:0:a9fe:a9fe]/latest/meta-data'],
    ['Teredo', 'https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/'],
    ['Teredo of loopback', 'https://[2001:0:4136:e378:8000:63bf:80ff:fffe]:8443/'],
    ['NAT64 local-use', 'https://[64:ff9b:1::a9fe:a9fe]/'],
    ['NAT64 of loopback', 'https://[64:ff9b::127.0.0.1]/'],
    ['6to4 of a private address', 'https://[2002:c0a8:101::1]/'],
    ['ISATAP of loopback', 'https://[2607:f8b0::5efe:7f00:1]/'],
  ])('%s: %s', async (_form, callbackUrl) => {
    const answer = await fetch(`${url}/jobs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ workflow: 'patent-count', input: { query: 'hinge' }, callbackUrl }),
    });
    const body = (await answer.json()) as { error: { message: string } };
    expect(answer.status, JSON.stringify(body)).toBe(400);
    expect(body.error.message).toContain('callbackUrl');
    expect(body.error.message).toMatch(/loopback, private, link-local, multicast or metadata address/);
  });

  it('made no job', async () => {
    const listed = await runOpflow(['list', '--json'], { env, cwd: dir });
    expect(JSON.parse(listed.stdout)).toEqual([]);
  });
});
