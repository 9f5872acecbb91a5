// `opflow serve` through the real bin: jobs POSTed to its HTTP API run to completion on the local
// workers (against the built-in sandbox, as `opflow run` does), reports are served from it, a manual
// selection is answered through it, bad requests are refused clearly, and with OPFLOW_SERVE_TOKEN
// every request needs the token while neither token nor API key shows anywhere.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scaledTaskDurations } from '../../../shared/runtime/local/sandbox-launch';
import { type Sandbox, startSandbox } from '../../../shared/sandbox';
import { childEnv, killRunningOpflows, type OpflowProcess, startOpflow } from './opflow-process';

interface JobView {
  id: string;
  workflow: string;
  status: string;
  outputs: string[];
  pending?: { prompt: string; options: { id: string; label: string }[]; min: number; max: number };
  selections: Record<string, string[]>;
  lastError?: { message: string };
}
interface ErrorBody {
  error: { status: number; code: string; message: string };
}

/** Starts `opflow serve` and resolves with its URL, read from the first line of standard output. */
async function startServe(
  args: string[],
  options: { env: NodeJS.ProcessEnv; cwd: string },
): Promise<{ run: OpflowProcess; url: string }> {
  const run = startOpflow(['serve', '--port', '0', ...args], options);
  const url = await new Promise<string>((resolve, reject) => {
    let stdout = '';
    run.child.stdout?.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
      const firstLine = stdout.includes('\n') ? stdout.slice(0, stdout.indexOf('\n')) : undefined;
      if (firstLine === undefined) return;
      // `--json` prints {"url": ...}; text says "job API at <url> (...)".
      const found = firstLine.startsWith('{')
        ? (JSON.parse(firstLine) as { url: string }).url
        : /job API at (http:\/\/\S+) /.exec(firstLine)?.[1];
      if (found) resolve(found);
      else reject(new Error(`no URL on the first line of opflow serve: ${firstLine}`));
    });
    void run.done.then((result) =>
      reject(new Error(`opflow serve exited (${result.code ?? result.signal}):\n${result.stderr}`)),
    );
  });
  return { run, url };
}

const disclosure = `# Folding bicycle helmet
A bicycle helmet made of six rigid shell segments joined by textile hinges, so that it folds flat to the
size of a book. A magnetic buckle locks the segments in the open shape; an impact liner of expanded
polypropylene is split along the same lines as the shell.`;

describe('opflow serve (built-in sandbox)', () => {
  let dir: string;
  let url: string;
  let serve: OpflowProcess;

  const api = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const response = await fetch(`${url}${path}`, {
      method,
      headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    return { status: response.status, headers: response.headers, json: (await response.json()) as never };
  };
  /** Polls the job until its status is one of `statuses` (every 100 ms; the test's timeout bounds it). */
  const waitFor = async (id: string, statuses: string[]): Promise<JobView> => {
    for (;;) {
      const { json } = await api('GET', `/jobs/${id}`);
      const job = (json as { job: JobView }).job;
      if (statuses.includes(job.status)) return job;
      if (['FAILED', 'CANCELLED'].includes(job.status)) throw new Error(`job ${id} ${job.status}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };
  const create = async (body: unknown) => {
    const created = await api('POST', '/jobs', body);
    expect(created.status, JSON.stringify(created.json)).toBe(201);
    return (created.json as { job: JobView }).job;
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'opflow-e2e-serve-'));
    const env = childEnv({
      OPFLOW_SANDBOX_SPEED: '300',
      OPFLOW_DB: join(dir, 'state', 'jobs.db'),
      OPFLOW_OUT: join(dir, 'reports'),
    });
    ({ run: serve, url } = await startServe([], { env, cwd: dir }));
  });
  afterAll(() => {
    killRunningOpflows();
    rmSync(dir, { recursive: true, force: true });
  });

  it('prints its loopback URL and that it uses the built-in sandbox', () => {
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(serve.stderrSoFar()).toContain('using the built-in sandbox');
  });

  it('runs a posted patent count and a novelty check to SUCCEEDED and serves their reports', async () => {
    const count = await create({ workflow: 'patent-count', input: { query: 'TACD: (folding helmet)' } });
    const novelty = await create({ workflow: 'novelty-check', input: { text: disclosure }, label: 'helmet' });
    expect(count).toMatchObject({ workflow: 'patent-count', status: 'QUEUED' });
    const [counted, checked] = await Promise.all([
      waitFor(count.id, ['SUCCEEDED']),
      waitFor(novelty.id, ['SUCCEEDED']),
    ]);
    expect(counted.outputs).toContain(`reports/${count.id}/report.html`);
    expect(checked.outputs.some((key) => key.startsWith(`reports/${novelty.id}/attachments/`))).toBe(true);

    // Where the report is: the files on this machine, and where this server serves them.
    const where = await api('GET', `/jobs/${novelty.id}/report`);
    expect(where.status).toBe(200);
    const answer = where.json as {
      expiresInSeconds?: number;
      files: { name: string; url: string; href: string; path: string }[];
    };
    const files = answer.files;
    // Served by this server: no expiry that would mean nothing here.
    expect(answer.expiresInSeconds).toBeUndefined();
    expect(files.map((file) => file.name)).toEqual(
      expect.arrayContaining(['report.html', 'report.md', 'result.json']),
    );
    const html = files.find((file) => file.name === 'report.html')!;
    expect(html.path).toBe(join(dir, 'reports', novelty.id, 'report.html'));
    expect(existsSync(html.path)).toBe(true);
    expect(html.url).toBe(`/jobs/${novelty.id}/report/report.html`);
    expect(html.href).toBe(`/jobs/${novelty.id}/report/report.html`);

    const page = await fetch(`${url}${html.href}`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
    const text = await page.text();
    expect(text).toBe(readFileSync(html.path, 'utf8'));
    expect(text).toContain('<html');

    const result = await fetch(`${url}/jobs/${novelty.id}/report/result.json`);
    expect(result.headers.get('content-type')).toBe('application/json');
    expect(((await result.json()) as { steps: Record<string, unknown> }).steps).toHaveProperty('features');
    const markdown = await fetch(`${url}/jobs/${count.id}/report/report.md`);
    expect(markdown.headers.get('content-type')).toBe('text/markdown; charset=utf-8');

    const attachment = files.find((file) => file.name.startsWith('attachments/'))!;
    const saved = await fetch(`${url}${attachment.href}`);
    expect(saved.status).toBe(200);
    expect(saved.headers.get('content-disposition')).toMatch(/^attachment; /);
    expect(Buffer.from(await saved.arrayBuffer())).toEqual(readFileSync(attachment.path));

    // Nothing outside the job's report, however the path is spelt.
    for (const path of ['..%2F..%2Fstate%2Fjobs.db', '%2e%2e/%2e%2e/state/jobs.db', 'steps/features.json']) {
      const escaped = await api('GET', `/jobs/${novelty.id}/report/${path}`);
      expect(escaped.status, path).toBe(404);
    }
  }, 60_000);

  it('parks a manual novelty check with its options and finishes it with the answer posted', async () => {
    const job = await create({
      workflow: 'novelty-check',
      input: { text: disclosure },
      selection: { mode: 'manual' },
    });
    const parked = await waitFor(job.id, ['AWAITING_INPUT']);
    expect(parked.pending?.prompt).toBe('Which technical features should the novelty search compare?');
    const options = parked.pending!.options;
    expect(options.length).toBeGreaterThanOrEqual(2);

    const wrong = await api('POST', `/jobs/${job.id}/selection`, { selected: ['not-an-option'] });
    expect(wrong.status).toBe(400);
    expect((wrong.json as ErrorBody).error.message).toContain('not-an-option');

    const chosen = options.slice(0, 2).map((option) => option.id);
    const answered = await api('POST', `/jobs/${job.id}/selection`, { selected: chosen });
    expect(answered.status).toBe(200);
    const done = await waitFor(job.id, ['SUCCEEDED']);
    expect(done.selections.features).toEqual(chosen);
  }, 60_000);

  it('refuses bad requests with a JSON error that says what is wrong', async () => {
    const invalid = await api('POST', '/jobs', { workflow: 'patent-count', input: { query: 42 } });
    expect(invalid.status).toBe(400);
    expect((invalid.json as ErrorBody).error).toMatchObject({ code: 'invalid-request' });
    expect((invalid.json as ErrorBody).error.message).toContain('input.query');
    const unknownField = await api('POST', '/jobs', { workflow: 'patent-count', input: {}, priority: 1 });
    expect((unknownField.json as ErrorBody).error.message).toContain('priority');

    const notJson = await api('POST', '/jobs', '{"workflow": "patent-count",');
    expect(notJson.status).toBe(400);
    expect((notJson.json as ErrorBody).error.code).toBe('invalid-json');
    expect((notJson.json as ErrorBody).error.message).toMatch(/^the request body is not JSON: /);

    const noRoute = await api('GET', '/workflows');
    expect(noRoute.status).toBe(404);
    expect((noRoute.json as ErrorBody).error.message).toBe('no route /workflows');
    const noJob = await api('GET', '/jobs/01J000000000000000000000ZZ');
    expect(noJob.status).toBe(404);

    const wrongMethod = await api('DELETE', '/jobs');
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get('allow')).toBe('POST, GET');
    const fileMethod = await api('POST', '/jobs/01J000000000000000000000ZZ/report/report.html');
    expect(fileMethod.status).toBe(405);

    const huge = await api(
      'POST',
      '/jobs',
      JSON.stringify({ workflow: 'patent-count', input: { query: 'x'.repeat(2 ** 21) } }),
    );
    expect(huge.status).toBe(413);
    expect((huge.json as ErrorBody).error).toMatchObject({ code: 'body-too-large' });
    expect((huge.json as ErrorBody).error.message).toContain('1048576 bytes');
    // The server is still there after refusing it.
    expect((await api('GET', '/jobs?limit=1')).status).toBe(200);
  });

  it('logs each request by method, path and status, and stops cleanly on SIGTERM', async () => {
    expect(serve.stderrSoFar()).toMatch(/^opflow serve: POST \/jobs 201 \(\d+ ms\)$/m);
    expect(serve.stderrSoFar()).toMatch(/^opflow serve: POST \/jobs 413 \(\d+ ms\)$/m);
    serve.child.kill('SIGTERM');
    const result = await serve.done;
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain('opflow serve: stopping');
    expect(result.stderr).toMatch(/opflow serve: stopped\n$/);
    await expect(fetch(`${url}/jobs`)).rejects.toThrow();
  });
});

describe('opflow serve with OPFLOW_SERVE_TOKEN and a real API key', () => {
  const token = 'serve-token-5b1e0c9a7d3f42e8';
  const apiKey = 'opk-live-9f8e7d6c5b4a39281706';
  let dir: string;
  let sandbox: Sandbox;
  let serve: OpflowProcess;
  let url: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'opflow-e2e-serve-token-'));
    sandbox = await startSandbox({
      port: 0,
      keys: [{ key: apiKey }],
      taskDurations: scaledTaskDurations(300),
    });
    const env = childEnv({
      OPFLOW_SERVE_TOKEN: token,
      OPFLOW_API_KEY: apiKey,
      OPFLOW_BASE_URL: sandbox.url,
      OPFLOW_DB: join(dir, 'state', 'jobs.db'),
      OPFLOW_OUT: join(dir, 'reports'),
    });
    ({ run: serve, url } = await startServe(['--json'], { env, cwd: dir }));
  });
  afterAll(async () => {
    killRunningOpflows();
    await sandbox?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers only requests carrying the token, runs their jobs with the key, and shows neither', async () => {
    const seen: string[] = [];
    const call = async (path: string, init: RequestInit = {}) => {
      const response = await fetch(`${url}${path}`, init);
      const text = await response.text();
      seen.push(text, JSON.stringify([...response.headers]));
      return { status: response.status, headers: response.headers, json: JSON.parse(text) };
    };
    const body = JSON.stringify({ workflow: 'patent-count', input: { query: 'TACD: (helmet)' } });
    const post = { method: 'POST', body, headers: { 'content-type': 'application/json' } };

    const missing = await call('/jobs', post);
    expect(missing.status).toBe(401);
    expect(missing.headers.get('www-authenticate')).toBe('Bearer realm="opflow"');
    expect(missing.json.error.message).toContain('Authorization: Bearer');
    for (const authorization of [
      `Bearer ${token}x`,
      `Bearer ${token.slice(0, -1)}`,
      `Basic ${token}`,
      token,
    ]) {
      const wrong = await call('/jobs', { ...post, headers: { ...post.headers, authorization } });
      expect(wrong.status, authorization).toBe(401);
    }
    expect((await call('/jobs')).status).toBe(401);
    expect((await call('/nowhere')).status).toBe(401);

    const auth = { authorization: `Bearer ${token}` };
    const created = await call('/jobs', { ...post, headers: { ...post.headers, ...auth } });
    expect(created.status).toBe(201);
    const id = created.json.job.id as string;
    let job = created.json.job;
    while (!['SUCCEEDED', 'FAILED', 'CANCELLED'].includes(job.status)) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      job = (await call(`/jobs/${id}`, { headers: auth })).json.job;
    }
    expect(job.status, JSON.stringify(job.lastError)).toBe('SUCCEEDED');
    const report = await call(`/jobs/${id}/report/result.json`, { headers: auth });
    expect(report.status).toBe(200);
    // The key went upstream: this sandbox accepts no other.
    expect(sandbox.ledger.count({ outcome: 'ok' })).toBeGreaterThan(0);

    serve.child.kill('SIGINT');
    const result = await serve.done;
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout.split('\n')[0]!)).toMatchObject({ url, auth: 'bearer' });
    const log = readFileSync(join(dir, 'state', 'opflow.log'), 'utf8');
    for (const place of [result.stdout, result.stderr, log, ...seen]) {
      expect(place).not.toContain(apiKey);
      expect(place).not.toContain(token);
    }
  }, 60_000);
});

describe('opflow serve stopped in the middle of a job', () => {
  let dir: string;
  let sandbox: Sandbox;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'opflow-e2e-serve-restart-'));
    // A sandbox of its own keeps the job's upstream tasks while no opflow runs.
    sandbox = await startSandbox({ port: 0, taskDurations: scaledTaskDurations(300) });
    env = childEnv({
      OPFLOW_BASE_URL: sandbox.url,
      OPFLOW_SANDBOX_SPEED: '300',
      OPFLOW_DB: join(dir, 'state', 'jobs.db'),
      OPFLOW_OUT: join(dir, 'reports'),
    });
  });
  afterAll(async () => {
    killRunningOpflows();
    await sandbox?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('finishes the steps in progress on SIGTERM, and the next opflow serve takes the job to the end', async () => {
    const first = await startServe(['--quiet'], { env, cwd: dir });
    const posted = await fetch(`${first.url}/jobs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ workflow: 'novelty-check', input: { text: disclosure } }),
    });
    const { job } = (await posted.json()) as { job: JobView & { version: number } };
    // Once the job has moved past its first step, stop in the middle of it.
    let seen = job;
    while (seen.version < 3) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      seen = ((await (await fetch(`${first.url}/jobs/${job.id}`)).json()) as { job: typeof job }).job;
    }
    first.run.child.kill('SIGTERM');
    const stopped = await first.run.done;
    expect(stopped.code, stopped.stderr).toBe(0);
    // --quiet: no request log and no stopping lines, only the URL.
    expect(stopped.stderr).toBe('');

    const second = await startServe(['--quiet'], { env, cwd: dir });
    const left = ((await (await fetch(`${second.url}/jobs/${job.id}`)).json()) as { job: JobView }).job;
    expect(['QUEUED', 'RUNNING', 'WAITING', 'SUCCEEDED']).toContain(left.status);
    let status = left.status;
    while (status !== 'SUCCEEDED') {
      expect(['QUEUED', 'RUNNING', 'WAITING']).toContain(status);
      await new Promise((resolve) => setTimeout(resolve, 100));
      status = ((await (await fetch(`${second.url}/jobs/${job.id}`)).json()) as { job: JobView }).job.status;
    }
    second.run.child.kill('SIGINT');
    expect((await second.run.done).code).toBe(0);
    // No step was lost or repeated as a create: the sandbox saw each create once.
    expect(sandbox.ledger.duplicateCreates()).toBe(0);
  }, 60_000);
});
