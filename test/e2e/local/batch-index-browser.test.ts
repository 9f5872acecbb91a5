// A batch's index.html in a real browser (Debian's chromium through playwright-core), as a person
// opens it after `opflow batch <id> --download <dir>`: totals, the bad lines with where and why, the
// table sorted by mouse and by keyboard, the filter, and a report link that opens the job's report
// from the downloaded folder (file://, no server). Screenshots go to test-artifacts/ingest/.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jsonlManifest, manifestFiles } from '../../support/manifests';
import { childEnv, killRunningOpflows, repoRoot, runOpflow } from './opflow-process';

const chromiumPath = process.env.OPFLOW_CHROMIUM ?? '/usr/bin/chromium';
const artefacts = join(repoRoot, 'test-artifacts', 'ingest');

describe('a downloaded batch index in a browser', () => {
  let dir: string;
  let env: NodeJS.ProcessEnv;
  let browser: Browser | undefined;
  const opflow = (...args: string[]) => runOpflow(args, { env, cwd: dir });

  beforeAll(async () => {
    if (!existsSync(chromiumPath))
      throw new Error(`no chromium at ${chromiumPath}: apt-get install -y chromium (.ci/run does it)`);
    mkdirSync(artefacts, { recursive: true });
    dir = mkdtempSync(join(tmpdir(), 'opflow-e2e-batch-index-'));
    env = childEnv({
      OPFLOW_SANDBOX_SPEED: '300',
      OPFLOW_DB: join(dir, 'state', 'jobs.db'),
      OPFLOW_OUT: join(dir, 'out'),
    });
    for (const [name, body] of Object.entries(manifestFiles)) writeFileSync(join(dir, name), body);
    browser = await chromium.launch({
      executablePath: chromiumPath,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
    });
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    killRunningOpflows();
    rmSync(dir, { recursive: true, force: true });
  });

  it('downloads every report beside the outputs; the index sorts, filters and opens them offline', async () => {
    // 60 lines: 20 bad ones of different kinds, 40 good.
    const manifest = jsonlManifest(60);
    writeFileSync(join(dir, 'disclosures.jsonl'), manifest.text);
    const run = await opflow(
      'ingest',
      'disclosures.jsonl',
      '--workflow',
      'patent-count',
      '--batch',
      'browse',
      '--qps',
      '1000',
      '--json',
    );
    expect(run.code, run.stderr).toBe(1); // bad lines
    const batchId: string = JSON.parse(run.stdout).batch.id;

    const downloaded = await opflow('batch', batchId, '--download', 'shared-folder', '--json');
    expect(downloaded.stderr).not.toMatch(/Error|at .*\.ts:/);
    const shown = JSON.parse(downloaded.stdout);
    const folder = join(dir, 'shared-folder');
    expect(shown.download).toMatchObject({ dir: folder, reports: 40, unfinished: 0, missing: [] });
    // The summary's report column points into the folder.
    const summary = readFileSync(join(folder, 'summary.csv'), 'utf8').trim().split('\n');
    expect(summary).toHaveLength(41);
    for (const row of summary.slice(1)) {
      const link = /,(reports\/[A-Za-z0-9_-]+\/report\.html),/.exec(row)?.[1];
      expect(link, row).toBeDefined();
      expect(existsSync(join(folder, link!))).toBe(true);
    }
    // Moved elsewhere, the folder still works: nothing in it points back to the output folder.
    rmSync(join(dir, 'out'), { recursive: true, force: true });

    const page = await browser!.newPage({ viewport: { width: 1280, height: 900 } });
    page.setDefaultTimeout(45_000);
    await page.goto(pathToFileURL(join(folder, 'index.html')).href);
    await expect(page.title()).resolves.toBe('Batch browse');
    const totals = page.locator('#overview .totals');
    await expect(totals.textContent()).resolves.toMatch(/40\s*items.*40\s*succeeded.*20\s*bad lines/s);
    const badLines = page.locator('#bad-lines tbody tr');
    await expect(badLines.count()).resolves.toBe(20);
    await expect(badLines.first().textContent()).resolves.toContain(`line ${manifest.bad[0]!.at}`);
    await page.screenshot({ path: join(artefacts, '01-batch-index.png'), fullPage: false });

    const firstIds = async () =>
      page.locator('#items tbody tr td:first-child').evaluateAll((cells) => cells.map((c) => c.textContent));
    const ids = manifest.goodIds;
    const numericOrder = [...ids].sort((a, b) => Number(a.slice(1)) - Number(b.slice(1)));
    // Mouse: Id ascending, then descending.
    const idHeading = page.getByRole('button', { name: 'Id', exact: true });
    await idHeading.click();
    await expect(page.locator('#items th[aria-sort="ascending"]').textContent()).resolves.toBe('Id');
    expect(await firstIds()).toEqual(numericOrder);
    await idHeading.click();
    expect(await firstIds()).toEqual([...numericOrder].reverse());
    // Keyboard: the Calls heading is a button reached by Tab and pressed with Enter.
    const callsHeading = page.getByRole('button', { name: 'Calls', exact: true });
    await callsHeading.focus();
    await page.locator('#items th button:focus').waitFor();
    await page.keyboard.press('Enter');
    await expect(page.locator('#items th[aria-sort="ascending"]').textContent()).resolves.toBe('Calls');

    // The filter hides the rows that do not match.
    await page.getByRole('searchbox', { name: 'Filter rows' }).fill('battery 13');
    await expect(page.locator('#items tbody tr:not([hidden])').count()).resolves.toBe(1);
    await page.screenshot({ path: join(artefacts, '02-batch-index-filtered.png'), fullPage: false });

    // The report link opens the job's report from the folder.
    const visible = page.locator('#items tbody tr:not([hidden])');
    await visible.getByRole('link', { name: 'report' }).click();
    await page.waitForURL(/\/reports\/[A-Za-z0-9_-]+\/report\.html$/);
    await expect(page.locator('h1').first().textContent()).resolves.toMatch(/battery 13/i);
    await page.screenshot({ path: join(artefacts, '03-report-from-index.png'), fullPage: false });
    await page.close();
  }, 600_000);
});
