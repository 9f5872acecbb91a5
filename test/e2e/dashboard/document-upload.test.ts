// Documents uploaded from the dashboard to become a batch, in a real browser (Debian's chromium
// through playwright-core) against the real `opflow serve` on the built-in sandbox: .docx, .pdf and
// .txt disclosures made here, with a broken .docx and an .rtf among them. The check reads each as
// `opflow ingest --dry-run` reads a folder's documents and estimates the cost, storing nothing; each
// document that cannot be used is named with its reason, beside the field and in the summary; the
// batch then runs the valid rest to its end, and keeps the refused ones as its problems. Files over
// what the page can send are refused before anything is sent; the same documents again are the same
// batch, started once. The page is axe clean; screenshots go to test-artifacts/dashboard/.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Document, Packer, Paragraph } from 'docx';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killRunningOpflows } from '../local/opflow-process';
import { accessibilityProblems, jobApiClient, screenshot, servedDashboard } from './browser';

const token = 'dashboard-document-upload-token-0123456789';

interface BatchAnswer {
  batch: { id: string; status: string; totals: Record<string, number> };
  problems: { position: string; reason: string }[];
  problemCount: number;
}

describe('documents uploaded from the dashboard as a batch', () => {
  let dir: string;
  let url: string;
  let browser: Browser;
  let page: Page;
  const api = jobApiClient(() => url, token);
  const files: Record<string, string> = {};

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'opflow-e2e-dashboard-documents-'));
    const documents = join(dir, 'disclosures');
    mkdirSync(documents);
    const write = (name: string, bytes: string | Uint8Array) => {
      files[name] = join(documents, name);
      writeFileSync(files[name], bytes);
    };
    write(
      'anode.docx',
      await Packer.toBuffer(
        new Document({ sections: [{ children: [new Paragraph('TTL:(graphene anode)')] }] }),
      ),
    );
    const pdf = await PDFDocument.create();
    pdf.addPage().drawText('TTL:(heat pump dryer)', {
      x: 50,
      y: 700,
      size: 14,
      font: await pdf.embedFont(StandardFonts.Helvetica),
    });
    write('dryer.pdf', await pdf.save());
    write('helmet.txt', 'TTL:(bicycle helmet)');
    write('broken.docx', 'this is not a zip file');
    write('notes.rtf', '{\\rtf1 nothing}');
    // Over what the page sends at once (740 KB together).
    write('large.pdf', Buffer.alloc(800 * 1024, 1));
    ({ url, browser, page } = await servedDashboard(dir, token));
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    killRunningOpflows();
    rmSync(dir, { recursive: true, force: true });
  });

  it('checks each document and estimates before anything starts, names the bad ones, and runs the rest', async () => {
    await page.goto(`${url}/#/batches`);
    await page.getByRole('link', { name: 'Upload a manifest or documents' }).click();
    await page.getByRole('heading', { name: 'Upload a manifest or documents' }).waitFor();
    await page.getByRole('radio', { name: /Documents: one item each/ }).check();
    await page.getByLabel('Workflow (required)').selectOption('patent-count');
    const chooser = page.getByLabel('Documents (required)');
    // The documents' field is its own (not the manifest's id), and no id is on the page twice.
    expect(await chooser.getAttribute('id')).toBe('documents-file');
    const ids = await page
      .locator('[id]')
      .evaluateAll((elements) => elements.map((element) => (element as unknown as { id: string }).id));
    expect(ids.filter((id, index) => ids.indexOf(id) !== index)).toEqual([]);

    // Too much for one request: refused beside the field, in the summary, and nothing sent.
    const sent: string[] = [];
    page.on('request', (request) => {
      const path = new URL(request.url()).pathname;
      if (path.startsWith('/batch-uploads')) sent.push(`${request.method()} ${path}`);
    });
    await chooser.setInputFiles([files['large.pdf']!, files['helmet.txt']!]);
    await page
      .locator('#documents-file-problem')
      .filter({ hasText: /KB together; the page takes up to 740 KB/ })
      .waitFor();
    expect(await chooser.getAttribute('aria-invalid')).toBe('true');
    await page.getByRole('button', { name: 'Check and estimate' }).click();
    await page.getByRole('alert').filter({ hasText: 'The documents were not checked' }).waitFor();
    expect(sent).toEqual([]);

    // Five documents, two of which cannot be used.
    await chooser.setInputFiles(
      ['anode.docx', 'dryer.pdf', 'helmet.txt', 'broken.docx', 'notes.rtf'].map((name) => files[name]!),
    );
    await page.getByRole('heading', { name: '5 documents chosen' }).waitFor();
    await page.getByRole('button', { name: 'Check and estimate' }).click();
    const summary = page
      .getByRole('alert')
      .filter({ hasText: '2 documents would not be used (the rest would)' });
    await summary.waitFor({ timeout: 60_000 });
    const listed = await summary.getByRole('listitem').allTextContents();
    expect(listed).toEqual([
      expect.stringMatching(/^Documents: broken\.docx: file: broken\.docx: cannot read the docx document/),
      expect.stringMatching(/^Documents: notes\.rtf: file: notes\.rtf: unsupported document type "\.rtf"/),
    ]);
    const check = page.getByRole('region', { name: 'What it would do' });
    const tiles = await check.textContent();
    expect(tiles).toMatch(/Documents read\s*5/);
    expect(tiles).toMatch(/Usable\s*3/);
    expect(tiles).toMatch(/Refused\s*2/);
    expect(tiles).toMatch(/Calls\s*about \d+/);
    expect(await check.getByRole('table').textContent()).toContain('broken.docx');
    // The check stored nothing, started nothing.
    expect((await api<{ batches: unknown[] }>('GET', '/batches')).batches).toEqual([]);
    expect(existsSync(join(dir, 'state', 'uploads'))).toBe(false);
    expect(await accessibilityProblems(page)).toBe('');
    await screenshot(page, '80-documents-checked');

    // Started: the three readable documents run; the two others are the batch's problems.
    await page.getByRole('button', { name: 'Start the batch: 3 items' }).click();
    await page.waitForURL(/#\/batches\/[\w.-]+$/);
    const batchId = decodeURIComponent(/#\/batches\/([\w.-]+)$/.exec(page.url())![1]!);
    await page.locator('progress[value="3"][max="3"]').waitFor({ timeout: 120_000 });
    const shown = await api<BatchAnswer>('GET', `/batches/${batchId}`);
    expect(shown.batch.totals).toMatchObject({ succeeded: 3, failed: 0 });
    expect(shown.problems.map((problem) => [problem.position, problem.reason])).toEqual([
      ['broken.docx', expect.stringMatching(/cannot read the docx document/)],
      ['notes.rtf', expect.stringMatching(/unsupported document type/)],
    ]);
    const { jobs } = await api<{ jobs: { input?: unknown; title?: string; status: string }[] }>(
      'GET',
      `/jobs?batchId=${batchId}`,
    );
    expect(jobs.map((job) => job.status)).toEqual(['SUCCEEDED', 'SUCCEEDED', 'SUCCEEDED']);
    expect(await accessibilityProblems(page)).toBe('');
    await screenshot(page, '81-documents-batch');

    // The same documents again are the same batch: nothing starts twice.
    const again = await api<{ batch: { id: string } }>('POST', '/batch-uploads', {
      workflow: 'patent-count',
      documents: ['anode.docx', 'broken.docx', 'dryer.pdf', 'helmet.txt', 'notes.rtf'].map((name) => ({
        name,
        content: readFileSync(files[name]!).toString('base64'),
      })),
    });
    expect(again.batch.id).toBe(batchId);
    expect((await api<{ jobs: unknown[] }>('GET', `/jobs?batchId=${batchId}`)).jobs).toHaveLength(3);
  }, 240_000);
});
