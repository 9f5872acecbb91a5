// The static build of the dashboard (npm run dashboard:build) in a real browser, against the aws
// backend as `npm run aws-local` runs it (the bundled api function on DynamoDB Local, fauxqs S3 and
// SQS, the step worker it drives). The page is served from one origin and the job API answers on
// another, behind a stand-in for API Gateway's CORS layer configured as the CDK app configures it
// (api.dashboardOrigins: that origin only, GET/POST, infra's DASHBOARD_CORS_HEADERS), so every
// request the page makes must pass a real preflight. Every page of the build is on: the jobs list,
// a job's timeline from its HIST# history and its report from S3, batches, schedules (from
// OPFLOW_SCHEDULES, paused and resumed in their SCHED# state) and webhook deliveries (HOOKLOG).
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, request as forward, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { extname, join, normalize } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DASHBOARD_CORS_HEADERS } from '../../../infra/lib/job-api';
import { buildDashboard } from '../../../scripts/build-dashboard';
import { REAL_PROCESS_TIMEOUT_MS } from '../../support/timeouts';
import { childEnv, repoRoot } from '../local/opflow-process';
import { accessibilityProblems, openBrowser, screenshot } from './browser';

const schedules = [
  { name: 'nightly-count', cron: '0 2 * * *', workflow: 'patent-count', input: { query: 'TTL:(helmet)' } },
];

let dir: string;
let awsLocal: ChildProcess;
let stderr = '';
let gatewayUrl: string;
let site: Server;
let siteOrigin: string;
let cors: Server;
let apiOrigin: string;
let browser: Browser;
let page: Page;
/** What the CORS layer refused (a header or method the page sent that the stack does not allow). */
const refusals: string[] = [];
/** Preflights the CORS layer allowed (the page's bearer token makes every request need one). */
let preflights = 0;

const listen = async (server: Server): Promise<string> => {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
};

/** API Gateway's CORS, as infra/lib/job-api.ts configures it for `dashboardOrigins`. */
function corsLayer(): Server {
  const allowedHeaders = new Set<string>(DASHBOARD_CORS_HEADERS);
  return createServer((req, res) => {
    const origin = req.headers.origin;
    if (req.method === 'OPTIONS') {
      const method = String(req.headers['access-control-request-method'] ?? '');
      const headers = String(req.headers['access-control-request-headers'] ?? '')
        .split(',')
        .map((name) => name.trim().toLowerCase())
        .filter(Boolean);
      const refused = headers.filter((name) => !allowedHeaders.has(name));
      if (origin !== siteOrigin || !['GET', 'POST'].includes(method) || refused.length > 0) {
        refusals.push(`${req.url}: origin ${origin}, ${method}, headers ${refused.join(',')}`);
        res.writeHead(204).end();
        return;
      }
      preflights++;
      res
        .writeHead(204, {
          'access-control-allow-origin': siteOrigin,
          'access-control-allow-methods': 'GET,POST,OPTIONS',
          'access-control-allow-headers': [...allowedHeaders].join(','),
          'access-control-max-age': '3600',
        })
        .end();
      return;
    }
    const upstream = forward(
      `${gatewayUrl}${req.url}`,
      { method: req.method, headers: { ...req.headers, host: new URL(gatewayUrl).host } },
      (answer) => {
        const headers = { ...answer.headers };
        if (origin === siteOrigin) {
          headers['access-control-allow-origin'] = siteOrigin;
          headers['access-control-expose-headers'] = 'location,retry-after';
        }
        res.writeHead(answer.statusCode ?? 502, headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', (error) => res.writeHead(502).end(String(error)));
    req.pipe(upstream);
  });
}

/** A static host for the built folder. */
function staticHost(folder: string): Server {
  const types: Record<string, string> = {
    '.html': 'text/html; charset=utf-8',
    '.js': 'text/javascript',
    '.mjs': 'text/javascript',
    '.css': 'text/css',
    '.json': 'application/json',
  };
  return createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://site').pathname;
    const name = normalize(path === '/' ? '/index.html' : path).replace(/^(\.\.[/\\])+/, '');
    try {
      const body = readFileSync(join(folder, name));
      res.writeHead(200, { 'content-type': types[extname(name)] ?? 'application/octet-stream' }).end(body);
    } catch {
      res.writeHead(404).end('not found');
    }
  });
}

const api = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
  const answer = await fetch(`${gatewayUrl}${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await answer.text();
  if (!answer.ok) throw new Error(`${method} ${path}: ${answer.status} ${text}`);
  return JSON.parse(text) as T;
};
const shot = (name: string) => screenshot(page, name);

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'opflow-e2e-static-dashboard-'));
  const env = childEnv({ OPFLOW_SCHEDULES: JSON.stringify(schedules) });
  delete env.OPFLOW_API_KEY;
  awsLocal = spawn(
    process.execPath,
    ['--import', 'tsx', 'scripts/aws-local.ts', '--dir', join(dir, 'state'), '--workers', '1'],
    { cwd: repoRoot, env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  awsLocal.stdout?.resume();
  const ready = new Promise<void>((resolve, reject) => {
    awsLocal.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
      const ready = /aws-local: ready: .* the api(?: and webhooks functions)? at (http:\/\/[^\s;,]+)/.exec(
        stderr,
      );
      if (ready) {
        gatewayUrl = ready[1]!;
        resolve();
      }
      if (/aws-local: failed/.test(stderr)) reject(new Error(stderr));
    });
    awsLocal.on('exit', (code) =>
      reject(new Error(`aws-local exited ${code} before it was ready:\n${stderr}`)),
    );
  });
  // While aws-local starts its emulators and bundles the functions (the longest part on a loaded
  // machine): the CORS layer (it reads gatewayUrl per request), the site and the browser.
  ready.catch(() => {});
  cors = corsLayer();
  apiOrigin = await listen(cors);
  const out = join(dir, 'site');
  buildDashboard({ api: apiOrigin, out });
  site = staticHost(out);
  siteOrigin = await listen(site);

  ({ browser, page } = await openBrowser());
  // A person signed in: the page sends the bearer token (a JWT on the real stack) with every request.
  await page.addInitScript("sessionStorage.setItem('opflow.token', 'a-jwt-from-the-identity-provider')");
  await ready;
}, REAL_PROCESS_TIMEOUT_MS);

afterAll(async () => {
  await browser?.close();
  site?.close();
  cors?.close();
  if (awsLocal && awsLocal.exitCode === null) {
    awsLocal.kill('SIGTERM');
    await Promise.race([once(awsLocal, 'exit'), new Promise((resolve) => setTimeout(resolve, 15_000))]);
    if (awsLocal.exitCode === null) awsLocal.kill('SIGKILL');
  }
  if (dir) rmSync(dir, { recursive: true, force: true });
}, 30_000);

describe('the static dashboard against the aws job API', { timeout: REAL_PROCESS_TIMEOUT_MS }, () => {
  it('lists a job from another origin and shows its HIST# timeline and its S3 report', async () => {
    const { job } = await api<{ job: { id: string } }>('POST', '/jobs', {
      workflow: 'patent-count',
      input: { query: 'TTL:(folding helmet)' },
    });
    await page.goto(`${siteOrigin}/`);
    await page.locator(`tr[data-job="${job.id}"][data-status="SUCCEEDED"]`).waitFor({ timeout: 90_000 });
    for (const name of ['Jobs', 'Batches', 'Schedules', 'Webhooks'])
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name }).waitFor();
    expect(await page.getByText(`API: ${apiOrigin}`).count()).toBe(1);
    await shot('20-static-aws-jobs');

    await page.locator(`tr[data-job="${job.id}"]`).getByRole('link').click();
    const steps = page.getByRole('list', { name: 'Steps' });
    await steps.waitFor();
    expect(await steps.textContent()).toMatch(/1 call/);
    await page.getByRole('heading', { name: 'Report' }).waitFor();
    await page.frameLocator('iframe.report').locator('h1').first().waitFor();
    expect(await accessibilityProblems(page)).toBe('');
    await shot('21-static-aws-job');
    expect(refusals).toEqual([]);
    expect(preflights).toBeGreaterThan(0);
  });

  it("follows a job live through GET /events' long poll: the page changes when the job does", async () => {
    const { job } = await api<{ job: { id: string } }>('POST', '/jobs', {
      workflow: 'find-solution',
      input: { problem: 'Lithium battery packs swell at high temperature; how can swelling be limited?' },
      selection: { mode: 'manual' },
    });
    type Waiting = { job: { status: string; pending?: { options: { id: string }[]; min: number } } };
    let waiting: Waiting['job'] | undefined;
    for (let tries = 0; tries < 180 && waiting?.status !== 'AWAITING_INPUT'; tries++) {
      waiting = (await api<Waiting>('GET', `/jobs/${job.id}`)).job;
      if (waiting.status !== 'AWAITING_INPUT') await new Promise((resolve) => setTimeout(resolve, 500));
    }
    expect(waiting?.status).toBe('AWAITING_INPUT');
    await page.goto(`${siteOrigin}/#/jobs/${job.id}`);
    // No feed token on AWS (POST /events/token is opflow serve's): the page long-polls, live.
    await page.locator('[data-live="live"]').waitFor({ timeout: 30_000 });
    const badge = page.getByRole('heading', { level: 1 }).locator('.status-AWAITING_INPUT');
    await badge.waitFor();
    const pending = waiting!.pending!;
    const answeredAt = performance.now();
    await api('POST', `/jobs/${job.id}/selection`, {
      selected: pending.options.slice(0, Math.max(1, pending.min)).map((option) => option.id),
    });
    await badge.waitFor({ state: 'detached', timeout: 25_000 });
    // Sooner than the page's safety poll while live (30 s): the long poll brought the change.
    expect(performance.now() - answeredAt).toBeLessThan(25_000);
    expect(refusals).toEqual([]);
    await shot('23-static-aws-live-job');
  });

  it('pauses and resumes a schedule of OPFLOW_SCHEDULES, and reads the webhook deliveries and batches', async () => {
    await page.goto(`${siteOrigin}/#/schedules`);
    await page.locator('tr[data-schedule="nightly-count"][data-state="active"] time').first().waitFor();
    await page.getByRole('button', { name: 'Pause: nightly-count' }).click();
    await page.getByLabel('Why (shown beside the schedule)').fill('platform maintenance');
    await page.getByRole('button', { name: 'Pause nightly-count' }).click();
    await page.locator('tr[data-schedule="nightly-count"][data-state="paused"]').waitFor();
    const listed = await api<{ schedules: { name: string; pause?: { reason: string } }[] }>(
      'GET',
      '/schedules',
    );
    expect(listed.schedules[0]?.pause?.reason).toBe('platform maintenance');
    await shot('22-static-aws-schedule-paused');
    await page.getByRole('button', { name: 'Resume: nightly-count' }).click();
    await page.locator('tr[data-schedule="nightly-count"][data-state="active"]').waitFor();

    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.getByText('No deliveries recorded.').waitFor();
    await page.getByRole('link', { name: 'Batches' }).click();
    await page.getByText(/No batches yet/).waitFor();
    expect(await page.getByRole('alert').count()).toBe(0);
    expect(refusals).toEqual([]);
  });

  it('uploads documents by presigned PUTs: each one sent with its progress, a failed PUT named and sent again, then the commit starts the batch', async () => {
    // The bucket's CORS rule as infra/lib/opflow-stack.ts writes it for dashboardOrigins; the PUTs go
    // on to the emulator's S3 as they are (Playwright answers the preflight of a routed request, so
    // the headers the page sends are checked here against the rule instead).
    const bucketHeaders = ['content-type', 'x-amz-checksum-sha256', 'x-amz-sdk-checksum-algorithm'];
    const puts: string[] = [];
    let failOnce = true;
    const toTheInbox = (url: URL) => url.pathname.includes('/inbox/');
    await page.route(toTheInbox, async (route) => {
      const request = route.request();
      const headers = await request.allHeaders();
      for (const name of Object.keys(headers))
        if (name.startsWith('x-amz-') && !name.startsWith('x-amz-meta-') && !bucketHeaders.includes(name))
          refusals.push(`S3 PUT: header ${name} is not in the bucket's CORS rule`);
      const name = decodeURIComponent(new URL(request.url()).pathname.split('/').pop() ?? '');
      puts.push(name);
      if (name === 'notes.txt' && failOnce) {
        failOnce = false;
        await route.fulfill({
          status: 503,
          headers: { 'access-control-allow-origin': siteOrigin },
          body: '',
        });
        return;
      }
      const answer = await route.fetch();
      await route.fulfill({
        response: answer,
        headers: { ...answer.headers(), 'access-control-allow-origin': siteOrigin },
      });
    });
    try {
      await page.goto(`${siteOrigin}/#/upload`);
      await page.getByRole('heading', { name: 'Upload a manifest or documents' }).waitFor();
      await page.getByRole('radio', { name: /Documents: one item each/ }).check();
      await page.getByLabel('Workflow (required)').selectOption('patent-count');
      await page.getByLabel('Documents (required)').setInputFiles([
        {
          name: 'valve.md',
          mimeType: 'text/markdown',
          buffer: Buffer.from('# Valve\n\nTTL:(check valve)\n'),
        },
        { name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('TTL:(drain pump)') },
      ]);
      await page.getByRole('heading', { name: '2 documents chosen' }).waitFor();
      await page.getByRole('button', { name: 'Check and estimate' }).click();
      const check = page.getByRole('region', { name: 'What it would do' });
      await check.waitFor();
      expect(await check.textContent()).toMatch(/Documents read\s*2/);
      expect(await check.textContent()).toMatch(
        /Not read by this check: the documents are read when the ingest function/,
      );
      expect(puts).toEqual([]);

      await page.getByRole('button', { name: 'Start the batch: 2 items' }).click();
      // One PUT failed: named with why, beside its progress, and offered again; nothing committed.
      const again = page.getByRole('button', { name: 'Send notes.txt again' });
      await again.waitFor({ timeout: 30_000 });
      // The page says the batch was not started once every PUT has ended (valve.md's may still be
      // on its way when notes.txt's refusal shows).
      await page.getByRole('alert').filter({ hasText: 'The batch was not started' }).waitFor();
      const sending = page.getByRole('region', { name: /Sending the documents/ });
      expect(await sending.textContent()).toMatch(/1 of 2 sent/);
      expect(await sending.textContent()).toMatch(/notes\.txt.*not sent: storage refused it \(503\)/);
      expect(await accessibilityProblems(page)).toBe('');
      await shot('24-static-aws-documents-sending');
      expect((await api<{ batches: unknown[] }>('GET', '/batches')).batches).toEqual([]);

      // Sent again: the page commits, and opens the batch the ingest function starts.
      await again.click();
      await page.waitForURL(/#\/batches\/documents-[0-9a-f]{8}$/, { timeout: 30_000 });
      const batchId = decodeURIComponent(page.url().split('/').pop()!);
      expect(puts.sort()).toEqual(['notes.txt', 'notes.txt', 'valve.md']);
      let batch: { status?: string; items?: number } = {};
      for (let tries = 0; tries < 120 && batch.status !== 'FINISHED'; tries++) {
        batch = await api<{ batch: typeof batch }>('GET', `/batches/${batchId}`)
          .then((answer) => answer.batch)
          .catch(() => ({}));
        if (batch.status !== 'FINISHED') await new Promise((resolve) => setTimeout(resolve, 1_000));
      }
      expect(batch).toMatchObject({ status: 'FINISHED', items: 2 });
      expect(refusals).toEqual([]);
    } finally {
      // A PUT still being passed on finishes first (a test that failed early leaves none half-answered).
      await page.unrouteAll({ behavior: 'wait' });
    }
  });
});
