// The overview page a team shows its managers, in a real browser against the real `opflow serve` on
// the built-in sandbox: its headline figures, throughput (jobs finished per day, by outcome) and
// cost (billed units per day) follow the jobs the job API reports, today's bar among 14 days, and
// the page is axe clean. Screenshots go to test-artifacts/dashboard/.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killRunningOpflows } from '../local/opflow-process';
import { accessibilityProblems, jobApiClient, screenshot, servedDashboard } from './browser';

const token = 'dashboard-overview-test-token-0123456789';

interface JobView {
  id: string;
  status: string;
  workflow: string;
  usage?: { calls: number; billedUnits: number };
}

describe('the overview page', () => {
  let dir: string;
  let url: string;
  let browser: Browser;
  let page: Page;
  const api = jobApiClient(() => url, token);
  const job = async (id: string) => (await api<{ job: JobView }>('GET', `/jobs/${id}`)).job;
  const until = async (id: string, status: string): Promise<JobView> => {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const found = await job(id);
      if (found.status === status) return found;
      if (Date.now() > deadline) throw new Error(`job ${id} is ${found.status}, not ${status}`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'opflow-e2e-dashboard-overview-'));
    ({ url, browser, page } = await servedDashboard(dir, token));
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    killRunningOpflows();
    rmSync(dir, { recursive: true, force: true });
  });

  /** The cells of the last row (today) of a chart's data table. */
  const todayRow = async (chart: string) =>
    page
      .locator('figure.chart table')
      .filter({ has: page.locator('caption', { hasText: chart }) })
      .locator('tbody tr')
      .last()
      .locator('td')
      .allTextContents();

  it("charts today's finished jobs by outcome and their billed units, as the job API counts them", async () => {
    const succeeded: JobView[] = [];
    for (const query of ['foldable hinge', 'solid-state separator', 'heat pipe wick']) {
      const { job: created } = await api<{ job: JobView }>('POST', '/jobs', {
        workflow: 'patent-count',
        input: { query },
      });
      succeeded.push(await until(created.id, 'SUCCEEDED'));
    }
    const { job: waiting } = await api<{ job: JobView }>('POST', '/jobs', {
      workflow: 'find-solution',
      input: { text: 'A lamp that dims itself at dusk.' },
      selection: { mode: 'manual' },
    });
    await until(waiting.id, 'AWAITING_INPUT');
    await api('POST', `/jobs/${waiting.id}/cancel`, {});
    const cancelled = await until(waiting.id, 'CANCELLED');
    expect(cancelled.status).toBe('CANCELLED');
    /** The billed units of every job, as the job API says now. */
    const apiUnits = async () =>
      (await api<{ jobs: JobView[] }>('GET', '/jobs?limit=100')).jobs.reduce(
        (sum, each) => sum + (each.usage?.billedUnits ?? 0),
        0,
      );

    await page.goto(`${url}/#/overview`);
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    await page.locator('dl.tiles').waitFor();
    /** A headline tile's figure (its first node: the line under it is apart). */
    const tile = (label: string) =>
      page
        .locator('dl.tiles div.tile')
        .filter({ has: page.locator('dt', { hasText: label }) })
        .locator('dd')
        .evaluate((dd) => dd.firstChild?.textContent ?? '');
    expect(await tile('Succeeded')).toBe('3');
    expect(await tile('Failed')).toBe('0');
    expect(await tile('Waiting for a person')).toBe('0');
    // A step that was running when its job was cancelled may still add its call: the page refreshes
    // every 10 s, so the figures are compared once both agree, or fail after 25 s.
    let units = await apiUnits();
    for (
      let waited = 0;
      waited < 25_000 && (await tile('Billed units')) !== units.toLocaleString('en-US');
      waited += 500
    ) {
      await page.waitForTimeout(500);
      units = await apiUnits();
    }
    expect(units).toBeGreaterThan(0);
    expect(await tile('Billed units')).toBe(units.toLocaleString('en-US'));

    // Throughput: 14 days, today's bar 3 succeeded, 0 failed, 1 cancelled.
    const days = page
      .locator('figure.chart table')
      .filter({ has: page.locator('caption', { hasText: 'Jobs finished per day' }) })
      .locator('tbody tr');
    expect(await days.count()).toBe(14);
    expect((await todayRow('Jobs finished per day')).slice(1)).toEqual(['3', '0', '1']);
    // Cost: today's billed units, the sum of the jobs' own.
    expect((await todayRow('Billed units per day'))[1]).toBe(units.toLocaleString('en-US'));
    // The charts say the same to a screen reader (the SVG's label) as they show.
    const throughput = page.getByRole('img', { name: /^Jobs finished per day\./ });
    expect(await throughput.getAttribute('aria-label')).toMatch(/: 4$/);
    // By workflow: patent-count 3 jobs, all succeeded.
    const row = page.locator('table.jobs tbody tr').filter({ hasText: 'patent-count' });
    expect((await row.locator('td').allTextContents()).slice(1, 4)).toEqual(['3', '3', '0']);

    expect(await accessibilityProblems(page)).toBe('');
    await screenshot(page, 'overview-01-today');
  });
});
