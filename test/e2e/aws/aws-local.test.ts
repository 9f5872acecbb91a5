// `npm run aws-local` as a user runs it: the script starts the emulators and all seven bundled
// functions, prints the environment, and the real `opflow --backend aws` with that environment runs a
// job through the step worker, a manifest through the ingest function, a signed webhook through the
// webhooks function and a schedule's slot through the schedules function; a command whose function is not
// there fails within seconds naming it; SIGTERM then stops everything, and a command after it says
// what to start. `npm run smoke:aws` runs one job of each workflow through its job API, from its outputs file.
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workflows } from '../../../shared/workflows';
import { freshFetch } from '../../support/fresh-fetch';
import { REAL_PROCESS_TIMEOUT_MS } from '../../support/timeouts';
import { childEnv, repoRoot, runOpflow } from '../local/opflow-process';

const webhookSecret = `whsec_${randomBytes(24).toString('base64')}`;
let dir: string;
let child: ChildProcess;
let stderr = '';
let stdout = '';
let exited: Promise<number | null>;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'opflow-aws-local-'));
  // The config file the functions serve: a schedule every minute and one webhook source.
  writeFileSync(
    join(dir, 'opflow.config.json'),
    JSON.stringify({
      schedules: [
        {
          name: 'minutely-count',
          cron: '* * * * *',
          timezone: 'UTC',
          workflow: 'patent-count',
          input: { query: 'TTL:(heat pump)' },
        },
      ],
      webhooks: {
        tracker: { workflow: 'patent-count', input: { query: { $from: '/issue/title' } } },
      },
    }),
  );
  const env = childEnv({ OPFLOW_WEBHOOK_SECRET_TRACKER: webhookSecret });
  delete env.OPFLOW_API_KEY;
  child = spawn(
    process.execPath,
    [
      // tsx from this repository: the child runs in a folder of its own, as a user's project would.
      '--import',
      pathToFileURL(join(repoRoot, 'node_modules', 'tsx', 'dist', 'loader.mjs')).href,
      join(repoRoot, 'scripts/aws-local.ts'),
      '--dir',
      join(dir, 'state'),
      '--workers',
      '1',
      '--sandbox-speed',
      '1000',
    ],
    { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] },
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

/** `npm run smoke:aws -- <args>` as a user runs it (tsx from this repository), signed with test credentials. */
function runSmoke(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const smoke = spawn(
    process.execPath,
    [
      '--import',
      pathToFileURL(join(repoRoot, 'node_modules', 'tsx', 'dist', 'loader.mjs')).href,
      join(repoRoot, 'scripts/smoke-aws.ts'),
      ...args,
    ],
    {
      cwd: dir,
      env: childEnv({ AWS_ACCESS_KEY_ID: 'test', AWS_SECRET_ACCESS_KEY: 'test', AWS_REGION: 'us-east-1' }),
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  let err = '';
  smoke.stdout?.on('data', (chunk: Buffer) => {
    out += chunk.toString('utf8');
  });
  smoke.stderr?.on('data', (chunk: Buffer) => {
    err += chunk.toString('utf8');
  });
  return new Promise((resolve) => smoke.on('close', (code) => resolve({ code, stdout: out, stderr: err })));
}

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
    // One upstream call per job: this checks the wiring; the e2e suites beside it check the workflows.
    writeFileSync(join(dir, 'count.json'), JSON.stringify({ query: 'TTL:(solid-state battery)' }));
    const result = await runOpflow(['--backend', 'aws', 'run', 'patent-count', 'count.json', '--json'], {
      env: childEnv(stackEnv()),
      cwd: dir,
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('SUCCEEDED');
    // The step worker's logs went to the log file, not the terminal.
    expect(readFileSync(join(dir, 'state', 'functions.log'), 'utf8')).toContain('"service":"opflow"');
  });

  it('ingests a manifest through the ingest function (opflow --backend aws ingest)', async () => {
    mkdirSync(join(dir, 'counts'));
    writeFileSync(
      join(dir, 'counts', 'counts.jsonl'),
      `${JSON.stringify({ id: 'a', query: 'TTL:(drone)' })}\n${JSON.stringify({ id: 'b', query: 'TTL:(pump)' })}\n`,
    );
    const result = await runOpflow(
      ['--backend', 'aws', 'ingest', 'counts/counts.jsonl', '--workflow', 'patent-count', '--json'],
      { env: childEnv(stackEnv()), cwd: dir },
    );
    expect(result.code, result.stderr).toBe(0);
    const answer = JSON.parse(result.stdout) as { batch: { totals: { succeeded: number } }; end: string };
    expect(answer.batch.totals.succeeded).toBe(2);
  });

  it('fails within seconds, naming what is missing, when no ingest function receives the upload', async () => {
    // S3 straight at fauxqs (which serves SQS and S3 at one address), past the proxy that sends the
    // bucket's event notification: the upload lands, and no function hears of it.
    const env = stackEnv();
    const started = Date.now();
    const result = await runOpflow(
      [
        '--backend',
        'aws',
        'ingest',
        'counts/counts.jsonl',
        '--workflow',
        'patent-count',
        '--batch',
        'nobody',
      ],
      { env: childEnv({ ...env, AWS_ENDPOINT_URL_S3: env.AWS_ENDPOINT_URL_SQS! }), cwd: dir },
    );
    expect(Date.now() - started).toBeLessThan(45_000);
    expect(result.code).toBe(5);
    expect(result.stderr).toMatch(
      /batch nobody: no ingest function received the upload within 20 s\. Check the report bucket's event notification for inbox\/.*`npm run aws-local`/,
    );
  });

  it('answers a signed webhook through the webhooks function, with the mapping of the config file', async () => {
    const env = stackEnv();
    const body = JSON.stringify({ issue: { title: 'TTL:(insulin pen)' } });
    const at = new Date();
    const response = await freshFetch(`${env.OPFLOW_API_URL}/webhooks/tracker`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'webhook-id': 'msg_aws_local_1',
        'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
        'webhook-signature': new Webhook(webhookSecret).sign('msg_aws_local_1', at, body),
      },
      body,
    });
    expect(response.status).toBe(202);
    const { jobId } = (await response.json()) as { jobId: string };
    // Answered by the route's own function, as the stack integrates it, not by the api function.
    const answeredBy = readFileSync(join(dir, 'state', 'functions.log'), 'utf8')
      .split('\n')
      .filter((line) => line.includes('"message":"webhook"'))
      .map((line) => (JSON.parse(line) as { function_name?: string }).function_name);
    expect(answeredBy).toEqual(['opflow-webhooks']);
    // The job runs through the step worker; the job API says when it is done.
    let status = '';
    for (let tries = 0; tries < 60 && status !== 'SUCCEEDED'; tries++) {
      if (tries > 0) await new Promise((resolve) => setTimeout(resolve, 1_000));
      const job = await freshFetch(`${env.OPFLOW_API_URL}/jobs/${jobId}`);
      status = ((await job.json()) as { job: { status: string } }).job.status;
    }
    expect(status).toBe('SUCCEEDED');
  });

  it("fires the config file's schedule through the schedules function, at its slot", async () => {
    const env = childEnv(stackEnv());
    // Every minute: within 70 s a slot has fired and its job is listed with the schedule.
    const deadline = Date.now() + 75_000;
    let last: { lastJob?: { status: string } } | undefined;
    while (Date.now() < deadline) {
      const listed = await runOpflow(['--backend', 'aws', 'schedules', '--json'], { env, cwd: dir });
      expect(listed.code, listed.stderr).toBe(0);
      last = (JSON.parse(listed.stdout) as { schedules: { lastJob?: { status: string } }[] }).schedules[0];
      if (last?.lastJob?.status === 'SUCCEEDED') break;
      await new Promise((resolve) => setTimeout(resolve, 3_000));
    }
    expect(last?.lastJob?.status).toBe('SUCCEEDED');
  });

  it('opflow --backend aws doctor finds the stack whole: outputs, table, queues, bucket, the tenant key', async () => {
    const result = await runOpflow(['--backend', 'aws', 'doctor', '--json'], {
      env: childEnv(stackEnv()),
      cwd: dir,
    });
    expect(result.code, result.stdout + result.stderr).toBe(0);
    const { checks } = JSON.parse(result.stdout) as { checks: { name: string; status: string }[] };
    expect(checks.map((check) => check.name)).toEqual([
      'stack outputs',
      'job table',
      'work queue',
      'report bucket',
      'tenant default',
      // The alarm topic and the functions are read with a deployed stack's outputs file only.
      'account',
    ]);
    expect(checks.every((check) => check.status === 'ok')).toBe(true);
    // The key is read, never shown.
    expect(result.stdout).not.toContain('sk-');
  });

  it('npm run smoke:aws runs one job of each workflow through the job API, reading the stack outputs file', async () => {
    const outputs = join(dir, 'state', 'outputs.json');
    const smoke = await runSmoke(['--stack', 'opflow-local', '--outputs', outputs, '--deadline', '240']);
    expect(smoke.code, `${smoke.stdout}\n${smoke.stderr}`).toBe(0);
    const rows = smoke.stdout
      .split('\n')
      .filter((line) => /^\| [a-z0-9-]+ \| /.test(line) && !line.startsWith('| workflow |'));
    expect(rows.map((row) => row.split(' | ')[0]?.slice(2))).toEqual([...workflows.keys()]);
    for (const row of rows)
      expect(row).toMatch(/\| SUCCEEDED \| [1-9]\d* \| \d+ \| [\d.]+ \| \d+ \| ok: report stored/);
    // Manual selection, answered through the API: a novelty check offers its features.
    expect(rows.find((row) => row.startsWith('| novelty-check '))).toMatch(/\| [1-9] \| ok/);
    expect(smoke.stdout).toContain(`${workflows.size} of ${workflows.size} workflows passed`);
    // A job past its deadline is cancelled and fails the run; a stack not in the file is named.
    const late = await runSmoke([
      '--stack',
      'opflow-local',
      '--outputs',
      outputs,
      '--workflows',
      'patent-count',
      '--deadline',
      '0.001',
    ]);
    expect(late.code).toBe(1);
    expect(late.stdout).toMatch(/\| patent-count \| timed out \|.*FAIL: still \w+ .*cancelled/);
    const missing = await runSmoke(['--stack', 'opflow-nowhere', '--outputs', outputs]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('no stack opflow-nowhere (it has opflow-local)');
  });

  it('stops everything on SIGTERM', async () => {
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(stderr).toMatch(/aws-local: stopping/);
  });

  it('says what to start when a command finds the emulators gone', async () => {
    const started = Date.now();
    const result = await runOpflow(['--backend', 'aws', 'list'], { env: childEnv(stackEnv()), cwd: dir });
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(result.code).toBe(5);
    expect(result.stderr).toMatch(/nothing listens at 127\.0\.0\.1:\d+; .*start it/);
  });
});

/** The environment aws-local wrote for `opflow --backend aws`. */
function stackEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of readFileSync(join(dir, 'state', 'aws-local.env'), 'utf8').split('\n')) {
    const at = line.indexOf('=');
    if (at > 0) env[line.slice(0, at)] = line.slice(at + 1);
  }
  return env;
}
