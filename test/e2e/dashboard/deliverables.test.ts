// The deliverables and the sandbox mark in the dashboard, in real chromium against the real
// `opflow serve`: a batch of novelty checks ingested (`opflow ingest --no-wait`, the server runs it),
// then from the batch page its workbook (summary.xlsx, written by exceljs) and from a job's page its
// Word report (report.docx, written by the `docx` package), each downloaded by its button (the
// browser's download event) and read by another reader: SheetJS and mammoth, against the batch's
// jobs and the job's result.json. Sandbox data is marked on the job page, the batch page, the
// jobs list and the overview when the server runs on the built-in sandbox; none of it is when the
// same runs go to an upstream of the test's own with a key (it records what it receives).
// Screenshots in test-artifacts/dashboard/deliverables-*.png.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectNoveltyWordReport, readWorkbook } from '../../support/deliverable-readers';
import { childEnv, killRunningOpflows, repoRoot, runOpflow } from '../local/opflow-process';
import { type RecordingUpstream, startRecordingUpstream } from '../reports/recording-upstream';
import { screenshot, servedDashboard } from './browser';

const token = 'deliverables-test-token-0123456789';
const example = (name: string) => readFileSync(join(repoRoot, 'examples', 'disclosures', name), 'utf8');
const lines = [
  { id: 'IDF-1', text: example('hot-swap-battery-inspection-drone.md') },
  { id: 'IDF-2', text: example('self-cleaning-solar-panel-coating.md') },
];

/** A served dashboard in a folder of its own, signed in, and `opflow` with the server's environment. */
async function dashboardIn(prefix: string, extra: Record<string, string>) {
  const dir = mkdtempSync(join(tmpdir(), `opflow-e2e-${prefix}-`));
  const env = childEnv({
    OPFLOW_SANDBOX_SPEED: '100',
    OPFLOW_DB: join(dir, 'state', 'jobs.db'),
    OPFLOW_OUT: join(dir, 'reports'),
    OPFLOW_SERVE_TOKEN: token,
    ...extra,
  });
  const served = await servedDashboard(dir, token, extra);
  return { dir, env, ...served };
}

/** Ingests `count` of the lines as batch `name` (the server runs them) and opens its page once every item succeeded. */
async function batchPage(
  page: Page,
  url: string,
  dir: string,
  env: NodeJS.ProcessEnv,
  name: string,
  count: number,
) {
  writeFileSync(
    join(dir, `${name}.jsonl`),
    lines
      .slice(0, count)
      .map((line) => JSON.stringify(line))
      .join('\n'),
  );
  const ingested = await runOpflow(
    ['ingest', `${name}.jsonl`, '--workflow', 'novelty-check', '--batch', name, '--no-wait'],
    {
      cwd: dir,
      env,
    },
  );
  expect(ingested.code, ingested.stderr).toBe(0);
  // The server runs the jobs; the next admission round after the last one ends marks the batch
  // finished and writes its final outputs (the workbook last): wait for those, then open the page.
  // (The page following a running batch live is live-batch.test.ts's; here a page that missed a
  // change under load would fail a test of the downloads for the wrong reason.)
  const workbook = join(dir, 'reports', 'batches', name, 'summary.xlsx');
  for (const started = Date.now(); ; await new Promise((resolve) => setTimeout(resolve, 250))) {
    const rows = existsSync(workbook) ? readWorkbook(readFileSync(workbook)).rows('Summary') : [];
    if (rows.length === count && rows.every((row) => row.Status === 'SUCCEEDED')) break;
    const ended = rows.filter((row) => row.Status === 'FAILED' || row.Status === 'CANCELLED');
    if (ended.length > 0) throw new Error(`batch ${name}: ${JSON.stringify(ended)}`);
    if (Date.now() - started > 210_000)
      throw new Error(`the final summary.xlsx of ${name} was not written: ${JSON.stringify(rows)}`);
  }
  await page.goto(`${url}/#/batches/${name}`);
  await page
    .locator('tr[data-status="SUCCEEDED"]')
    .nth(count - 1)
    .waitFor({ timeout: 60_000 });
  await page.locator(`progress[value="${count}"]`).waitFor({ timeout: 60_000 });
}

/** Clicks the button and returns the bytes the browser downloaded, with the file's suggested name. */
async function downloaded(page: Page, button: string): Promise<{ name: string; bytes: Buffer }> {
  const [download] = await Promise.all([
    page.waitForEvent('download'),
    page.getByRole('button', { name: button }).click(),
  ]);
  const path = await download.path();
  return { name: download.suggestedFilename(), bytes: readFileSync(path) };
}

/** Opens the first job of the batch page and downloads its Word report; its id and bytes. */
async function jobWordReport(page: Page): Promise<{ id: string; bytes: Buffer }> {
  const row = page.locator('tr[data-status="SUCCEEDED"]').first();
  const id = (await row.getAttribute('data-job')) as string;
  await row.getByRole('link').first().click();
  await page.getByRole('heading', { name: 'Report', exact: true }).waitFor();
  const word = await downloaded(page, 'Download report.docx');
  expect(word.name).toBe('report.docx');
  return { id, bytes: word.bytes };
}

describe('the dashboard on the built-in sandbox: deliverables downloaded, sandbox data marked', () => {
  let dir: string;
  let url: string;
  let env: NodeJS.ProcessEnv;
  let browser: Browser;
  let page: Page;
  beforeAll(async () => {
    ({ dir, env, url, browser, page } = await dashboardIn('deliverables-sandbox', {}));
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    killRunningOpflows();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('downloads the batch workbook and a job’s Word report from their buttons, each read by another reader, under the sandbox banners', async () => {
    await batchPage(page, url, dir, env, 'drones', 2);
    const banner = page.locator('.notice.sandbox');
    await expect(banner.textContent()).resolves.toMatch(
      /^Sandbox data: not real publications\. 2 jobs of this batch ran against opflow's built-in sandbox/,
    );
    await screenshot(page, 'deliverables-01-sandbox-batch');

    const workbook = await downloaded(page, 'Download summary.xlsx');
    expect(workbook.name).toBe('summary.xlsx');
    expect(
      workbook.bytes.equals(readFileSync(join(dir, 'reports', 'batches', 'drones', 'summary.xlsx'))),
    ).toBe(true);
    const book = readWorkbook(workbook.bytes);
    expect(book.book.SheetNames).toEqual(['Summary', 'novelty-check detail', 'Problems', 'About']);
    const summary = book.rows('Summary');
    expect(summary.map((row) => row.Id)).toEqual(['IDF-1', 'IDF-2']);
    const detail = book.rows('novelty-check detail');
    for (const row of summary) {
      expect(row).toMatchObject({ Status: 'SUCCEEDED', Upstream: 'sandbox (simulated data)' });
      const own = detail.filter((line) => line.Id === row.Id);
      expect(own.length).toBe(row.References);
      for (const category of ['X', 'Y', 'A'] as const)
        expect(own.filter((line) => line.Category === category).length, `${row.Id} ${category}`).toBe(
          row[category],
        );
    }
    expect(book.rows('About').find((row) => row.Batch === 'Simulated data')?.drones).toMatch(
      /2 of 2 items ran on opflow's built-in sandbox/,
    );

    const word = await jobWordReport(page);
    await expect(page.locator('.notice.sandbox').textContent()).resolves.toMatch(
      /^Sandbox data: not real publications\. This job ran against opflow's built-in sandbox/,
    );
    await screenshot(page, 'deliverables-02-sandbox-job');
    const result = JSON.parse(readFileSync(join(dir, 'reports', word.id, 'result.json'), 'utf8'));
    expect(result.sandbox).toBeDefined();
    await expectNoveltyWordReport(word.bytes, result);
    expect(word.bytes.equals(readFileSync(join(dir, 'reports', word.id, 'report.docx')))).toBe(true);

    await page.goto(`${url}/#/overview`);
    await page.getByText('By workflow, the last 14 days').waitFor();
    await expect(page.locator('.notice.sandbox').textContent()).resolves.toMatch(
      /^Sandbox data: not real publications\. 2 of 2 jobs of these 14 days ran against opflow's built-in sandbox/,
    );
    await screenshot(page, 'deliverables-03-sandbox-overview');
    await page.goto(`${url}/#/`);
    await page.locator('tr[data-status="SUCCEEDED"]').nth(1).waitFor();
    expect(await page.locator('tr[data-status] .tag.sandbox').count()).toBe(2);
  }, 300_000);
});

describe('the dashboard with a key against an upstream of its own: nothing marked as sandbox', () => {
  let upstream: RecordingUpstream;
  let dir: string;
  let url: string;
  let env: NodeJS.ProcessEnv;
  let browser: Browser;
  let page: Page;
  beforeAll(async () => {
    upstream = await startRecordingUpstream('sk-test-dashboard-upstream-93be', 100);
    ({ dir, env, url, browser, page } = await dashboardIn('deliverables-keyed', {
      OPFLOW_API_KEY: upstream.apiKey,
      OPFLOW_BASE_URL: upstream.url,
    }));
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    killRunningOpflows();
    await upstream?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('shows the batch, its job and the overview without a sandbox banner or tag, and the Word report unmarked', async () => {
    await batchPage(page, url, dir, env, 'keyed', 1);
    expect(upstream.requests.filter((request) => request.method === 'POST').length).toBeGreaterThan(0);
    expect(await page.locator('.notice.sandbox').count()).toBe(0);
    await screenshot(page, 'deliverables-04-keyed-batch');
    const book = readWorkbook((await downloaded(page, 'Download summary.xlsx')).bytes);
    expect(book.rows('Summary')[0]?.Upstream).toMatch(/^http:\/\/127\.0\.0\.1:\d+ key [0-9a-f]{8}$/);

    const word = await jobWordReport(page);
    expect(await page.locator('.notice.sandbox').count()).toBe(0);
    expect(await page.getByText('Sandbox data').count()).toBe(0);
    await screenshot(page, 'deliverables-05-keyed-job');
    const result = JSON.parse(readFileSync(join(dir, 'reports', word.id, 'result.json'), 'utf8'));
    expect(result.job.upstream).toMatchObject({ kind: 'platform', baseUrl: upstream.url });
    await expectNoveltyWordReport(word.bytes, result);

    await page.goto(`${url}/#/overview`);
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    await page.getByText('By workflow, the last 14 days').waitFor();
    expect(await page.locator('.notice.sandbox').count()).toBe(0);
    await page.goto(`${url}/#/`);
    await page.locator('tr[data-status="SUCCEEDED"]').first().waitFor();
    expect(await page.locator('.tag.sandbox').count()).toBe(0);
  }, 300_000);
});
