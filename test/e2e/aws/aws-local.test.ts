// `npm run aws-local` as a user runs it: the script starts the emulators and the bundled functions,
// prints the environment, and a real `opflow --backend aws run` with that environment runs a job to
// the end through the step worker it drives; SIGTERM then stops everything.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REAL_PROCESS_TIMEOUT_MS } from '../../support/timeouts';
import { childEnv, repoRoot, runOpflow } from '../local/opflow-process';

let dir: string;
let child: ChildProcess;
let stderr = '';
let stdout = '';
let exited: Promise<number | null>;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'opflow-aws-local-'));
  const env = childEnv({});
  delete env.OPFLOW_API_KEY;
  child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      'scripts/aws-local.ts',
      '--dir',
      join(dir, 'state'),
      '--workers',
      '1',
      '--sandbox-speed',
      '1000',
    ],
    { cwd: repoRoot, env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
  // The environment block ends with OPFLOW_API_URL; the ready line on stderr may overtake it.
  const stdoutComplete = new Promise<void>((resolve) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
      if (/^export OPFLOW_API_URL=/m.test(stdout)) resolve();
    });
  });
  await new Promise<void>((resolve, reject) => {
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
      if (/aws-local: ready/.test(stderr)) stdoutComplete.then(resolve, reject);
      if (/aws-local: failed/.test(stderr)) reject(new Error(stderr));
    });
    child.on('exit', (code) => reject(new Error(`aws-local exited ${code} before it was ready:\n${stderr}`)));
  });
}, REAL_PROCESS_TIMEOUT_MS);

afterAll(async () => {
  if (child && child.exitCode === null) child.kill('SIGKILL');
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('npm run aws-local', { timeout: REAL_PROCESS_TIMEOUT_MS }, () => {
  it('prints the environment of the stack it runs, and writes it to a file', () => {
    const file = readFileSync(join(dir, 'state', 'aws-local.env'), 'utf8');
    for (const name of [
      'OPFLOW_TABLE_NAME',
      'OPFLOW_QUEUE_URL',
      'OPFLOW_BUCKET_NAME',
      'AWS_ENDPOINT_URL_SQS',
    ]) {
      expect(file).toMatch(new RegExp(`^${name}=.+$`, 'm'));
      expect(stdout).toMatch(new RegExp(`^export ${name}=.+$`, 'm'));
    }
  });

  it('runs a job with opflow --backend aws run through the functions it drives', async () => {
    const env: Record<string, string> = {};
    for (const line of readFileSync(join(dir, 'state', 'aws-local.env'), 'utf8').split('\n')) {
      const at = line.indexOf('=');
      if (at > 0) env[line.slice(0, at)] = line.slice(at + 1);
    }
    // One upstream call per job: this checks the wiring; the e2e suites beside it check the workflows.
    writeFileSync(join(dir, 'count.json'), JSON.stringify({ query: 'TTL:(solid-state battery)' }));
    const result = await runOpflow(['--backend', 'aws', 'run', 'patent-count', 'count.json', '--json'], {
      env: childEnv(env),
      cwd: dir,
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('SUCCEEDED');
    // The step worker's logs went to the log file, not the terminal.
    expect(readFileSync(join(dir, 'state', 'functions.log'), 'utf8')).toContain('"service":"opflow"');
  });

  it('stops everything on SIGTERM', async () => {
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(stderr).toMatch(/aws-local: stopping/);
  });
});
