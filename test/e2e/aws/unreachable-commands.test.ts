// Every `opflow --backend aws` command against a stack that is not all there, through the real bin:
// the emulators run (DynamoDB Local, fauxqs' SQS and S3, the Secrets Manager stand-in) with the job
// table, the work queue and the report bucket created, but no function reads them, and each row
// points one variable at a resource that does not exist (or leaves the function it needs missing).
// Each command exits non-zero on its own, with a message naming what is missing and what to run;
// the 60 s bound only guards against a hang (no time is asserted beyond it).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AwsEmulators, startAwsEmulators } from '../../../scripts/emulators/aws-emulators';
import { REAL_PROCESS_TIMEOUT_MS } from '../../support/timeouts';
import { childEnv, type OpflowResult, startOpflow } from '../local/opflow-process';

const SECRET_PREFIX = 'opflow/unreachable/api-key/';
const HANG_GUARD_MS = 60_000;

let emulators: AwsEmulators;
let dir: string;
let stack: Record<string, string>;

beforeAll(async () => {
  emulators = await startAwsEmulators();
  const table = await emulators.createTable();
  const queue = emulators.createQueue({ visibilityTimeoutSeconds: 60, maxReceiveCount: 3 });
  const bucket = emulators.createBucket();
  emulators.secretsManager!.setSecret(`${SECRET_PREFIX}default`, JSON.stringify({ apiKey: 'sk-sandbox-x' }));
  stack = {
    OPFLOW_TABLE_NAME: table,
    OPFLOW_QUEUE_URL: queue.queueUrl,
    OPFLOW_BUCKET_NAME: bucket,
    OPFLOW_API_KEY_SECRET_PREFIX: SECRET_PREFIX,
    OPFLOW_CALLBACK_SECRET_PREFIX: 'opflow/unreachable/callback-signing/',
    ...emulators.environment(),
  };
  dir = mkdtempSync(join(tmpdir(), 'opflow-e2e-unreachable-'));
  writeFileSync(
    join(dir, 'opflow.config.json'),
    JSON.stringify({
      schedules: [
        {
          name: 'daily-count',
          cron: '0 6 * * *',
          timezone: 'UTC',
          workflow: 'patent-count',
          input: { query: 'TTL:(pump)' },
        },
      ],
    }),
  );
  writeFileSync(join(dir, 'counts.jsonl'), `${JSON.stringify({ id: 'a', query: 'TTL:(drone)' })}\n`);
}, REAL_PROCESS_TIMEOUT_MS);

afterAll(async () => {
  await emulators?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** `opflow --backend aws <args>` with the stack's environment changed by `change`; killed past the hang guard. */
async function opflow(args: string[], change: Record<string, string> = {}): Promise<OpflowResult> {
  const started = startOpflow(['--backend', 'aws', ...args], {
    env: childEnv({ ...stack, ...change }),
    cwd: dir,
  });
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      started.child.kill('SIGKILL');
      reject(
        new Error(
          `opflow ${args.join(' ')} still ran after ${HANG_GUARD_MS / 1000} s:\n${started.stderrSoFar()}`,
        ),
      );
    }, HANG_GUARD_MS);
  });
  try {
    return await Promise.race([started.done, hung]);
  } finally {
    clearTimeout(timer);
  }
}

/** A query of its own per run: `opflow run` follows an earlier unfinished job of the same input. */
function query(name: string): string {
  const file = join(dir, `${name}.json`);
  writeFileSync(file, JSON.stringify({ query: `TTL:(${name})` }));
  return file;
}

const missingTable = { OPFLOW_TABLE_NAME: 'opflow-nowhere-jobs' };
const tableMessage =
  /^opflow: the job table opflow-nowhere-jobs \(OPFLOW_TABLE_NAME\) does not exist at http:\/\/127\.0\.0\.1:\d+ .*load its \.opflow\/aws-local\/aws-local\.env again, or start it$/m;

describe('opflow --backend aws, a stack not all there', { timeout: REAL_PROCESS_TIMEOUT_MS }, () => {
  it.each([
    ['list', ['list']],
    ['status', ['status', '01M8FG72JB9G0E23M5CFKHCMFY']],
    ['report', ['report', '01M8FG72JB9G0E23M5CFKHCMFY']],
    ['cancel', ['cancel', '01M8FG72JB9G0E23M5CFKHCMFY']],
    ['retry', ['retry', '01M8FG72JB9G0E23M5CFKHCMFY']],
    ['resume', ['resume', '01M8FG72JB9G0E23M5CFKHCMFY']],
    ['batch', ['batch']],
    ['batch <id>', ['batch', 'counts-1']],
    ['schedules', ['schedules']],
    ['callbacks resend', ['callbacks', 'resend', '01M8FG72JB9G0E23M5CFKHCMFY']],
    ['bulk', ['bulk', 'cancel', '--status', 'QUEUED', '--yes']],
    ['run', ['run', 'patent-count', 'table.json']],
    ['ingest', ['ingest', 'counts.jsonl', '--workflow', 'patent-count']],
  ])('%s: the job table missing is named, with what to run', async (_name, args) => {
    if (args[2] === 'table.json') args[2] = query('table');
    const result = await opflow(args, missingTable);
    expect(result.code, result.stderr).toBe(5);
    expect(result.stderr).toMatch(tableMessage);
    // Before anything is uploaded or submitted.
    expect(result.stderr).not.toMatch(/uploaded \d+ object/);
  });

  it('doctor: fails the job table check, naming it, and exits non-zero', async () => {
    const result = await opflow(['doctor'], missingTable);
    expect(result.code, result.stdout).toBe(5);
    expect(result.stdout).toMatch(/^ok +stack outputs: table opflow-nowhere-jobs,/m);
    expect(result.stdout).toMatch(/^fail +job table: /m);
  });

  it('run: the work queue missing is named', async () => {
    const queueUrl = stack.OPFLOW_QUEUE_URL!.replace(/[^/]+$/, 'opflow-nowhere-work');
    const result = await opflow(['run', 'patent-count', query('queue')], { OPFLOW_QUEUE_URL: queueUrl });
    expect(result.code, result.stderr).toBe(5);
    expect(result.stderr).toContain(
      `the work queue ${queueUrl} (OPFLOW_QUEUE_URL), or its dead-letter queue, does not exist`,
    );
    expect(result.stderr).toMatch(/load its \.opflow\/aws-local\/aws-local\.env again, or start it/);
  });

  it('ingest: the report bucket missing is named', async () => {
    const result = await opflow(['ingest', 'counts.jsonl', '--workflow', 'patent-count'], {
      OPFLOW_BUCKET_NAME: 'opflow-nowhere-reports',
    });
    expect(result.code, result.stderr).toBe(5);
    expect(result.stderr).toMatch(
      /the report bucket opflow-nowhere-reports \(OPFLOW_BUCKET_NAME\) does not exist at http:\/\/127\.0\.0\.1:\d+: .*start it/,
    );
  });

  it('run: no step worker reads the work queue, said within seconds; the job is kept', async () => {
    const result = await opflow(['run', 'patent-count', query('worker'), '--json']);
    expect(result.code, result.stderr).toBe(5);
    expect(result.stderr).toMatch(
      /no step worker received a message from the work queue \S+ \(OPFLOW_QUEUE_URL\) within 20 s: 1 message\(s\) waiting at http:\/\/127\.0\.0\.1:\d+, none in flight, no change to the job followed\. Start `npm run aws-local`, which runs the step worker .*then `opflow --backend aws status [0-9A-Z]{26}`: the job is kept/,
    );
    const id = /status ([0-9A-Z]{26})/.exec(result.stderr)?.[1] ?? '';
    const status = await opflow(['status', id, '--json']);
    expect(status.code, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({ id, status: 'QUEUED' });
  });

  it('ingest: no ingest function receives the upload, said within seconds', async () => {
    const result = await opflow([
      'ingest',
      'counts.jsonl',
      '--workflow',
      'patent-count',
      '--batch',
      'nobody',
    ]);
    expect(result.code, result.stderr).toBe(5);
    expect(result.stderr).toMatch(
      /batch nobody: no ingest function received the upload within 20 s\. .*`npm run aws-local`/,
    );
  });

  it("serve: refused at once, saying that the job API of aws is the stack's", async () => {
    const result = await opflow(['serve', '--port', '0']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      "opflow serve runs jobs on the local backend; on aws the job API is the stack's HTTP API",
    );
  });

  it('doctor: fails a tenant whose secret holds no key, with the command that fixes it, and shows no key', async () => {
    emulators.secretsManager!.setSecret(`${SECRET_PREFIX}acme`, '');
    const result = await opflow(['doctor']);
    expect(result.code, result.stdout).toBe(5);
    expect(result.stdout).toMatch(
      /^ok +tenant default: secret opflow\/unreachable\/api-key\/default holds a key$/m,
    );
    expect(result.stdout).toMatch(
      /^fail +tenant acme: secret opflow\/unreachable\/api-key\/acme holds no key: this tenant's jobs fail at their first call$/m,
    );
    expect(result.stdout).toContain(`aws secretsmanager put-secret-value --secret-id ${SECRET_PREFIX}acme`);
    expect(result.stdout + result.stderr).not.toContain('sk-sandbox-x');
  });

  it('any command: the emulators gone is said, with what to start', async () => {
    const result = await opflow(['list'], {
      AWS_ENDPOINT_URL_DYNAMODB: 'http://127.0.0.1:9',
    });
    expect(result.code).toBe(5);
    expect(result.stderr).toMatch(/nothing listens at 127\.0\.0\.1:9; .*start it/);
  });
});
