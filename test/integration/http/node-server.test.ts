// The job API's node:http server on the local backend (real SQLite file, real report folder, real
// sockets on 127.0.0.1): report files and the paths that must not escape them, the bearer token,
// Host and Origin refusals, the body limit while reading, and a close that lets requests finish.
import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createLocalBackend, type LocalBackend } from '../../../shared/backends/local';
import type { EngineDeps } from '../../../shared/engine/deps';
import type { Job } from '../../../shared/engine/job';
import type { JobStore } from '../../../shared/engine/ports';
import {
  type JobApiServer,
  type JobApiServerOptions,
  type RequestLogEntry,
  startJobApiServer,
} from '../../../shared/http/node-server';
import { workflows } from '../../../shared/workflows';
import { contractJob } from '../../contract/ports.contract';

let dir: string;
let local: LocalBackend;
let deps: EngineDeps;
let server: JobApiServer | undefined;
let logged: RequestLogEntry[];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'opflow-node-server-'));
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
  };
  logged = [];
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  local.close();
  rmSync(dir, { recursive: true, force: true });
});

async function start(options: Partial<JobApiServerOptions> = {}): Promise<JobApiServer> {
  server = await startJobApiServer({ deps, onRequest: (entry) => logged.push(entry), ...options });
  return server;
}

/** A raw request, for what fetch will not send (a Host header, a body that is not what it declares). */
function raw(
  path: string,
  options: { method?: string; headers?: Record<string, string>; body?: Buffer | string } = {},
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    // Host, port and path apart: a URL string would have `%2e%2e` segments resolved before sending.
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port: server!.port,
        path,
        method: options.method ?? 'GET',
        headers: options.headers,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks).toString() }),
        );
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

/** A succeeded job with a report, an attachment, a step output, and a file it does not list. */
async function succeededJob(): Promise<Job> {
  const job = contractJob({ status: 'SUCCEEDED', finishedAt: Date.now() });
  const prefix = `reports/${job.id}/`;
  const files: [string, string, string][] = [
    ['result.json', '{"steps":{}}', 'application/json'],
    ['report.md', '# Report', 'text/markdown; charset=utf-8'],
    ['report.html', '<!doctype html><html><body>Report</body></html>', 'text/html; charset=utf-8'],
    ['attachments/prior art.pdf', '%PDF-1.4 prior art', 'application/pdf'],
    ['steps/features.json', '{"features":[]}', 'application/json'],
  ];
  for (const [name, body, type] of files) await local.reports.put(`${prefix}${name}`, body, type);
  await local.reports.put(`${prefix}unlisted.txt`, 'not an output', 'text/plain; charset=utf-8');
  job.outputs = files.map(([name]) => `${prefix}${name}`);
  await local.store.create(job);
  return job;
}

describe('report files', () => {
  it('serves each report file with its content type, and links them from the report answer', async () => {
    const { url } = await start();
    const job = await succeededJob();
    const html = await fetch(`${url}/jobs/${job.id}/report/report.html`);
    expect(html.status).toBe(200);
    expect(html.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(html.headers.get('x-content-type-options')).toBe('nosniff');
    expect(html.headers.get('content-disposition')).toBe("inline; filename*=UTF-8''report.html");
    expect(await html.text()).toContain('Report</body>');
    expect((await fetch(`${url}/jobs/${job.id}/report/report.md`)).headers.get('content-type')).toBe(
      'text/markdown; charset=utf-8',
    );
    expect(await (await fetch(`${url}/jobs/${job.id}/report/result.json`)).json()).toEqual({ steps: {} });

    for (const path of ['attachments/prior%20art.pdf', 'prior%20art.pdf']) {
      const pdf = await fetch(`${url}/jobs/${job.id}/report/${path}`);
      expect(pdf.status, path).toBe(200);
      expect(pdf.headers.get('content-type')).toBe('application/pdf');
      expect(pdf.headers.get('content-disposition')).toBe("attachment; filename*=UTF-8''prior%20art.pdf");
      expect(await pdf.text()).toBe('%PDF-1.4 prior art');
    }

    const head = await raw(`/jobs/${job.id}/report/report.md`, { method: 'HEAD' });
    expect(head).toMatchObject({ status: 200, body: '' });
    expect(head.headers['content-length']).toBe('8');

    const answer = (await (await fetch(`${url}/jobs/${job.id}/report`)).json()) as {
      files: { name: string; url: string; href: string }[];
    };
    expect(answer.files.map((file) => [file.name, file.href])).toEqual([
      ['result.json', `/jobs/${job.id}/report/result.json`],
      ['report.md', `/jobs/${job.id}/report/report.md`],
      ['report.html', `/jobs/${job.id}/report/report.html`],
      ['attachments/prior art.pdf', `/jobs/${job.id}/report/attachments/prior%20art.pdf`],
    ]);
    expect(answer.files[2]!.url).toBe(join(dir, 'out', job.id, 'report.html'));
  });

  it('serves nothing but the files the job lists as its report, however the path is spelt', async () => {
    await start();
    const job = await succeededJob();
    const other = await succeededJob();
    const attempts = [
      'steps/features.json',
      'unlisted.txt',
      '..%2F..%2Fjobs.db',
      '%2e%2e/%2e%2e/jobs.db',
      '%252e%252e%252fjobs.db',
      '..%5C..%5Cjobs.db',
      `..%2F${other.id}%2Freport.html`,
      '%2Fetc%2Fpasswd',
      'report.html%00.txt',
      '.opflow/types/report.html',
    ];
    for (const path of attempts) {
      const answer = await raw(`/jobs/${job.id}/report/${path}`);
      expect(answer.status, `${path} ${answer.body}`).toBe(404);
      expect(JSON.parse(answer.body).error.code, path).toBe('not-found');
    }
    // Unencoded dots in the request line are not resolved by the server either.
    expect((await raw(`/jobs/${job.id}/report/../../jobs.db`)).status).toBe(404);
    expect((await raw(`/jobs/${job.id}/report/%E0%A4%A`)).status).toBe(400);
    expect((await raw('/jobs/..%2F..%2Fx/report/report.html')).status).toBe(400);
  });

  it('answers 404 for an unknown job, 409 for one without a report yet, 405 for another method', async () => {
    await start();
    const running = contractJob({ status: 'RUNNING' });
    await local.store.create(running);
    const unknown = await raw('/jobs/01J000000000000000000000ZZ/report/report.html');
    expect(unknown.status).toBe(404);
    expect(JSON.parse(unknown.body).error.message).toBe('no job 01J000000000000000000000ZZ');
    const early = await raw(`/jobs/${running.id}/report/report.html`);
    expect(early.status).toBe(409);
    expect(JSON.parse(early.body).error.message).toBe(`job ${running.id} has no report: it is RUNNING`);
    const posted = await raw(`/jobs/${running.id}/report/report.html`, { method: 'POST' });
    expect(posted.status).toBe(405);
    expect(posted.headers.allow).toBe('GET, HEAD');
  });
});

describe('who may call', () => {
  const token = 'a-token-of-some-length-0123';

  it('with a token, answers only requests that carry it as a bearer token', async () => {
    const { url } = await start({ token });
    const job = await succeededJob();
    for (const headers of [
      {},
      { authorization: `Bearer ${token.slice(1)}` },
      { authorization: `Bearer ${token}${token}` },
      { authorization: `Basic ${token}` },
      { authorization: token },
      { authorization: 'Bearer' },
    ] as Record<string, string>[]) {
      for (const path of ['/jobs', `/jobs/${job.id}/report/report.html`, '/nowhere']) {
        const refused = await fetch(`${url}${path}`, { headers });
        expect(refused.status, `${JSON.stringify(headers)} ${path}`).toBe(401);
        expect(refused.headers.get('www-authenticate')).toMatch(/^Bearer realm="opflow"/);
        const text = await refused.text();
        expect(text).not.toContain(token);
        expect(JSON.parse(text).error.code).toBe('unauthorized');
      }
    }
    for (const scheme of ['Bearer', 'bearer']) {
      const accepted = await fetch(`${url}/jobs/${job.id}/report/report.md`, {
        headers: { authorization: `${scheme} ${token}` },
      });
      expect(accepted.status).toBe(200);
    }
  });

  it('on loopback, refuses requests addressed to another host name (DNS rebinding)', async () => {
    const { port } = await start();
    for (const host of ['evil.example', `evil.example:${port}`, '10.0.0.1', '127.0.0.1.evil.example']) {
      const refused = await raw('/jobs', { headers: { host } });
      expect(refused.status, host).toBe(421);
    }
    for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`, 'LOCALHOST']) {
      expect((await raw('/jobs', { headers: { host } })).status, host).toBe(200);
    }
  });

  it('refuses requests a web page of another origin sends, and takes its own origin', async () => {
    const { url, port } = await start();
    const job = contractJob({ status: 'RUNNING' });
    await local.store.create(job);
    const crossSite = await raw(`/jobs/${job.id}/cancel`, {
      method: 'POST',
      headers: { origin: 'https://evil.example' },
    });
    expect(crossSite.status).toBe(403);
    expect((await local.store.get(job.id))?.status).toBe('RUNNING');
    const otherPort = await raw('/jobs', { headers: { origin: `http://127.0.0.1:${port + 1}` } });
    expect(otherPort.status).toBe(403);
    expect((await raw('/jobs', { headers: { origin: url } })).status).toBe(200);
  });
});

describe('request bodies and paths', () => {
  it('refuses a body over the limit, whether it says its length or not, and stays up', async () => {
    await start({ maxBodyBytes: 100 });
    const over = JSON.stringify({ workflow: 'patent-count', input: { query: 'x'.repeat(200) } });
    const declared = await raw('/jobs', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: over,
    });
    expect(declared.status).toBe(413);
    expect(JSON.parse(declared.body).error).toEqual({
      status: 413,
      code: 'body-too-large',
      message: 'the request body is over 100 bytes (the limit of this server)',
    });
    const chunked = await raw('/jobs', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
      body: over,
    });
    expect(chunked.status).toBe(413);
    const fits = await raw('/jobs', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ workflow: 'patent-count', input: { query: 'x' } }),
    });
    expect(fits.status).toBe(201);
  });

  it('refuses a body that is not UTF-8, and names the problem in one that is not JSON', async () => {
    await start();
    const binary = await raw('/jobs', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: Buffer.from([0x7b, 0xff, 0xfe, 0x7d]),
    });
    expect(binary.status).toBe(400);
    expect(JSON.parse(binary.body).error.message).toBe('the request body is not UTF-8 text');
    const broken = await raw('/jobs', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"workflow": }',
    });
    expect(broken.status).toBe(400);
    expect(JSON.parse(broken.body).error.message).toMatch(
      /^the request body is not JSON: .*Unexpected token/,
    );
  });

  it('passes the query on, and logs method, path and status but no query string', async () => {
    await start();
    const listed = await raw('/jobs?status=SUCCEEDED&limit=1');
    expect(listed.status).toBe(200);
    const repeated = await raw('/jobs?limit=1&limit=2');
    expect(repeated.status).toBe(400);
    expect(JSON.parse(repeated.body).error.message).toContain('query.limit');
    expect((await raw('//jobs')).status).toBe(404);
    expect(logged.map(({ method, path, status }) => `${method} ${path} ${status}`)).toEqual([
      'GET /jobs 200',
      'GET /jobs 400',
      'GET //jobs 404',
    ]);
  });
});

/** The local store, but `get` waits for `gate` and says when a request has reached it. */
function storeWaitingFor(gate: Promise<void>): { store: JobStore; reached: Promise<void> } {
  let arrived = () => {};
  const reached = new Promise<void>((resolve) => {
    arrived = resolve;
  });
  const store: JobStore = {
    create: (job) => local.store.create(job),
    get: async (id) => {
      arrived();
      await gate;
      return local.store.get(id);
    },
    commit: (job, expectedVersion) => local.store.commit(job, expectedVersion),
    listDue: (now, limit) => local.store.listDue(now, limit),
    list: (query) => local.store.list(query),
    findByIdempotencyKey: (tenant, key) => local.store.findByIdempotencyKey(tenant, key),
  };
  return { store, reached };
}

describe('close', () => {
  it('lets a request in progress finish, refuses new ones, then stops listening', async () => {
    let release = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const job = contractJob();
    await local.store.create(job);
    const { store, reached } = storeWaitingFor(gate);
    deps = { ...deps, store };
    const { url } = await start();
    const inProgress = fetch(`${url}/jobs/${job.id}`);
    await reached;
    let closed = false;
    const closing = server!.close().then(() => {
      closed = true;
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(closed).toBe(false);
    release();
    const answer = await inProgress;
    expect(answer.status).toBe(200);
    expect(((await answer.json()) as { job: Job }).job.id).toBe(job.id);
    expect(answer.headers.get('connection')).toBe('close');
    await closing;
    await expect(fetch(`${url}/jobs`)).rejects.toThrow();
  });

  it('drops a request that outlasts the grace period', async () => {
    const { store, reached } = storeWaitingFor(new Promise<void>(() => {}));
    deps = { ...deps, store };
    const { url } = await start({ closeGraceMs: 20 });
    const stuck = fetch(`${url}/jobs/01J000000000000000000000ZZ`);
    await reached;
    await server!.close();
    await expect(stuck).rejects.toThrow();
  });
});
