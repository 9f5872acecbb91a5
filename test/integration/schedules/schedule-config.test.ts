// A schedule that could never create its job stops the real `opflow serve` (bin/opflow.js) before it
// starts, naming the schedule and the field, instead of failing quietly at every slot.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { childEnv, runOpflow } from '../../e2e/local/opflow-process';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'opflow-schedule-config-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const schedule = (fields: Record<string, unknown>) => ({
  schedules: [
    { name: 'fine', cron: '0 9 * * *', workflow: 'patent-count', input: { query: 'x' } },
    { name: 'daily', cron: '0 9 * * *', workflow: 'patent-count', input: { query: 'x' }, ...fields },
  ],
});

describe('opflow serve checks every schedule when the config loads', () => {
  it.each([
    ['an input its workflow refuses', { input: { qury: 'x' } }, 'schedules[1].input'],
    ['an input of the wrong type', { input: 'battery' }, 'schedules[1].input'],
    [
      'a callbackUrl over plain http',
      { callbackUrl: 'http://hooks.example.com/x' },
      'schedules[1].callbackUrl',
    ],
    [
      'a callbackUrl at a metadata address',
      { callbackUrl: 'https://169.254.169.254/' },
      'schedules[1].callbackUrl',
    ],
    ['a callbackUrl that is not a URL', { callbackUrl: 'soon' }, 'schedules[1].callbackUrl'],
    [
      'a 7-field cron',
      { cron: '0 0 9 * * * 2030' },
      'schedules[1].cron: is not a cron expression: it has 7 fields',
    ],
    ['a cron that never fires', { cron: '0 0 30 2 *' }, 'schedules[1].cron: names no time'],
    ['a jitter of 100000d', { jitter: '100000d' }, 'schedules[1].jitter: must be at most 1d'],
    [
      'a jitter over the period',
      { cron: '*/5 * * * *', jitter: '10m' },
      'schedules[1].jitter: must be at most 5m',
    ],
  ])('%s', async (_name, fields, names) => {
    const cwd = join(dir, names.replace(/\W+/g, '-') + Object.keys(fields).join('-'));
    mkdirSync(cwd, { recursive: true });
    writeFileSync(join(cwd, 'opflow.config.json'), JSON.stringify(schedule(fields)));
    const env = childEnv({ OPFLOW_DB: join(cwd, 'opflow.db'), OPFLOW_OUT: join(cwd, 'out') });
    const result = await runOpflow(['serve', '--port', '0'], { env, cwd });
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toContain(`opflow.config.json: ${names}`);
    expect(result.stderr).not.toMatch(/^\s+at /m);
    // The same config is refused by `opflow schedules`, which would otherwise list it as fine.
    const listed = await runOpflow(['schedules'], { env, cwd });
    expect(listed.code).toBe(2);
    expect(listed.stderr).toContain(names);
  });
});

describe('the config file is read by the bounded-read rule', () => {
  const run = (
    name: string,
    files: (cwd: string) => void,
    args: string[],
    extra: Record<string, string> = {},
  ) => {
    const cwd = join(dir, `file-${name}`);
    mkdirSync(cwd, { recursive: true });
    files(cwd);
    const env = childEnv({ OPFLOW_DB: join(cwd, 'opflow.db'), OPFLOW_OUT: join(cwd, 'out'), ...extra });
    return runOpflow(args, { env, cwd });
  };

  it.each([
    ['/dev/zero', () => undefined, '/dev/zero', 'not a regular file'],
    [
      'a FIFO',
      (cwd: string) => execFileSync('mkfifo', [join(cwd, 'fifo.json')]),
      'fifo.json',
      'not a regular file',
    ],
    [
      'a folder',
      (cwd: string) => mkdirSync(join(cwd, 'folder.json')),
      'folder.json',
      'is a folder, not a file',
    ],
    [
      'a file over 1 MB',
      (cwd: string) =>
        writeFileSync(join(cwd, 'big.json'), `{"schedules": []${' '.repeat(2 * 1024 * 1024)}}`),
      'big.json',
      'too large',
    ],
    [
      'a UTF-16 file',
      (cwd: string) => writeFileSync(join(cwd, 'wide.json'), Buffer.from('\ufeff{}', 'utf16le')),
      'wide.json',
      'is not UTF-8 text',
    ],
  ])(
    'OPFLOW_CONFIG naming %s is refused at once, naming the variable and the path',
    async (_name, make, path, reason) => {
      const started = Date.now();
      const result = await run(_name.replace(/\W+/g, '-'), make, ['schedules'], { OPFLOW_CONFIG: path });
      expect(result.code, result.stderr).toBe(2);
      expect(result.stderr).toContain(`OPFLOW_CONFIG: ${path}: `);
      expect(result.stderr).toContain(reason);
      expect(result.stderr).not.toMatch(/^\s+at /m);
      expect(Date.now() - started).toBeLessThan(15_000);
    },
  );

  it('--config naming a folder says so, naming the flag', async () => {
    const result = await run('flag-folder', (cwd) => mkdirSync(join(cwd, 'conf')), [
      'schedules',
      '--config',
      'conf',
    ]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      '--config: conf: cannot be read as the config file: is a folder, not a file',
    );
    expect(result.stderr).not.toContain('EISDIR');
  });

  it('reads a config that starts with a byte-order mark', async () => {
    const config = JSON.stringify(schedule({}));
    const result = await run(
      'bom',
      (cwd) => writeFileSync(join(cwd, 'opflow.config.json'), `\ufeff${config}`),
      ['schedules', '--json'],
    );
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('"daily"');
  });
});
