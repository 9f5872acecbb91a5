// `opflow serve` in-process: its options and token checked up front with clear messages, the URL
// on the first line, the job API answering while it runs, and a graceful stop on Ctrl-C.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  exposureRefusal,
  parsePort,
  readServeToken,
  serveTokenVariable,
} from '../../../../shared/cli/commands/serve';
import { CliError } from '../../../../shared/cli/exit-codes';
import { ExitCode, main } from '../../../../shared/cli/main';
import { jobApiOpenApi } from '../../../../shared/http/openapi';
import { routeTable } from '../../../../shared/http/routes';
import { type CapturedIo, captureIo } from '../capture-io';

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '../../../..');
const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

describe('serve options', () => {
  it('takes a port from 0 to 65535 and refuses anything else, naming the flag', () => {
    expect(parsePort('0')).toBe(0);
    expect(parsePort('8788')).toBe(8788);
    expect(parsePort('65535')).toBe(65535);
    for (const bad of ['', 'abc', '-1', '1.5', '65536', '0x50', ' 80']) {
      expect(() => parsePort(bad), bad).toThrow(CliError);
      expect(() => parsePort(bad), bad).toThrow(`--port must be a port number (0 to 65535), not "${bad}"`);
    }
  });

  it('refuses a server beyond loopback without a token, and only then', () => {
    for (const host of ['0.0.0.0', '::', '192.168.1.20', 'example.com']) {
      expect(exposureRefusal(host, undefined), host).toMatch(
        new RegExp(
          `^--host ${host.replace(/\./g, '\\.')} reaches beyond this machine: set OPFLOW_SERVE_TOKEN`,
        ),
      );
    }
    expect(exposureRefusal('0.0.0.0', 'a'.repeat(16))).toBeUndefined();
    for (const host of ['127.0.0.1', 'localhost', '::1', '127.0.0.2']) {
      expect(exposureRefusal(host, undefined), host).toBeUndefined();
    }
  });

  it('reads the token from OPFLOW_SERVE_TOKEN, refusing an unfit one without showing it', () => {
    expect(serveTokenVariable).toBe('OPFLOW_SERVE_TOKEN');
    expect(readServeToken({})).toBeUndefined();
    expect(readServeToken({ OPFLOW_SERVE_TOKEN: '' })).toBeUndefined();
    expect(readServeToken({ OPFLOW_SERVE_TOKEN: 'a'.repeat(16) })).toBe('a'.repeat(16));
    const unfit = {
      short1234: 'at least 16 characters',
      'has a space in the middle': 'visible ASCII',
      'naïve-token-with-accent': 'visible ASCII',
    };
    for (const [token, rule] of Object.entries(unfit)) {
      let error: unknown;
      try {
        readServeToken({ OPFLOW_SERVE_TOKEN: token });
      } catch (caught) {
        error = caught;
      }
      expect(error, token).toBeInstanceOf(CliError);
      expect((error as CliError).exitCode).toBe(ExitCode.usage);
      expect((error as CliError).message).toMatch(/^OPFLOW_SERVE_TOKEN /);
      expect((error as CliError).message).toContain(rule);
      expect((error as CliError).message).not.toContain(token);
    }
  });
});

describe('opflow serve (in-process)', () => {
  let dir: string;
  let io: CapturedIo;
  const opflow = (...args: string[]) => main(['node', 'opflow', ...args], { io });
  const env = (extra: Record<string, string> = {}) => ({
    OPFLOW_DB: join(dir, 'state', 'opflow.db'),
    OPFLOW_OUT: join(dir, 'out'),
    OPFLOW_SANDBOX_SPEED: '1000',
    ...extra,
  });
  /** Resolves with the first line the command prints on standard output. */
  const firstLine = async (): Promise<string> => {
    while (!io.out().includes('\n')) await new Promise((resolve) => setTimeout(resolve, 10));
    return io.out().slice(0, io.out().indexOf('\n'));
  };

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'opflow-cli-serve-'));
    io = captureIo({ env: env(), cwd: dir });
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('lists its routes and the token variable in its help', async () => {
    expect(await opflow('serve', '--help')).toBe(ExitCode.ok);
    for (const text of ['--port', '--host', 'POST /jobs/{id}/selection', 'GET /jobs/{id}/report/{file}']) {
      expect(io.out()).toContain(text);
    }
    expect(io.out()).toContain('OPFLOW_SERVE_TOKEN');
    io = captureIo({ env: env(), cwd: dir });
    expect(await opflow('--help')).toBe(ExitCode.ok);
    expect(io.out()).toMatch(/serve \[options\] +serve the job HTTP API/);
  });

  it('names every route the server answers in its help and in the docs', async () => {
    // The routes as the server describes them (GET /openapi.json), but the dashboard's own files and
    // the routes only the AWS job API answers (the route table's servedBy).
    const doc = jobApiOpenApi() as {
      paths: Record<string, Record<string, unknown>>;
    };
    const awsOnly = new Set(
      routeTable.filter((route) => route.servedBy === 'aws').map((route) => `${route.method} ${route.path}`),
    );
    const routes = Object.entries(doc.paths)
      .flatMap(([path, operations]) =>
        Object.keys(operations).map((method) => `${method.toUpperCase()} ${path}`),
      )
      .filter((route) => route !== 'GET /' && route !== 'GET /ui/{file}' && !awsOnly.has(route));
    expect(awsOnly).toContain('POST /batch-uploads/commit');
    expect(routes.length).toBeGreaterThan(20);
    expect(await opflow('serve', '--help')).toBe(ExitCode.ok);
    const help = io.out().replace(/\s+/g, ' ');
    // The README and the guides it links to (the job API, the dashboard, schedules and webhooks).
    const guides = join(repoRoot, 'docs/guides');
    const docs = [join(repoRoot, 'README.md'), ...readdirSync(guides).map((name) => join(guides, name))]
      .map((file) => readFileSync(file, 'utf8'))
      .join('\n');
    for (const route of routes) {
      expect(help, `serve --help names ${route}`).toContain(route);
      const [method, path] = route.split(' ') as [string, string];
      // The docs write a route as `METHOD /path` (the path's own braces kept).
      expect(docs, `the docs name ${route}`).toMatch(new RegExp(`\`${method} ${escapeRegExp(path)}[\`? ]`));
    }
    expect(help).toContain('dashboard');
  });

  it('refuses the aws backend, a bad port and an unfit token before opening anything', async () => {
    expect(await opflow('--backend', 'aws', 'serve')).toBe(ExitCode.usage);
    expect(io.err()).toContain('opflow serve runs jobs on the local backend');
    expect(await opflow('serve', '--port', 'http')).toBe(ExitCode.usage);
    expect(io.err()).toContain('--port must be a port number (0 to 65535), not "http"');
    io = captureIo({ env: env({ OPFLOW_SERVE_TOKEN: 'hunter2' }), cwd: dir });
    expect(await opflow('serve', '--port', '0')).toBe(ExitCode.usage);
    expect(io.err()).toContain('OPFLOW_SERVE_TOKEN must be at least 16 characters');
    expect(io.err()).not.toContain('hunter2');
    for (const host of ['0.0.0.0', '::']) {
      io = captureIo({ env: env(), cwd: dir });
      expect(await opflow('serve', '--port', '0', '--host', host), host).toBe(ExitCode.usage);
      expect(io.err()).toContain(`--host ${host} reaches beyond this machine: set OPFLOW_SERVE_TOKEN`);
      expect(io.out()).toBe('');
    }
  });

  it('says it cannot listen on a port in use, and exits with the environment code', async () => {
    const taken: Server = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as { port: number }).port;
    try {
      expect(await opflow('serve', '--port', String(port))).toBe(ExitCode.environment);
      expect(io.err()).toContain(`cannot listen on 127.0.0.1:${port}: listen EADDRINUSE`);
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });

  it('never prints the password of a base URL, in its first line or in an error', async () => {
    io = captureIo({ env: env({ OPFLOW_BASE_URL: 'http://alice:s3cr3t-pw@127.0.0.1:9/' }), cwd: dir });
    const serving = opflow('serve', '--port', '0');
    const line = await firstLine();
    expect(line).toContain('http://***@127.0.0.1:9/');
    io.interrupt();
    expect(await serving).toBe(ExitCode.ok);
    expect(io.out() + io.err()).not.toContain('s3cr3t-pw');
    io = captureIo({ env: env(), cwd: dir });
    expect(await opflow('serve', '--base-url', 'ftp://alice:s3cr3t-pw@example.com/')).toBe(ExitCode.usage);
    expect(io.err()).toContain('--base-url: must be an http(s) URL (got "ftp://***@example.com/")');
    io = captureIo({ env: env(), cwd: dir });
    expect(await opflow('--json', 'serve', '--base-url', 'ftp://alice:s3cr3t-pw@example.com/')).toBe(
      ExitCode.usage,
    );
    expect(io.out() + io.err()).not.toContain('s3cr3t-pw');
  });

  it('prints its URL, answers the job API, and stops on Ctrl-C with exit code 0', async () => {
    const serving = opflow('--json', 'serve', '--port', '0');
    const ready = JSON.parse(await firstLine()) as { url: string; backend: string; auth: string };
    expect(ready).toMatchObject({ auth: 'none', backend: expect.stringContaining('built-in sandbox') });
    expect(ready.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);

    const created = await fetch(`${ready.url}/jobs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ workflow: 'patent-count', input: { query: 'TACD: (hinge)' } }),
    });
    expect(created.status).toBe(201);
    const { job } = (await created.json()) as { job: { id: string; status: string } };
    let status = job.status;
    while (status !== 'SUCCEEDED') {
      expect(['QUEUED', 'RUNNING', 'WAITING']).toContain(status);
      await new Promise((resolve) => setTimeout(resolve, 20));
      status = ((await (await fetch(`${ready.url}/jobs/${job.id}`)).json()) as { job: typeof job }).job
        .status;
    }

    io.interrupt();
    expect(await serving).toBe(ExitCode.ok);
    expect(io.err()).toMatch(/opflow serve: POST \/jobs 201 \(\d+ ms\)/);
    expect(io.err()).toMatch(/opflow serve: stopping: .*\nopflow serve: stopped\n$/);
    await expect(fetch(`${ready.url}/jobs`)).rejects.toThrow();
  });
});
