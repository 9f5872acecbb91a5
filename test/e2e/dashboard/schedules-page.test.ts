// The schedules page's run history in a real browser (Debian's chromium through playwright-core)
// against the real `opflow serve` on the built-in sandbox with a drift seed, so that a schedule's
// patent count moves between runs: after two runs of a schedule the page lists each (its slot, its
// status, what it billed) and, for the second, what changed since the first, as its result.json
// says; the first says it had nothing to compare with. The page is axe clean; screenshots go to
// test-artifacts/dashboard/.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killRunningOpflows } from '../local/opflow-process';
import { accessibilityProblems, jobApiClient, screenshot, servedDashboard } from './browser';

const token = 'dashboard-schedules-page-token-0123456789';

interface RunJob {
  id: string;
  status: string;
  usage?: { billedUnits?: number };
}

describe("the schedules page's run history", () => {
  let dir: string;
  let url: string;
  let browser: Browser;
  let page: Page;
  const api = jobApiClient(() => url, token);

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'opflow-e2e-dashboard-schedules-'));
    // Far from firing on its own: its runs are the ones triggered here.
    writeFileSync(
      join(dir, 'opflow.config.json'),
      JSON.stringify({
        schedules: [
          {
            name: 'helmet-count',
            cron: '0 6 1 1 *',
            workflow: 'patent-count',
            input: { query: 'TTL:(folding helmet)' },
            catchUp: 'none',
          },
          {
            // A six-field cron (seconds first) in a long zone name: the widest row the table gets.
            name: 'weekday-quarter-hour-count',
            cron: '30 */15 9-17 * * MON-FRI',
            timezone: 'America/Argentina/Buenos_Aires',
            workflow: 'patent-count',
            input: { query: 'TTL:(helmet visor)' },
            catchUp: 'none',
          },
        ],
      }),
    );
    ({ url, browser, page } = await servedDashboard(dir, token, { OPFLOW_SANDBOX_DRIFT: '7' }));
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    killRunningOpflows();
    rmSync(dir, { recursive: true, force: true });
  });

  const getJob = async (id: string) => (await api<{ job: RunJob }>('GET', `/jobs/${id}`)).job;
  /**
   * The run the page's Trigger now started, once it succeeded: its id from the trigger's answer (the
   * notice of the run before stays up until the new one replaces it), which the notice then names.
   */
  const triggerAndFinish = async (): Promise<RunJob> => {
    const answered = page.waitForResponse(
      (response) =>
        response.request().method() === 'POST' && response.url().endsWith('/schedules/helmet-count/trigger'),
    );
    await page.getByRole('button', { name: 'Trigger now: helmet-count' }).click();
    const { jobId: id } = (await (await answered).json()) as { jobId: string };
    await page.getByText(`helmet-count: job ${id} started.`, { exact: true }).waitFor();
    await expect.poll(async () => (await getJob(id)).status, { timeout: 90_000 }).toBe('SUCCEEDED');
    return getJob(id);
  };
  const changesOf = async (id: string) => {
    const { files } = await api<{ files: { href: string }[] }>('GET', `/jobs/${id}/report?file=result.json`);
    const result = await api<{
      changes: { first: boolean; counts: { name: string; before?: number; now: number; delta?: number }[] };
    }>('GET', files[0]!.href);
    return result.changes;
  };

  it("keeps every row's actions in view at 1280 px, a six-field cron in a long zone name too", async () => {
    await page.goto(`${url}/#/schedules`);
    const pause = page.getByRole('button', { name: 'Pause: weekday-quarter-hour-count' });
    await pause.waitFor();
    await screenshot(page, '91-schedules-wide-cron');
    // In view: inside the window and not clipped by a scrolling box around the table.
    for (const button of [
      pause,
      page.getByRole('button', { name: 'Trigger now: weekday-quarter-hour-count' }),
    ]) {
      // Run in the page (the tests' types have no DOM: the few members used are named here).
      interface Box {
        left: number;
        right: number;
        width: number;
      }
      interface Element {
        getBoundingClientRect(): Box;
        parentElement: Element | null;
      }
      interface PageGlobals {
        innerWidth: number;
        getComputedStyle(element: Element): { overflowX: string };
      }
      const visibleWidth = await button.evaluate((node) => {
        const window = globalThis as unknown as PageGlobals;
        const element = node as unknown as Element;
        const box = element.getBoundingClientRect();
        let right = Math.min(box.right, window.innerWidth);
        for (let parent = element.parentElement; parent; parent = parent.parentElement) {
          if (window.getComputedStyle(parent).overflowX !== 'visible')
            right = Math.min(right, parent.getBoundingClientRect().right);
        }
        return (right - box.left) / box.width;
      });
      expect(visibleWidth).toBe(1);
    }
  });

  it('lists each run with its slot, status and cost, and what changed since the run before', async () => {
    await page.goto(`${url}/#/schedules`);
    await page.getByRole('heading', { name: 'Schedules' }).waitFor();
    const first = await triggerAndFinish();
    const second = await triggerAndFinish();

    const history = page.getByRole('region', { name: 'Run history' });
    const rows = history.locator('tbody tr[data-run]');
    await rows.nth(1).waitFor({ timeout: 30_000 });
    expect(await rows.count()).toBe(2);
    // Newest first.
    expect(await rows.nth(0).getAttribute('data-run')).toBe(second.id);
    expect(await rows.nth(1).getAttribute('data-run')).toBe(first.id);

    // The second run's count moved (the sandbox's drift): the page says by how much, as the run's
    // result.json does.
    const changes = await changesOf(second.id);
    const [count] = changes.counts;
    expect(count?.delta).toBeGreaterThan(0);
    const changed = rows.nth(0).locator(`td[data-changes="${second.id}"] .changes`);
    await changed.waitFor({ timeout: 30_000 });
    expect(await changed.textContent()).toContain(
      `${count!.name} +${count!.delta!.toLocaleString('en')} (${count!.before!.toLocaleString('en')} → ${count!.now.toLocaleString('en')})`,
    );
    expect((await changesOf(first.id)).first).toBe(true);
    expect(await rows.nth(1).locator('.changes').textContent()).toContain(
      'first run: nothing to compare with',
    );

    // Each run: the schedule, its slot (a time with its day), its status and what it billed.
    for (const [index, run] of [second, first].entries()) {
      const cells = await rows.nth(index).locator('td').allTextContents();
      expect(cells[0]).toBe('helmet-count');
      expect(await rows.nth(index).locator('td').nth(1).locator('time').count()).toBe(1);
      expect(cells[1]).toContain('triggered by hand');
      expect(cells[2]).toContain('Succeeded');
      expect(cells[3]).toBe(run.id);
      expect(run.usage?.billedUnits).toBeGreaterThan(0);
    }
    // What each run billed, as the job says when the page shows it (the page reads the runs every
    // 10 s: its figure may be one read older than the job's, never another).
    for (const [index, run] of [second, first].entries()) {
      const billed = rows.nth(index).locator('td').nth(5);
      await expect
        .poll(
          async () => {
            const shown = await billed.textContent();
            const now = String((await getJob(run.id)).usage?.billedUnits ?? 0);
            return shown === now ? 'same' : `page ${shown}, job ${now}`;
          },
          { timeout: 30_000 },
        )
        .toBe('same');
    }
    expect(await accessibilityProblems(page)).toBe('');
    await screenshot(page, '90-schedules-run-history');

    // The report link of a run opens its report full page, whose changes section says the same.
    await rows.nth(0).getByRole('link', { name: 'the report' }).click();
    await page
      .frameLocator('iframe.report')
      .getByRole('heading', { name: /^Changes since/ })
      .waitFor();
  }, 240_000);
});
