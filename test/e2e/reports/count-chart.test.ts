/**
 * A scheduled patent count's report.html in Debian's chromium: the chart of its time series (inline
 * SVG in the "Changes since" section) is drawn inside the page at desktop and phone widths, above its
 * table, with text of at least 9 px; the count and its cost come first (on the first screen), then the
 * changes, then the detail. Screenshots kept in
 * test-artifacts/reports/.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reportKeys, stepOutputKey } from '../../../shared/engine/report';
import type { Workflow } from '../../../shared/engine/workflow';
import { writeJobReport as writeReport } from '../../../shared/reports/write-job-report';
import { slotKey } from '../../../shared/schedules/slots';
import { workflows } from '../../../shared/workflows';
import { makeJob, T0 } from '../../support/factories';
import { MemoryReportStore } from '../../support/memory-ports';
import { repoRoot } from '../local/opflow-process';

const chromiumPath = process.env.OPFLOW_CHROMIUM ?? '/usr/bin/chromium';
const artefacts = join(repoRoot, 'test-artifacts', 'reports');
const day = 24 * 60 * 60_000;

describe('a scheduled patent count’s chart in chromium', () => {
  let dir: string;
  let browser: Browser;
  let html: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'opflow-e2e-chart-'));
    mkdirSync(artefacts, { recursive: true });
    const reports = new MemoryReportStore();
    const input = {
      query: 'TTL:(solid-state battery) AND TACD:(separator)',
      title: 'Solid-state separators',
    };
    // Eight nightly runs; two on the last day (a trigger beside the slot), as real schedules have.
    const slots = [0, 1, 2, 3, 4, 5, 6, 6.25].map((days) => T0 + days * day);
    const counts = [12_040, 12_102, 12_102, 11_987, 12_230, 12_451, 12_460, 12_463];
    for (const [index, slot] of slots.entries()) {
      const base = makeJob({
        workflow: 'patent-count',
        source: 'schedule',
        idempotencyKey: slotKey('nightly', slot),
        status: 'SUCCEEDED',
        createdAt: slot,
        finishedAt: slot + 4_000,
        usage: { ...makeJob().usage, calls: 1, billedUnits: 1 },
      });
      const job = { ...base, outputs: [stepOutputKey(base.id, 'count')] };
      await reports.put(
        stepOutputKey(job.id, 'count'),
        JSON.stringify({ total_search_result_count: counts[index] }),
        'application/json',
      );
      await writeReport(reports, workflows.get('patent-count') as Workflow, job, input);
      html = reports.text(reportKeys(job.id).html)!;
    }
    writeFileSync(join(dir, 'report.html'), html);
    browser = await chromium.launch({
      executablePath: chromiumPath,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
    });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it.each([
    { name: 'desktop', width: 1280, height: 900 },
    { name: 'phone', width: 390, height: 844 },
  ])(
    'draws the chart inside the page on a $name, above its table',
    async ({ name, width, height }) => {
      const page = await browser.newPage({ viewport: { width, height } });
      try {
        await page.goto(pathToFileURL(join(dir, 'report.html')).href);
        const chart = page.locator('figure.count-chart svg');
        await chart.waitFor();
        const box = (await chart.boundingBox())!;
        expect(box.width).toBeGreaterThan(width / 2 - 40);
        expect(box.x).toBeGreaterThanOrEqual(0);
        expect(box.x + box.width).toBeLessThanOrEqual(width);
        // Every run is a point, each value written out.
        await expect(page.locator('figure.count-chart svg circle').count()).resolves.toBe(8);
        for (const value of ['12,040', '12,463'])
          await expect(
            page.locator('figure.count-chart svg text', { hasText: value }).count(),
          ).resolves.toBeGreaterThan(0);
        // Its text is legible: at least 9 px once the page scales the chart to the screen.
        const textPx = await chart.evaluate(
          (svg: {
            getBoundingClientRect(): { width: number };
            viewBox: { baseVal: { width: number } };
            getAttribute(name: string): string | null;
          }) =>
            (svg.getBoundingClientRect().width / svg.viewBox.baseVal.width) *
            Number(svg.getAttribute('font-size')),
        );
        expect(textPx).toBeGreaterThanOrEqual(9);
        // The count and its cost come first, then what changed since the previous run.
        const cost = (await page.locator('p', { hasText: /^Cost: / }).boundingBox())!;
        const changes = (await page.locator('h2', { hasText: /^Changes since / }).boundingBox())!;
        expect(cost.y).toBeLessThan(changes.y);
        expect(cost.y + cost.height).toBeLessThan(height);
        const table = (await page.locator('table').first().boundingBox())!;
        expect(box.y).toBeLessThan(table.y);
        const overflow = await page
          .locator('html')
          .evaluate(
            (root: { scrollWidth: number; clientWidth: number }) => root.scrollWidth - root.clientWidth,
          );
        expect(overflow).toBeLessThanOrEqual(0);
        await page.screenshot({ path: join(artefacts, `patent-count-chart-${name}.png`), fullPage: true });
      } finally {
        await page.close();
      }
    },
    60_000,
  );

  it('prints with the print stylesheet: serif text over the full width, a PDF of the page', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    try {
      await page.goto(pathToFileURL(join(dir, 'report.html')).href);
      await page.emulateMedia({ media: 'print' });
      const style = await page.locator('body').evaluate((body: object) => {
        const computed = (
          globalThis as unknown as { getComputedStyle(e: object): { fontFamily: string; maxWidth: string } }
        ).getComputedStyle(body);
        return { fontFamily: computed.fontFamily, maxWidth: computed.maxWidth };
      });
      expect(style.fontFamily).toMatch(/Georgia/);
      expect(style.maxWidth).toBe('none');
      const pdf = await page.pdf({ format: 'A4' });
      expect(pdf.subarray(0, 5).toString()).toBe('%PDF-');
      writeFileSync(join(artefacts, 'patent-count-chart-print.pdf'), pdf);
    } finally {
      await page.close();
    }
  }, 60_000);
});
