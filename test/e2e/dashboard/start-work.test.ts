// Starting work from the dashboard in a real browser against the real `opflow serve` on the built-in
// sandbox, with a server token: a job from the form a workflow's input schema makes (its limits
// checked in the page first, its priority and cost cap set), the same job again with its input and
// priority edited before it starts, and a manifest uploaded, checked line by line with its cost
// estimate (nothing stored), then started as a batch that runs to its end without a reload. Each
// page is axe clean; screenshots go to test-artifacts/dashboard/.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killRunningOpflows } from '../local/opflow-process';
import { accessibilityProblems, jobApiClient, screenshot, servedDashboard } from './browser';

const token = 'dashboard-start-test-token-0123456789';

interface JobView {
  id: string;
  status: string;
  workflow: string;
  label?: string;
  priority?: string;
  maxUnits?: number;
}

describe('starting work from the dashboard', () => {
  let dir: string;
  let url: string;
  let browser: Browser;
  let page: Page;

  const api = jobApiClient(() => url, token);
  const jobIdInAddress = () => /#\/jobs\/(\w+)$/.exec(page.url())?.[1];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'opflow-e2e-dashboard-start-'));
    ({ url, browser, page } = await servedDashboard(dir, token));
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    killRunningOpflows();
    rmSync(dir, { recursive: true, force: true });
  });

  it('starts a job from the form of its workflow, its limits checked before anything is sent', async () => {
    await page.getByRole('link', { name: 'New job' }).click();
    await page.getByRole('heading', { name: 'New job' }).waitFor();
    await page.getByLabel('Workflow').selectOption('novelty-check');
    // The fields of the schema, with their limits and defaults as hints.
    const text = page.getByLabel('text (required)');
    await text.waitFor();
    expect(await page.locator('#field-lang').inputValue()).toBe('en');
    expect(await page.locator('#field-bibliography').isChecked()).toBe(true);
    expect(await page.locator('#field-pbdStart-hint').textContent()).toContain('matches');

    // Nothing typed, and a date that is not one: refused in the page, at the fields, nothing sent.
    await page.locator('#field-pbdStart').fill('last spring');
    await page.getByRole('button', { name: 'Start the job' }).click();
    const summary = page.getByRole('alert').filter({ hasText: 'The job was not started' });
    await summary.waitFor();
    expect(await summary.getByRole('listitem').allTextContents()).toEqual([
      'text: is required',
      expect.stringMatching(/^pbdStart: does not match/),
    ]);
    expect(await text.getAttribute('aria-invalid')).toBe('true');
    // The focus goes to the summary; each of its lines leads to its field.
    await page.locator('.error-summary:focus').waitFor();
    await summary.getByRole('link', { name: /^pbdStart/ }).click();
    await page.locator('#field-pbdStart:focus').waitFor();
    await summary.getByRole('link', { name: /^text/ }).click();
    await page.locator('#field-text:focus').waitFor();
    expect((await api<{ jobs: JobView[] }>('GET', '/jobs')).jobs).toHaveLength(0);
    expect(await accessibilityProblems(page)).toBe('');
    await screenshot(page, '20-new-job-refused');

    await page.getByRole('button', { name: 'Fill in the example' }).click();
    expect(await text.inputValue()).toContain('solid-state lithium battery');
    await page.getByLabel('Label').fill('separator from the form');
    await page.getByLabel('Let me choose at its selection points').check();
    await page.getByLabel('Priority', { exact: true }).selectOption('high');
    // A cost cap that is not a number is refused at its field, nothing sent.
    await page.getByLabel('Most billed units').fill('lots');
    await page.getByRole('button', { name: 'Start the job' }).click();
    await page
      .getByRole('alert')
      .filter({ hasText: /Most billed units: must be a whole number/ })
      .waitFor();
    expect(await page.locator('#job-max-units').getAttribute('aria-invalid')).toBe('true');
    // The server names each field at fault too, as data a form maps to its fields.
    const refusal = await api<{ error: { issues: { path: string }[] } }>('POST', '/jobs', {
      workflow: 'novelty-check',
      input: { text: '' },
    });
    expect(refusal.error.issues.map((issue) => issue.path)).toContain('body.input.text');
    expect((await api<{ jobs: JobView[] }>('GET', '/jobs')).jobs).toHaveLength(0);
    await page.getByLabel('Most billed units').fill('500');
    await screenshot(page, '21-new-job-form');
    await page.getByRole('button', { name: 'Start the job' }).click();
    await page.getByRole('heading', { name: /Fibre-reinforced ceramic separator/ }).waitFor();
    const id = jobIdInAddress()!;
    const { job } = await api<{ job: JobView & { selection: { mode: string }; source: string } }>(
      'GET',
      `/jobs/${id}`,
    );
    expect(job).toMatchObject({
      workflow: 'novelty-check',
      label: 'separator from the form',
      source: 'api',
      priority: 'high',
      maxUnits: 500,
    });
    expect(job.selection.mode).toBe('manual');
    const { input } = await api<{ input: Record<string, unknown> }>('GET', `/jobs/${id}/input`);
    expect(input).toMatchObject({
      title: 'Fibre-reinforced ceramic separator',
      lang: 'en',
      pbdStart: '2015-01-01',
    });
    // Its selection point waits for a person, as asked.
    await page.getByRole('heading', { name: 'Waiting for your selection' }).waitFor({ timeout: 60_000 });
  }, 120_000);

  it('runs a job again like an earlier one, its input edited before it starts', async () => {
    const { job: earlier } = await api<{ job: JobView }>('POST', '/jobs', {
      workflow: 'patent-count',
      input: { query: 'TTL:(folding helmet)' },
      label: 'helmets',
      priority: 'low',
    });
    await page.goto(`${url}/#/jobs/${earlier.id}`);
    await page.getByRole('link', { name: 'Run again like this…' }).click();
    await page.getByRole('heading', { name: 'Run again like this' }).waitFor();
    const query = page.getByLabel(/^query/);
    await query.waitFor();
    expect(await query.inputValue()).toBe('TTL:(folding helmet)');
    expect(await page.getByLabel('Label').inputValue()).toBe('helmets');
    expect(await page.getByLabel('Workflow').inputValue()).toBe('patent-count');
    // Its priority comes along, to change like the rest: this run goes ahead of other work.
    expect(await page.getByLabel('Priority', { exact: true }).inputValue()).toBe('low');
    await page.getByLabel('Priority', { exact: true }).selectOption('high');
    await query.fill('TTL:(folding helmet) AND TTL:(magnet)');
    expect(await accessibilityProblems(page)).toBe('');
    await screenshot(page, '22-run-again');
    await page.getByRole('button', { name: 'Start the job' }).click();
    await page.waitForURL(
      (address) => /#\/jobs\/\w+$/.test(address.hash) && !address.hash.endsWith(earlier.id),
    );
    const id = jobIdInAddress()!;
    expect(id).not.toBe(earlier.id);
    const { input, priority } = await api<{ input: Record<string, unknown>; priority: string }>(
      'GET',
      `/jobs/${id}/input`,
    );
    expect(input).toMatchObject({ query: 'TTL:(folding helmet) AND TTL:(magnet)' });
    expect(priority).toBe('high');
    expect((await api<{ job: { priority: string } }>('GET', `/jobs/${earlier.id}`)).job.priority).toBe('low');
    // The earlier job is untouched.
    expect(
      (await api<{ input: Record<string, unknown> }>('GET', `/jobs/${earlier.id}/input`)).input,
    ).toMatchObject({
      query: 'TTL:(folding helmet)',
    });
    await page.locator('.status-SUCCEEDED').first().waitFor({ timeout: 60_000 });
  }, 90_000);

  it('uploads a manifest, shows its bad lines and estimate before anything starts, then runs it as a batch', async () => {
    const manifest = join(dir, 'helmets.jsonl');
    writeFileSync(
      manifest,
      [
        { id: 'q1', query: 'TTL:(helmet AND hinge)' },
        { id: 'q2', query: 'TTL:(helmet AND magnet)' },
        { query: 'a line without its id' },
        { id: 'q4', query: '' },
      ]
        .map((line) => JSON.stringify(line))
        .join('\n'),
    );
    // Every request of the page to the upload routes, to count what a double submit sends.
    const sent: string[] = [];
    page.on('request', (request) => {
      const path = new URL(request.url()).pathname;
      if (path.startsWith('/batch-uploads')) sent.push(`${request.method()} ${path}`);
    });
    await page.goto(`${url}/#/batches`);
    await page.getByRole('link', { name: 'Upload a manifest' }).click();
    await page.getByRole('heading', { name: 'Upload a manifest' }).waitFor();
    // Nothing chosen: refused in the page, at the fields, nothing sent.
    await page.getByRole('button', { name: 'Check and estimate' }).click();
    const notChecked = page.getByRole('alert').filter({ hasText: 'The manifest was not checked' });
    await notChecked.waitFor();
    expect(await notChecked.getByRole('listitem').allTextContents()).toEqual([
      'Manifest file: choose a .jsonl or .csv file',
      'Workflow: choose the workflow its lines are for',
    ]);
    await page.locator('.error-summary:focus').waitFor();
    await notChecked.getByRole('link', { name: /^Workflow/ }).click();
    await page.locator('#upload-workflow:focus').waitFor();
    expect(sent).toEqual([]);

    // Just under the job API's 1 MiB as a file, but over it once its quotes and line ends are
    // escaped in the request's JSON: refused in the page before anything is sent, said at the file
    // in words (its size, its size as sent, how far over the server's limit, what to do).
    const big = join(dir, 'many-helmets.jsonl');
    const line = (n: number) => JSON.stringify({ id: `h${n}`, query: 'TTL:("helmet" AND "hinge")' });
    const bigLines: string[] = [];
    for (let n = 0, bytes = 0; bytes < 1_040_000; n++) {
      bigLines.push(line(n));
      bytes += line(n).length + 1;
    }
    writeFileSync(big, bigLines.join('\n'));
    await page.getByLabel('Manifest file (required)').setInputFiles(big);
    await page.getByLabel('Workflow (required)').selectOption('patent-count');
    await page.getByText('many-helmets.jsonl: first lines').waitFor();
    await page.getByRole('button', { name: 'Check and estimate' }).click();
    await notChecked.waitFor();
    expect(await notChecked.getByRole('listitem').allTextContents()).toEqual([
      expect.stringMatching(
        /^Manifest file: many-helmets\.jsonl is 1,01\d KB, 1,[\d,]+ KB as sent \(its quotes, backslashes and line ends escaped in JSON, characters beyond ASCII as UTF-8 bytes\): [\d,]+ KB over the job API's limit of 1,024 KB a request; split the manifest into smaller files, or run opflow ingest many-helmets\.jsonl on a machine that runs opflow \(it has no size limit\)$/,
      ),
    ]);
    expect(await page.locator('#manifest-file-problem').textContent()).toMatch(/^many-helmets\.jsonl is /);
    expect(sent).toEqual([]);
    expect(await accessibilityProblems(page)).toBe('');
    await screenshot(page, '22-upload-refused');

    // Larger than the page's old 900 KB, with few escapes (CSV: a line end each): it fits, and is sent.
    const roomy = join(dir, 'roomy-helmets.csv');
    const csvLines = ['id,query'];
    for (let n = 0, bytes = 0; bytes < 960_000; n++) {
      csvLines.push(`r${n},TTL:(helmet AND hinge AND latch AND dome AND shell AND magnet AND folding)`);
      bytes += csvLines.at(-1)!.length + 1;
    }
    writeFileSync(roomy, csvLines.join('\n'));
    await page.getByLabel('Manifest file (required)').setInputFiles(roomy);
    await page.getByText('roomy-helmets.csv: first lines').waitFor();
    await page.getByRole('button', { name: 'Check and estimate' }).click();
    await page.getByRole('region', { name: 'What it would do' }).waitFor({ timeout: 60_000 });
    expect(sent).toEqual(['POST /batch-uploads/check']);
    const items = (csvLines.length - 1).toLocaleString('en');
    await page.getByRole('button', { name: new RegExp(`^Start the batch: ${items} items`) }).waitFor();
    sent.length = 0;

    await page.getByLabel('Manifest file (required)').setInputFiles(manifest);
    await page.getByLabel('Workflow (required)').selectOption('patent-count');
    await page.getByText('helmets.jsonl: first lines').waitFor();
    // The problems of the fields changed are gone.
    await notChecked.waitFor({ state: 'detached' });
    await page.getByRole('button', { name: 'Check and estimate' }).click();
    const check = page.getByRole('region', { name: 'What it would do' });
    await check.waitFor();
    const refused = check.getByRole('table', { name: /2 lines that would not be used/ });
    expect(await refused.textContent()).toContain('line 3');
    expect(await refused.textContent()).toContain('line 4');
    expect(await check.getByRole('definition').allTextContents()).toEqual(
      expect.arrayContaining(['4', '2', expect.stringMatching(/^about \d+/)]),
    );
    // Each refused line is also a problem of the file: beside it, and in the summary, which takes the focus.
    const lines = page.getByRole('alert').filter({ hasText: '2 lines of helmets.jsonl would not be used' });
    await lines.waitFor();
    const listed = await lines.getByRole('listitem').allTextContents();
    expect(listed).toEqual([
      expect.stringMatching(/^Manifest file: line 3: .*id/),
      expect.stringMatching(/^Manifest file: line 4 \(id q4\): .*query/),
    ]);
    await page.locator('.error-summary:focus').waitFor();
    const beside = page.locator('#manifest-file-problem');
    expect(await beside.textContent()).toContain(listed[0]!.replace('Manifest file: ', ''));
    expect(await beside.textContent()).toContain('line 4 (id q4)');
    expect(await page.getByLabel('Manifest file (required)').getAttribute('aria-invalid')).toBe('true');
    expect(await page.getByLabel('Manifest file (required)').getAttribute('aria-describedby')).toContain(
      'manifest-file-problem',
    );
    // A check stores nothing: no batch, no job.
    expect((await api<{ batches: unknown[] }>('GET', '/batches')).batches).toHaveLength(0);
    expect(await accessibilityProblems(page)).toBe('');
    await screenshot(page, '23-upload-checked');

    // Changing the manifest's options asks for a new check before it can start, and forgets the old one's lines.
    await page.getByLabel('Batch name').fill('helmet-queries');
    await page.getByRole('button', { name: /^Start the batch/ }).waitFor({ state: 'detached' });
    await lines.waitFor({ state: 'detached' });
    await page.getByRole('button', { name: 'Check and estimate' }).click();
    const startButton = page.getByRole('button', { name: 'Start the batch: 2 items' });
    await startButton.waitFor();
    // Two clicks in the same moment, before the page can redraw the button as busy: one batch is asked for.
    sent.length = 0;
    await startButton.evaluate((button: { click(): void }) => {
      button.click();
      button.click();
    });
    await page.getByRole('heading', { name: /helmet-queries/ }).waitFor();
    expect(sent).toEqual(['POST /batch-uploads']);
    // The batch moves to its end without a reload.
    await page.locator('progress[value="2"][max="2"]').waitFor({ timeout: 60_000 });
    const { batches } = await api<{ batches: { id: string; items: number }[] }>('GET', '/batches');
    expect(batches).toMatchObject([{ id: 'helmet-queries', items: 2 }]);
    expect(await accessibilityProblems(page)).toBe('');
    await screenshot(page, '24-uploaded-batch');
  }, 120_000);

  it('fits a phone’s 390 px on every page: nothing reaches past the screen’s edge', async () => {
    // With the jobs and the batch the tests above started (when run alone: a job of its own); a wide
    // table scrolls inside its own card.
    const { jobs } = await api<{ jobs: { id: string }[] }>('GET', '/jobs');
    const job =
      jobs[0]?.id ??
      (
        await api<{ job: { id: string } }>('POST', '/jobs', {
          workflow: 'patent-count',
          input: { query: 'TTL:(hinge)' },
        })
      ).job.id;
    const { batches } = await api<{ batches: { id: string }[] }>('GET', '/batches');
    const pages = ['#/', `#/jobs/${job}`, '#/new', '#/upload', '#/batches']
      .concat(batches.map((batch) => `#/batches/${batch.id}`).slice(0, 1))
      .concat(['#/overview', '#/schedules', '#/webhooks', '#/bulk']);
    await page.setViewportSize({ width: 390, height: 844 });
    try {
      const widths: Record<string, number> = {};
      for (const hash of pages) {
        await page.goto(`${url}/${hash}`);
        await page.locator('main h1').waitFor();
        await expect.poll(() => page.locator('[aria-busy="true"]').count()).toBe(0);
        widths[hash] = await page
          .locator('html')
          .evaluate((html) => (html as unknown as { scrollWidth: number }).scrollWidth);
      }
      expect(widths).toEqual(Object.fromEntries(pages.map((hash) => [hash, 390])));
      // A batch's jobs are readable: the job's cell takes the screen's width (its title is not
      // wrapped a word a line: it had a quarter), the table needs no sideways scroll, the hidden
      // columns (status first) are said under the title, and it stays axe clean.
      const batch =
        batches[0]?.id ??
        (
          await api<{ batch: { id: string } }>('POST', '/batch-uploads', {
            fileName: 'phone.jsonl',
            manifest: JSON.stringify({ id: 'p1', query: 'TTL:(folding helmet with a magnetic latch)' }),
            workflow: 'patent-count',
          })
        ).batch.id;
      await page.goto(`${url}/#/batches/${batch}`);
      const jobsTable = page.getByRole('table', { name: /\d+ jobs?/ });
      await jobsTable.locator('tbody tr').first().waitFor();
      const firstCell = jobsTable.locator('tbody tr td').first();
      const cellWidth = (await firstCell.boundingBox())!.width;
      expect(cellWidth).toBeGreaterThan(390 * 0.75);
      expect(await firstCell.locator('.narrow-only').textContent()).toMatch(
        /^(Queued|Running|Succeeded)\s*step .+ · \d+ calls · \d+ billed units · updated/,
      );
      expect(
        await jobsTable.evaluate((table) => {
          const box = (table as unknown as { parentElement: { scrollWidth: number; clientWidth: number } })
            .parentElement;
          return box.scrollWidth - box.clientWidth;
        }),
      ).toBe(0);
      expect(await accessibilityProblems(page)).toBe('');
      await screenshot(page, '25-batch-390');
    } finally {
      await page.setViewportSize({ width: 1280, height: 900 });
    }
  }, 120_000);
});
