// Text sent through the API (a job's label, a schedule's pause reason) is printed by the real
// `opflow list`, `opflow status` and `opflow schedules` (bin/opflow.js) with its control characters
// escaped: a terminal shows what was sent and obeys none of it.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killRunningOpflows, type OpflowProcess, runOpflow } from '../../e2e/local/opflow-process';
import { childEnv, startServe } from '../../e2e/local/serve-process';

/** Clears the screen, retitles the window, and hides the rest by reordering it (RTL override). */
const hostile = 'ok\u001b[2J\u001b]0;pwned\u0007\u009b31m\rover\u202Eevil\nline';
const shown = 'ok\\x1b[2J\\x1b]0;pwned\\x07\\x9b31m\\rover\\u202eevil\\nline';

let dir: string;
let env: NodeJS.ProcessEnv;
let serve: OpflowProcess;
let url: string;
let jobId: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'opflow-escapes-'));
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, 'opflow.config.json'),
    JSON.stringify({
      schedules: [{ name: 'daily', cron: '0 9 * * *', workflow: 'patent-count', input: { query: 'x' } }],
    }),
  );
  env = childEnv({
    OPFLOW_DB: join(dir, 'opflow.db'),
    OPFLOW_OUT: join(dir, 'out'),
    OPFLOW_SANDBOX_SPEED: '1000',
  });
  ({ run: serve, url } = await startServe([], { env, cwd: dir }));
  const created = await fetch(`${url}/jobs`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ workflow: 'patent-count', input: { query: 'hinge' }, label: hostile }),
  });
  expect(created.status).toBeLessThan(300);
  jobId = ((await created.json()) as { job: { id: string } }).job.id;
  const paused = await fetch(`${url}/schedules/daily/pause`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ reason: hostile }),
  });
  expect(paused.status).toBe(200);
});
afterAll(async () => {
  serve.child.kill('SIGTERM');
  await serve.done;
  killRunningOpflows();
  rmSync(dir, { recursive: true, force: true });
});

describe('outside text on the terminal', () => {
  it.each([
    ['list', ['list']],
    ['status', () => ['status', jobId]],
    ['schedules', ['schedules']],
  ] as const)('opflow %s escapes control characters', async (_name, args) => {
    const result = await runOpflow(typeof args === 'function' ? args() : [...args], { env, cwd: dir });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(shown);
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it looks for
    expect(result.stdout).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e]/);
  });

  it('--json keeps the text as sent (JSON escapes it)', async () => {
    const result = await runOpflow(['list', '--json'], { env, cwd: dir });
    expect((JSON.parse(result.stdout) as { label: string }[])[0]?.label).toBe(hostile);
  });
});
