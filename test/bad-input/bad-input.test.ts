// The bad-input suite (see README.md beside this file): every boundary fed input it must refuse.
// Each row asserts the exit code or HTTP status and that the message names the field, flag, line
// or file at fault; no row may print a stack trace or hang (each has its own time limit); valid
// jobs created before any bad input are unchanged at the end.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type {
  APIGatewayProxyEventV2,
  APIGatewayProxyStructuredResultV2,
  Context,
  SQSEvent,
} from 'aws-lambda';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { lambdaContext } from '../../scripts/lambda/lambda-events';
import { createLocalBackend, type LocalBackend } from '../../shared/backends/local';
import { main } from '../../shared/cli/main';
import { parseOpflowConfig } from '../../shared/config/opflow-config';
import type { EngineDeps } from '../../shared/engine/deps';
import { submitJob } from '../../shared/engine/job-commands';
import type { Job } from '../../shared/engine/job-record';
import { type JobApiServer, startJobApiServer } from '../../shared/http/node-server';
import { webhookMount } from '../../shared/http/webhook-mount';
import { createWebhookHandler, envWebhookSecrets } from '../../shared/http/webhooks';
import { writeJobReport } from '../../shared/reports/write-job-report';
import { createApiHandler } from '../../shared/runtime/lambda/api';
import { createObservability } from '../../shared/runtime/lambda/observability';
import { createStepWorker } from '../../shared/runtime/lambda/step-worker';
import { workflows } from '../../shared/workflows';
import { contractJob } from '../contract/ports.contract';
import { captureIo } from '../unit/cli/capture-io';
import { cliArgRows } from './rows/cli-args';
import { configFileReadRows, signingSecretRows } from './rows/config-files';
import { configFileRows, environmentRows } from './rows/environment';
import { inputFileRows } from './rows/input-files';
import { ipWorkflowApiRows, ipWorkflowCliRows } from './rows/ip-workflows';
import { jobApiRows as generalJobApiRows } from './rows/job-api';
import { apiGatewayRows, sqsRows } from './rows/lambda-events';
import { manifestRows } from './rows/manifests';
import { readRows } from './rows/reads';
import { scheduleRows } from './rows/schedules';
import type { CliRow, FileSpec, HttpRow } from './rows/types';
import { type WebhookRow, webhookConfig, webhookRows, webhookSecret } from './rows/webhooks';

/** The rows of every command-line boundary; other engineers' boundaries add their arrays here. */
const cliBoundaries: Record<string, CliRow[]> = {
  'command-line arguments': cliArgRows,
  'input files and standard input': inputFileRows,
  'environment variables': environmentRows,
  'configuration files': configFileRows,
  'manifests and document folders (opflow ingest)': manifestRows,
  'reads that would hang, bombs and names no job could have': readRows,
  'the config file as a file (--config, OPFLOW_CONFIG)': configFileReadRows,
  'signing secrets (OPFLOW_CALLBACK_SECRET*, OPFLOW_WEBHOOK_SECRET_*)': signingSecretRows,
  'schedules and webhook sources in the config file': scheduleRows,
  'design images and patents named for comparison (opflow run)': ipWorkflowCliRows,
};

const jobApiRows = [...generalJobApiRows, ...ipWorkflowApiRows];

/** A stack trace line, as node prints them. */
const stackLine = /^\s+at .+(:\d+:\d+\)?|\(native\))$/m;
const rowTimeout = 60_000;

let root: string;
let rowCount = 0;

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'opflow-bad-input-'));
});
afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});

function makeFiles(dir: string, files: Record<string, FileSpec>): void {
  for (const [name, spec] of Object.entries(files)) {
    const path = join(dir, name);
    mkdirSync(dirname(path), { recursive: true });
    if (typeof spec === 'string' || Buffer.isBuffer(spec)) writeFileSync(path, spec);
    else if ('fifo' in spec) execFileSync('mkfifo', [path]);
    else if ('symlink' in spec) symlinkSync(spec.symlink, path);
    else mkdirSync(path, { recursive: true });
  }
}

const fill = (text: string, dir: string) => text.split('{dir}').join(dir);

describe.each(Object.entries(cliBoundaries))('bad input at the CLI: %s', (_boundary, rows) => {
  const sharedDb = () => join(root, 'cli', 'state', 'opflow.db');
  let keep: Job[] = [];

  beforeAll(async () => {
    // Valid jobs that no bad input may touch: one finished, one waiting for a person.
    const local = createLocalBackend({ dbPath: sharedDb(), outDir: join(root, 'cli', 'out') });
    try {
      keep = [
        contractJob({ status: 'SUCCEEDED', finishedAt: Date.now() }),
        contractJob({ status: 'AWAITING_INPUT', deadlineAt: Date.now() + 30 * 86_400_000 }),
      ];
      for (const job of keep) await local.store.create(job);
    } finally {
      local.close();
    }
  });
  afterAll(() => {
    const local = createLocalBackend({ dbPath: sharedDb(), outDir: join(root, 'cli', 'out') });
    try {
      return Promise.all(
        keep.map(async (job) => expect(await local.store.get(job.id), `valid job ${job.id}`).toEqual(job)),
      ).then(() => undefined);
    } finally {
      // Closed once the comparisons above have read.
      setTimeout(() => local.close(), 0);
    }
  });

  it.each(rows.map((row, index) => [row.name, row, index] as const))(
    '%s',
    { timeout: rowTimeout },
    async (_name, row, index) => {
      rowCount += 1;
      const dir = join(root, 'cli', `case-${_boundary.replace(/\W+/g, '-')}-${index}`);
      mkdirSync(dir, { recursive: true });
      makeFiles(dir, row.files ?? {});
      const env: Record<string, string> = {
        OPFLOW_DB: sharedDb(),
        OPFLOW_OUT: join(root, 'cli', 'out'),
        OPFLOW_SANDBOX_SPEED: '1000',
      };
      for (const [name, value] of Object.entries(row.env ?? {})) env[name] = fill(value, dir);
      const args = row.args.map((arg) => fill(arg, dir));
      for (const json of [false, true]) {
        const io = captureIo({ env, cwd: dir, stdin: row.stdin });
        const code = await main(['node', 'opflow', ...(json ? ['--json'] : []), ...args], { io });
        const output = `${io.out()}\n${io.err()}`;
        expect(code, `${json ? '--json ' : ''}${args.join(' ')}\n${output}`).toBe(row.exit);
        expect(output).not.toMatch(stackLine);
        for (const secret of row.never ?? []) expect(output).not.toContain(secret);
        // The message is on standard error, and with --json also in the JSON error (unless commander refused the line).
        // In a JSON answer a name's quotes are escaped: read them as a person would.
        const message = row.namesIn === 'output' ? output.replace(/\\"/g, '"') : io.err();
        for (const name of row.names) {
          if (typeof name === 'string') expect(message).toContain(fill(name, dir));
          else expect(message).toMatch(name);
        }
        if (!json) for (const text of row.stdout ?? []) expect(io.out()).toMatch(text);
        if (json && row.json) expect(JSON.parse(io.out())).toMatchObject(row.json);
        if (json && !/^opflow: (unknown|missing|error: )|option|argument|command/.test(message)) {
          const last = io.out().trim().split('\n').at(-1) ?? '';
          if (last.startsWith('{"error"')) {
            expect((JSON.parse(last) as { error: { exitCode: number } }).error.exitCode).toBe(row.exit);
          }
        }
      }
    },
  );
});

describe('bad input at the job API (HTTP) and the Lambda handlers', () => {
  let local: LocalBackend;
  let deps: EngineDeps;
  let server: JobApiServer;
  let queued: Job;
  let succeeded: Job;
  let awaiting: Job;
  let snapshot: Job[];

  beforeAll(async () => {
    const dir = join(root, 'api');
    local = createLocalBackend({ dbPath: join(dir, 'jobs.db'), outDir: join(dir, 'out') });
    deps = {
      store: local.store,
      queue: local.queue,
      reports: local.reports,
      keys: { getKey: async () => undefined, refresh: async () => undefined },
      rateLimiter: local.rateLimiter,
      clock: { now: () => Date.now() },
      random: () => 0.5,
      client: {} as EngineDeps['client'],
      workflows,
      writeReport: writeJobReport,
    };
    queued = (
      await submitJob(deps, {
        workflow: 'patent-count',
        input: { query: 'TTL:(hinge)' },
        source: 'api',
        idempotencyKey: 'bad-input-suite-key',
      })
    ).job;
    succeeded = contractJob({ status: 'SUCCEEDED', finishedAt: Date.now() });
    succeeded.outputs = [`reports/${succeeded.id}/report.md`];
    await local.reports.put(succeeded.outputs[0]!, '# Report', 'text/markdown; charset=utf-8');
    awaiting = contractJob({ status: 'AWAITING_INPUT', deadlineAt: Date.now() + 30 * 86_400_000 });
    for (const job of [succeeded, awaiting]) await local.store.create(job);
    snapshot = await Promise.all(
      [queued, succeeded, awaiting].map(async (job) => (await local.store.get(job.id))!),
    );
    const config = parseOpflowConfig(webhookConfig, 'opflow.config.json', workflows);
    const secrets = envWebhookSecrets({
      OPFLOW_WEBHOOK_SECRET_MY_TRACKER: webhookSecret,
      OPFLOW_WEBHOOK_SECRET_NARROW: webhookSecret,
      OPFLOW_WEBHOOK_SECRET_PLAIN: webhookSecret,
    });
    const webhooks = createWebhookHandler({ deps, config, secrets, ratePerSecond: 1000 });
    server = await startJobApiServer({ deps, mounts: [webhookMount(webhooks, config)] });
  });
  afterAll(async () => {
    await server?.close();
    for (const job of snapshot) expect(await local.store.get(job.id), `valid job ${job.id}`).toEqual(job);
    expect((await local.store.list({ limit: 100 })).jobs).toHaveLength(3);
    local.close();
  });

  const send = (row: HttpRow): Promise<{ status: number; body: string }> =>
    new Promise((resolve, reject) => {
      const path = row.path.replace('{job}', queued.id).replace('{succeeded}', succeeded.id);
      const headers: Record<string, string> = {};
      let body: Buffer | undefined;
      if (row.body !== undefined) {
        if (Buffer.isBuffer(row.body)) body = row.body;
        else if (typeof row.body === 'string') body = Buffer.from(row.body);
        else body = Buffer.from(JSON.stringify(row.body));
        headers['content-type'] = 'application/json';
      }
      Object.assign(headers, row.headers);
      if (headers['content-type'] === '') delete headers['content-type'];
      if (body) headers['content-length'] = String(body.byteLength);
      const req = httpRequest(
        { host: '127.0.0.1', port: server.port, method: row.method, path, headers },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () =>
            resolve({ status: res.statusCode!, body: Buffer.concat(chunks).toString('utf8') }),
          );
        },
      );
      req.on('error', reject);
      req.end(body);
    });

  it.each(jobApiRows.map((row) => [`${row.method} ${row.name}`, row] as const))(
    'HTTP: %s',
    { timeout: rowTimeout },
    async (_name, row) => {
      rowCount += 1;
      const answer = await send(row);
      expect(answer.status, answer.body).toBe(row.status);
      expect(answer.body).not.toMatch(stackLine);
      const message = (JSON.parse(answer.body) as { error: { message: string } }).error.message;
      for (const name of row.names) {
        if (typeof name === 'string') expect(message).toContain(name.replace('{job}', queued.id));
        else expect(message).toMatch(name);
      }
    },
  );

  /** A webhook row's request: signed as the row says, then its headers applied. */
  const webhookRequest = (row: WebhookRow): HttpRow => {
    const body = Buffer.isBuffer(row.body) ? row.body : Buffer.from(row.body);
    const id = row.sign?.id ?? `msg_${rowCount}`;
    const at = Math.floor(Date.now() / 1000) - (row.sign?.ageSeconds ?? 0);
    const signature = new Webhook(row.sign?.key ?? webhookSecret).sign(
      id,
      new Date(at * 1000),
      row.sign?.over ?? body.toString('utf8'),
    );
    const headers: Record<string, string> = {
      'webhook-id': id,
      'webhook-timestamp': String(at),
      'webhook-signature': signature,
      ...row.headers,
    };
    for (const [name, value] of Object.entries(headers)) if (value === '') delete headers[name];
    return {
      name: row.name,
      method: row.method ?? 'POST',
      path: `/webhooks/${row.source}`,
      headers,
      body: row.method === 'GET' ? undefined : body,
      status: row.status,
      names: row.names,
    };
  };

  it.each(webhookRows.map((row) => [row.name, row] as const))(
    'webhook: %s',
    { timeout: rowTimeout },
    async (_name, row) => {
      rowCount += 1;
      const answer = await send(webhookRequest(row));
      expect(answer.status, answer.body).toBe(row.status);
      expect(answer.body).not.toMatch(stackLine);
      const message = (JSON.parse(answer.body) as { error: { message: string } }).error.message;
      for (const name of row.names) {
        if (typeof name === 'string') expect(message).toContain(name);
        else expect(message).toMatch(name);
      }
    },
  );

  it.each(apiGatewayRows.map((row) => [row.name, row] as const))(
    'API Gateway event: %s',
    { timeout: rowTimeout },
    async (_name, row) => {
      rowCount += 1;
      const handler = createApiHandler({ deps, observability: createObservability() });
      const result = (await handler.handle(
        row.event as APIGatewayProxyEventV2,
        lambdaContext('opflow-api', 10_000) as Context,
      )) as APIGatewayProxyStructuredResultV2;
      expect(result.statusCode, String(result.body)).toBe(row.status);
      const raw = String(result.body);
      expect(raw).not.toMatch(stackLine);
      let body = raw;
      try {
        body = (JSON.parse(raw) as { error: { message: string } }).error.message;
      } catch {
        // Not JSON: the body as it is.
      }
      for (const name of row.names) {
        if (typeof name === 'string') expect(body).toContain(name);
        else expect(body).toMatch(name);
      }
    },
  );

  it.each(sqsRows.map((row) => [row.name, row] as const))(
    'SQS event: %s',
    { timeout: rowTimeout },
    async (_name, row) => {
      rowCount += 1;
      const worker = createStepWorker({ deps, observability: createObservability() });
      let logged = '';
      const capture = (chunk: unknown) => {
        logged += String(chunk);
        return true;
      };
      const out = vi.spyOn(process.stdout, 'write').mockImplementation(capture);
      const err = vi.spyOn(process.stderr, 'write').mockImplementation(capture);
      let answer: { batchItemFailures: { itemIdentifier: string }[] };
      try {
        answer = await worker.handle(
          row.event as SQSEvent,
          lambdaContext('opflow-step-worker', 60_000) as Context,
        );
      } finally {
        out.mockRestore();
        err.mockRestore();
      }
      expect(answer.batchItemFailures.map((failure) => failure.itemIdentifier).sort()).toEqual(
        [...row.failed].sort(),
      );
      expect(logged).not.toMatch(stackLine);
      for (const text of row.logs) {
        if (typeof text === 'string') expect(logged).toContain(text);
        else expect(logged).toMatch(text);
      }
    },
  );
});

describe('the suite itself', () => {
  it('has at least 300 rows across its boundaries', () => {
    const total =
      Object.values(cliBoundaries).reduce((sum, rows) => sum + rows.length, 0) +
      jobApiRows.length +
      webhookRows.length +
      apiGatewayRows.length +
      sqsRows.length;
    expect(total).toBeGreaterThanOrEqual(300);
    expect(rowCount).toBe(total);
  });
});
