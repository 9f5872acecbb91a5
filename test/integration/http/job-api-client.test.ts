// The typed job API client (shared/job-api-client) against a real opflow serve server (node:http,
// SQLite): a job created, read and listed through it with a bearer token; refusals typed as the
// API's error body. SigV4 signing checked against a real HTTP server that recomputes the signature
// from the request it received, by the algorithm AWS documents, written here apart from the signer.
import { execFile } from 'node:child_process';
import { createHash, createHmac } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildJobApiClient } from '../../../scripts/build-job-api-client.mjs';
import { createJobApiClient } from '../../../shared/job-api-client';
import { startTestApi, type TestApi } from '../../support/engines';

const token = 'client-test-token-0123456789';
let api: TestApi;
let server: { url: string };

beforeAll(async () => {
  api = await startTestApi({ token });
  server = api.server;
});
afterAll(async () => {
  await api.close();
});

describe('the typed job API client', () => {
  it('is importable as opflow/job-api-client by plain Node (the package exports its build)', async () => {
    await buildJobApiClient();
    const script = `import { createJobApiClient } from 'opflow/job-api-client';
      const api = createJobApiClient({ baseUrl: process.env.URL, token: process.env.TOKEN });
      const { data, response } = await api.GET('/health');
      console.log(JSON.stringify({ status: response.status, data }));`;
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], {
      cwd: join(import.meta.dirname, '../../..'),
      env: { ...process.env, URL: server.url, TOKEN: token },
    });
    expect(JSON.parse(stdout)).toMatchObject({ status: 200, data: { status: 'ok' } });
  });

  it('creates, reads and lists a job with a bearer token; answers are the API’s own', async () => {
    const api = createJobApiClient({ baseUrl: server.url, token });
    const created = await api.POST('/jobs', {
      body: { workflow: 'patent-count', input: { query: 'TTL:(helmet)' }, label: 'from the client' },
    });
    expect(created.error).toBeUndefined();
    expect(created.response.status).toBe(201);
    const job = created.data!.job;
    expect(job).toMatchObject({ workflow: 'patent-count', status: 'QUEUED', label: 'from the client' });

    const read = await api.GET('/jobs/{id}', { params: { path: { id: job.id } } });
    expect(read.data?.job.id).toBe(job.id);

    const listed = await api.GET('/jobs', { params: { query: { workflow: 'patent-count', limit: 5 } } });
    expect(listed.data?.jobs.map((each) => each.id)).toContain(job.id);
  });

  it('gives a refusal as the API’s error body: what is wrong and where', async () => {
    const api = createJobApiClient({ baseUrl: server.url, token });
    const refused = await api.POST('/jobs', {
      body: { workflow: 'patent-count', input: {} } as never,
    });
    expect(refused.data).toBeUndefined();
    expect(refused.response.status).toBe(400);
    expect(refused.error?.error.code).toBe('invalid-request');
    expect(refused.error?.error.message).toMatch(/input/);

    const missing = await api.GET('/jobs/{id}', { params: { path: { id: 'no-such-job' } } });
    expect(missing.response.status).toBe(404);
    expect(missing.error?.error.code).toBe('not-found');
  });

  it('without the token gets 401, and never puts a token or credentials in a URL', async () => {
    const anonymous = createJobApiClient({ baseUrl: server.url });
    const refused = await anonymous.GET('/health');
    expect(refused.response.status).toBe(401);
    expect(() => createJobApiClient({ baseUrl: 'http://user:secret@127.0.0.1:1' })).toThrow(
      /must not carry credentials/,
    );
    expect(() => createJobApiClient({ baseUrl: 'not a url' })).toThrow(/baseUrl must be/);
    expect(() =>
      createJobApiClient({
        baseUrl: server.url,
        token,
        sigv4: { region: 'eu-west-1', credentials: { accessKeyId: 'a', secretAccessKey: 'b' } },
      }),
    ).toThrow(/either token or sigv4/);
  });
});

/** SigV4 as AWS documents it ("Create a signed AWS API request"), from the request as received. */
function expectedSignature(
  request: { method: string; path: string; query: URLSearchParams; headers: IncomingMessage['headers'] },
  body: string,
  secret: string,
  region: string,
): { signature: string; signedHeaders: string } {
  const auth = String(request.headers.authorization);
  const signedHeaders = /SignedHeaders=([^,]+)/.exec(auth)![1]!;
  const amzDate = String(request.headers['x-amz-date']);
  const day = amzDate.slice(0, 8);
  const hex = (data: string) => createHash('sha256').update(data).digest('hex');
  const canonicalQuery = [...request.query.entries()]
    .map(([k, v]) => [encodeURIComponent(k), encodeURIComponent(v)])
    .sort(([a], [b]) => (a! < b! ? -1 : a! > b! ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join('&');
  const canonicalHeaders = signedHeaders
    .split(';')
    .map((name) => `${name}:${String(request.headers[name]).trim()}\n`)
    .join('');
  const canonical = [
    request.method,
    request.path,
    canonicalQuery,
    canonicalHeaders,
    signedHeaders,
    hex(body),
  ].join('\n');
  const scope = `${day}/${region}/execute-api/aws4_request`;
  const toSign = ['AWS4-HMAC-SHA256', amzDate, scope, hex(canonical)].join('\n');
  const hmac = (key: string | Buffer, data: string) => createHmac('sha256', key).update(data).digest();
  const key = hmac(hmac(hmac(hmac(`AWS4${secret}`, day), region), 'execute-api'), 'aws4_request');
  return { signature: createHmac('sha256', key).update(toSign).digest('hex'), signedHeaders };
}

describe('SigV4 signing for a stack whose API uses IAM', () => {
  let receiver: Server;
  let url: string;
  const seen: { auth: string; valid: boolean; signedHeaders: string }[] = [];
  const secret = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY';

  beforeAll(async () => {
    receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const target = new URL(req.url!, 'http://x');
        const { signature, signedHeaders } = expectedSignature(
          { method: req.method!, path: target.pathname, query: target.searchParams, headers: req.headers },
          Buffer.concat(chunks).toString('utf8'),
          secret,
          'eu-west-1',
        );
        const auth = String(req.headers.authorization);
        seen.push({ auth, valid: auth.endsWith(`Signature=${signature}`), signedHeaders });
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ jobs: [] }));
      });
    });
    await new Promise<void>((done) => receiver.listen(0, '127.0.0.1', done));
    url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((done) => receiver.close(() => done())));

  it('signs a GET with a query and a POST with a body so that the receiver’s own check passes', async () => {
    const api = createJobApiClient({
      baseUrl: url,
      sigv4: {
        region: 'eu-west-1',
        credentials: async () => ({ accessKeyId: 'AKIDEXAMPLE', secretAccessKey: secret }),
      },
    });
    await api.GET('/jobs', { params: { query: { status: 'FAILED', limit: 20, tenant: 'acme' } } });
    await api.POST('/jobs', { body: { workflow: 'patent-count', input: { query: 'TTL:(hélmet)' } } });
    expect(seen).toHaveLength(2);
    for (const each of seen) {
      expect(each.auth).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/eu-west-1\/execute-api\//);
      expect(each.signedHeaders.split(';')).toEqual(expect.arrayContaining(['host', 'x-amz-date']));
      expect(each.auth).not.toContain(secret);
      expect(each.valid).toBe(true);
    }
  });

  it('a signature made with other credentials does not pass the receiver’s check', async () => {
    seen.length = 0;
    const api = createJobApiClient({
      baseUrl: url,
      sigv4: { region: 'eu-west-1', credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'other' } },
    });
    await api.GET('/jobs');
    expect(seen[0]?.valid).toBe(false);
  });
});
