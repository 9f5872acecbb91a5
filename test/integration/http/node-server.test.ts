// The job API's node:http server on the local backend (real SQLite file, real report folder, real
// sockets on 127.0.0.1): report files and the paths that must not escape them, the bearer token,
// Host and Origin refusals, the body limit while reading, and a close that lets requests finish.
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { LocalBackend } from '../../../shared/backends/local';
import type { EngineDeps } from '../../../shared/engine/deps';
import type { Job } from '../../../shared/engine/job-record';
import type { JobStore } from '../../../shared/engine/ports';
import {
  type JobApiServer,
  type JobApiServerOptions,
  type RequestLogEntry,
  startJobApiServer,
} from '../../../shared/http/node-server';
import { contractJob } from '../../contract/ports.contract';
import { localEngine, type TestEngine } from '../../support/engines';

let engine: TestEngine;
let dir: string;
let local: LocalBackend;
let deps: EngineDeps;
let server: JobApiServer | undefined;
let logged: RequestLogEntry[];

beforeEach(async () => {
  engine = await localEngine();
  ({ local, deps, dir } = engine);
  logged = [];
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  await engine.close();
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
      files: { name: string; url: string; href: string; path: string }[];
      expiresInSeconds?: number;
    };
    expect(answer.files.map((file) => [file.name, file.href])).toEqual([
      ['result.json', `/jobs/${job.id}/report/result.json`],
      ['report.md', `/jobs/${job.id}/report/report.md`],
      ['report.html', `/jobs/${job.id}/report/report.html`],
      ['attachments/prior art.pdf', `/jobs/${job.id}/report/attachments/prior%20art.pdf`],
    ]);
    // Served here: the link is this server's path, with no expiry; the file's place on disk beside it.
    expect(answer.files[2]!.url).toBe(`/jobs/${job.id}/report/report.html`);
    expect(answer.files[2]!.path).toBe(join(dir, 'out', job.id, 'report.html'));
    expect(answer.expiresInSeconds).toBeUndefined();
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

describe('report files on disk that are not what the job wrote', () => {
  it('serves no symbolic link, whatever it points at, and no FIFO or folder', async () => {
    const { url } = await start();
    const job = await succeededJob();
    const other = await succeededJob();
    const folder = join(dir, 'out', job.id);
    const secret = join(dir, 'secret.txt');
    writeFileSync(secret, 'root:x:0:0:the secret');
    const plant = (name: string, make: (path: string) => void) => {
      const path = join(folder, name);
      rmSync(path, { force: true, recursive: true });
      make(path);
    };
    plant('report.md', (path) => symlinkSync(secret, path));
    plant('report.html', (path) => symlinkSync(join(dir, 'out', other.id, 'report.html'), path));
    plant('result.json', (path) => symlinkSync('/etc/passwd', path));
    plant('attachments/prior art.pdf', (path) => mkdirSync(path));
    for (const name of ['report.md', 'report.html', 'result.json', 'attachments/prior%20art.pdf']) {
      const answer = await fetch(`${url}/jobs/${job.id}/report/${name}`);
      const text = await answer.text();
      expect(answer.status, name).toBe(404);
      expect(text).not.toContain('root:');
      expect(text).not.toContain('Report</body>');
    }
    // A job folder that is itself a link to another job's folder serves nothing either.
    rmSync(folder, { recursive: true, force: true });
    symlinkSync(join(dir, 'out', other.id), folder);
    expect((await fetch(`${url}/jobs/${job.id}/report/report.html`)).status).toBe(404);
    // The other job's own files are still served.
    expect((await fetch(`${url}/jobs/${other.id}/report/report.html`)).status).toBe(200);
  });

  it('does not hang on a FIFO named like a report file', async () => {
    const { url } = await start();
    const job = await succeededJob();
    const path = join(dir, 'out', job.id, 'report.md');
    rmSync(path);
    execFileSync('mkfifo', [path]);
    const answer = await fetch(`${url}/jobs/${job.id}/report/report.md`);
    expect(answer.status).toBe(404);
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

  it('refuses Origin: null (a sandboxed iframe, a file: page) on every route', async () => {
    await start();
    const job = contractJob({ status: 'AWAITING_INPUT' });
    await local.store.create(job);
    const json = { origin: 'null', 'content-type': 'application/json' };
    const attempts = [
      raw('/jobs', {
        method: 'POST',
        headers: json,
        body: '{"workflow":"patent-count","input":{"query":"x"}}',
      }),
      raw(`/jobs/${job.id}/cancel`, { method: 'POST', headers: json, body: '{}' }),
      raw(`/jobs/${job.id}/selection`, { method: 'POST', headers: json, body: '{"selected":["f1"]}' }),
      raw('/jobs', { headers: { origin: 'null' } }),
    ];
    for (const refused of await Promise.all(attempts)) {
      expect(refused.status).toBe(403);
      expect(JSON.parse(refused.body).error.code).toBe('cross-origin');
    }
    expect((await local.store.get(job.id))?.status).toBe('AWAITING_INPUT');
    expect((await local.store.list({ limit: 10 })).jobs).toHaveLength(1);
  });

  it('refuses a state-changing request that is not JSON (what a cross-site form or beacon sends)', async () => {
    await start();
    const job = contractJob({ status: 'RUNNING' });
    await local.store.create(job);
    const create = '{"workflow":"patent-count","input":{"query":"x"}}';
    const cases: { path: string; headers: Record<string, string>; body?: string }[] = [
      { path: '/jobs', headers: {}, body: create },
      { path: '/jobs', headers: { 'content-type': 'text/plain' }, body: create },
      { path: '/jobs', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: create },
      { path: '/jobs', headers: { 'content-type': 'multipart/form-data; boundary=x' }, body: create },
      { path: '/jobs', headers: { 'content-type': 'application/jsonp' }, body: create },
      { path: `/jobs/${job.id}/cancel`, headers: {} },
      { path: `/jobs/${job.id}/cancel`, headers: { 'content-type': 'text/plain' }, body: '{}' },
      { path: `/jobs/${job.id}/selection`, headers: {}, body: '{"selected":["f1"]}' },
    ];
    for (const { path, headers, body } of cases) {
      const refused = await raw(path, { method: 'POST', headers, body });
      expect(refused.status, `${path} ${JSON.stringify(headers)}`).toBe(415);
      expect(JSON.parse(refused.body).error.message).toMatch(
        /^header\.Content-Type: a POST must say application\/json/,
      );
    }
    expect((await local.store.get(job.id))?.status).toBe('RUNNING');
    expect((await local.store.list({ limit: 10 })).jobs).toHaveLength(1);
    // JSON, with a charset or as a +json type, is taken; an empty JSON cancel works.
    const jsonTypes = ['application/json', 'application/json; charset=utf-8', 'application/merge-patch+json'];
    for (const type of jsonTypes) {
      const created = await raw('/jobs', { method: 'POST', headers: { 'content-type': type }, body: create });
      expect(created.status, type).toBe(201);
    }
    const cancelled = await raw(`/jobs/${job.id}/cancel`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
    });
    expect(cancelled.status).toBe(200);
    // Wrong routes and methods still say so first.
    expect((await raw('/jobs', { method: 'DELETE' })).status).toBe(405);
    expect((await raw('/nowhere', { method: 'POST' })).status).toBe(404);
  });

  it('will not listen beyond loopback without a token', async () => {
    for (const host of ['0.0.0.0', '::']) {
      await expect(startJobApiServer({ deps, host }), host).rejects.toThrow(
        `listening on ${host} (beyond loopback) needs a token`,
      );
    }
    const open = await startJobApiServer({ deps, host: '0.0.0.0', token: 'a-token-of-some-length-0123' });
    expect(open.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    await open.close();
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
    const refused = JSON.parse(declared.body).error;
    expect(refused).toMatchObject({ status: 413, code: 'body-too-large' });
    expect(refused.message).toMatch(
      /^the request body is over 100 bytes, this API's limit\. An image does not fit as data under this limit: for design-infringement-search or design-infringement-1v1, give each image as \{"url": "https:\/\/\.\.\."\}/,
    );
    const chunked = await raw('/jobs', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
      body: over,
    });
    expect(chunked.status).toBe(413);
    expect(JSON.parse(chunked.body).error.message).toBe(refused.message);
    const selection = await raw('/jobs/01ARZ3NDEKTSV4RRFFQ69G5FAV/selection', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: over,
    });
    expect(JSON.parse(selection.body).error.message).toBe(
      "the request body is over 100 bytes, this API's limit.",
    );
    const fits = await raw('/jobs', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ workflow: 'patent-count', input: { query: 'x' } }),
    });
    expect(fits.status).toBe(201);
  });

  it('takes an image as data up to the size its 1 MiB refusal names, and refuses a larger one saying what to do', async () => {
    await start();
    const designSearch = (imageBytes: number) => {
      const image = Buffer.alloc(imageBytes, 7);
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).copy(image);
      return JSON.stringify({
        workflow: 'design-infringement-search',
        input: { images: [{ data: image.toString('base64'), name: 'front.png' }] },
      });
    };
    const post = (body: string) =>
      raw('/jobs', { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    const large = await post(designSearch(900 * 1024));
    expect(large.status).toBe(413);
    const { message } = JSON.parse(large.body).error;
    expect(message).toContain("the request body is over 1 MiB (1048576 bytes), this API's limit.");
    expect(message).toContain('so one over about 760 KB does not fit');
    expect(message).toContain('`opflow ingest <folder> --workflow <workflow>`');
    expect((await post(designSearch(760 * 1024))).status).toBe(201);
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
    expect(JSON.parse(repeated.body).error.message).toContain('a repeated limit= is joined with commas');
    expect(JSON.parse(repeated.body).error.message).not.toContain('NaN');
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
