// A batch's page moves while the batch runs, without a reload and without polling: the page follows
// GET /events (an EventSource opened with a token of POST /events/token) and reloads its figures
// when events come, its pace chart and spend with it. Real chromium, the real `opflow serve` on the
// built-in sandbox, a batch ingested by `opflow ingest` in another process and run by the server at
// 2 calls a second.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killRunningOpflows, runOpflow } from '../local/opflow-process';
import { childEnv, startServe } from '../local/serve-process';
import { accessibilityProblems, openBrowser, screenshot } from './browser';

const token = 'live-batch-test-token-0123456789';
const items = 12;

describe('a batch page in a browser, live', () => {
  let dir: string;
  let url: string;
  let env: NodeJS.ProcessEnv;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'opflow-e2e-live-'));
    env = childEnv({
      OPFLOW_DB: join(dir, 'state', 'jobs.db'),
      OPFLOW_OUT: join(dir, 'reports'),
      OPFLOW_SERVE_TOKEN: token,
      OPFLOW_QPS: '2',
    });
    ({ url } = await startServe([], { cwd: dir, env }));
    ({ browser, page } = await openBrowser());
  });
  afterAll(async () => {
    await browser?.close();
    killRunningOpflows();
    rmSync(dir, { recursive: true, force: true });
  });

  it('watches a batch move to its end without a reload, through the event feed', async () => {
    const feedRequests: string[] = [];
    const batchReads: number[] = [];
    page.on('request', (request) => {
      const path = new URL(request.url()).pathname;
      if (path === '/events') feedRequests.push(request.url());
      if (path.startsWith('/batches/')) batchReads.push(Date.now());
    });
    await page.goto(`${url}/`);
    await page.getByLabel('Server token').fill(token);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Jobs' }).waitFor();

    const lines = Array.from({ length: items }, (_, n) => ({ id: `q${n}`, query: `TTL:(hinge ${n})` }));
    writeFileSync(join(dir, 'hinges.jsonl'), lines.map((line) => JSON.stringify(line)).join('\n'));
    const ingested = await runOpflow(['ingest', 'hinges.jsonl', '--workflow', 'patent-count', '--no-wait'], {
      cwd: dir,
      env,
    });
    expect(ingested.code, ingested.stderr).toBe(0);

    await page.goto(`${url}/#/batches`);
    await page.getByRole('link', { name: 'hinges' }).first().click();
    await page.locator('[data-live="live"]').waitFor();
    // Marks this document: a reload would lose the mark. Records each value the progress bar takes.
    await page.evaluate(`{
      const seen = [];
      window.progressSeen = seen;
      const note = () => {
        const value = document.querySelector('progress')?.getAttribute('value');
        if (value != null && seen.at(-1) !== value) seen.push(value);
      };
      new MutationObserver(note).observe(document.body, { subtree: true, childList: true, attributes: true });
      note();
    }`);
    await screenshot(page, 'live-01-batch-moving');
    await page.locator(`progress[value="${items}"]`).waitFor({ timeout: 90_000 });
    await page
      .locator('tr[data-status="SUCCEEDED"]')
      .nth(items - 1)
      .waitFor();
    const seen = (await page.evaluate('window.progressSeen')) as string[] | undefined;
    expect(seen, 'the page was reloaded').toBeDefined();
    const values = seen!.map(Number);
    // It moved step by step in this one document, never backwards.
    expect(values.length).toBeGreaterThanOrEqual(3);
    expect(values).toEqual([...values].sort((a, b) => a - b));
    expect(values.at(-1)).toBe(items);
    // The pace chart reached the end with the batch, and its spend counts the jobs' calls.
    await page
      .getByRole('img', { name: new RegExp(`^Items finished over time: ${items} of ${items} by `) })
      .waitFor();
    // Drawn in steps (the count holds until the next item ends): one rise per item, no slope.
    const line = await page.locator('figure.chart path').last().getAttribute('d');
    expect(line).toMatch(/^M[\d.]+,[\d.]+( H[\d.]+ V[\d.]+)+$/);
    expect(line!.match(/ V/g)).toHaveLength(items);
    const spent = await page.locator('dt:text-is("Calls / billed units") + dd').textContent();
    expect(spent?.trim()).toMatch(/^[1-9]\d* \/ [1-9]\d*$/);
    // Through the feed: opened with a short-lived token, not the server's; no poll every 2 s.
    expect(feedRequests.length).toBeGreaterThanOrEqual(1);
    for (const request of feedRequests) {
      expect(request).toMatch(/[?&]token=/);
      expect(request).not.toContain(token);
    }
    expect(await accessibilityProblems(page)).toBe('');
    await screenshot(page, 'live-02-batch-finished');
  }, 150_000);
});
