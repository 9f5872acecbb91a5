// Bulk actions from the dashboard in a real browser against the real `opflow serve` on the built-in
// sandbox, with a server token: a bulk retry of cancelled jobs picked by a filter, its dry run's
// count and sample first (nothing changed), a set that changes before the confirmation counted
// again, then the confirmed run and what it did. Each state is axe clean; screenshots go to
// test-artifacts/dashboard/.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killRunningOpflows } from '../local/opflow-process';
import { accessibilityProblems, jobApiClient, screenshot, servedDashboard } from './browser';

const token = 'dashboard-bulk-test-token-0123456789';

interface JobView {
  id: string;
  status: string;
  label?: string;
  runs?: unknown[];
}

describe('bulk actions from the dashboard', () => {
  let dir: string;
  let url: string;
  let browser: Browser;
  let page: Page;
  const api = jobApiClient(() => url, token);
  const job = async (id: string) => (await api<{ job: JobView }>('GET', `/jobs/${id}`)).job;
  const waitForStatus = async (ids: string[], status: string) => {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const statuses = await Promise.all(ids.map(async (id) => (await job(id)).status));
      if (statuses.every((each) => each === status)) return;
      if (Date.now() > deadline) throw new Error(`still ${statuses.join(', ')}, not all ${status}`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  };
  /** A job that stops at its selection point, then is cancelled: a candidate for a retry. */
  const cancelledJob = async (label: string) => {
    const { job: created } = await api<{ job: JobView }>('POST', '/jobs', {
      workflow: 'find-solution',
      input: { text: `A lamp that dims itself at dusk: ${label}.` },
      label,
      selection: { mode: 'manual' },
    });
    await waitForStatus([created.id], 'AWAITING_INPUT');
    await api('POST', `/jobs/${created.id}/cancel`, {});
    await waitForStatus([created.id], 'CANCELLED');
    return created.id;
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'opflow-e2e-dashboard-bulk-'));
    ({ url, browser, page } = await servedDashboard(dir, token));
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    killRunningOpflows();
    rmSync(dir, { recursive: true, force: true });
  });

  it('counts a bulk retry by its filter, changes nothing until confirmed, then retries exactly those jobs', async () => {
    const lamps = [await cancelledJob('lamp one'), await cancelledJob('lamp two')];
    const other = await cancelledJob('kettle');

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Bulk actions' }).click();
    await page.getByRole('heading', { name: 'Bulk actions' }).waitFor();
    await page.getByLabel(/^Retry/).check();
    await page.getByLabel('Workflow').selectOption('find-solution');
    await page.getByLabel('Label contains').fill('lamp');
    await page.getByRole('button', { name: 'Count the jobs' }).click();

    const preview = page.getByRole('region', { name: 'What it would do' });
    await preview.waitFor();
    expect(await preview.getByRole('definition').first().textContent()).toBe('2');
    const sample = preview.getByRole('table', { name: 'The 2 jobs' });
    expect(await sample.getByRole('link').allTextContents()).toEqual(
      expect.arrayContaining(['lamp one', 'lamp two']),
    );
    // A dry run changes nothing.
    for (const id of [...lamps, other]) expect((await job(id)).status).toBe('CANCELLED');
    expect(await accessibilityProblems(page)).toBe('');
    await screenshot(page, '30-bulk-dry-run');

    // Another matching job appears before the confirmation: the set is counted again, not acted on.
    const late = await cancelledJob('lamp three');
    await preview.getByRole('button', { name: 'Retry 2 jobs' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: /changed since they were counted \(2 jobs then, 3 now\)/ })
      .waitFor();
    for (const id of [...lamps, late]) expect((await job(id)).status).toBe('CANCELLED');

    await preview.getByRole('button', { name: 'Retry 3 jobs' }).click();
    const outcome = page.getByRole('region', { name: 'What it did' });
    await outcome.waitFor();
    expect(await outcome.getByRole('definition').allTextContents()).toEqual(['3', '0', '3']);
    expect(await outcome.getByRole('link').allTextContents()).toEqual(
      expect.arrayContaining([...lamps, late]),
    );
    // Exactly the counted jobs run again (each keeps its ended run); the kettle is left as it was.
    for (const id of [...lamps, late]) {
      const retried = await job(id);
      expect(retried.status).not.toBe('CANCELLED');
      expect(retried.runs).toHaveLength(1);
    }
    expect((await job(other)).status).toBe('CANCELLED');
    expect(await accessibilityProblems(page)).toBe('');
    await screenshot(page, '31-bulk-done');

    // Nothing left to retry under the same filter: a new count says so and offers no button to act.
    await page.getByRole('button', { name: 'Count the jobs' }).click();
    await preview.getByText('Nothing matches: change the filter.').waitFor();
    expect(await preview.getByRole('button', { name: /^Retry/ }).isDisabled()).toBe(true);
  }, 180_000);
});
