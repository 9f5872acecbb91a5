/**
 * A batch's workbook (summary.xlsx) through the real bin on the built-in sandbox, read back by a
 * reader other than the library that wrote it (SheetJS; exceljs writes it): one Summary row per item
 * matching summary.csv, X/Y/A counts agreeing with the detail sheet, the bad line in Problems with
 * its line number, the sandbox said in About, no formula and no cell starting one, report links
 * that open from the batch folder and, after `opflow batch --download`, from the downloaded folder;
 * and the same bytes from `opflow serve`'s `GET /batches/{id}/outputs/summary.xlsx`.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as XLSX from 'xlsx';
import { childEnv, killRunningOpflows, runOpflow } from '../local/opflow-process';
import { startServe } from '../local/serve-process';

type Cell = { v?: unknown; f?: string; t?: string; l?: { Target: string } };

function rowsOf(sheet: XLSX.WorkSheet): Record<string, unknown>[] {
  return XLSX.utils.sheet_to_json<Record<string, unknown>>(sheet, { defval: '' });
}

function cellsOf(book: XLSX.WorkBook): [string, Cell][] {
  return book.SheetNames.flatMap((name) =>
    Object.entries(book.Sheets[name] as Record<string, Cell>)
      .filter(([address]) => !address.startsWith('!'))
      .map(([address, cell]): [string, Cell] => [`${name}!${address}`, cell]),
  );
}

describe('the batch workbook', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'opflow-e2e-xlsx-'));
  });
  afterAll(() => {
    killRunningOpflows();
    rmSync(dir, { recursive: true, force: true });
  });

  it('lists every item with its verdict, categories and report, and reads back in another library', async () => {
    const examples = readFileSync(resolve('examples/manifests/disclosures.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .slice(0, 2);
    const hostile = JSON.stringify({
      id: '=1+1',
      title: '=HYPERLINK("http://evil.example/","click")',
      text: 'A lamp whose shade turns with the sun to keep the light on a desk even as the day goes on.',
    });
    writeFileSync(join(dir, 'batch.jsonl'), `${[...examples, hostile, '{"id": "broken"'].join('\n')}\n`);
    const env = childEnv({
      OPFLOW_SANDBOX_SPEED: '300',
      OPFLOW_DB: join(dir, 'jobs.db'),
      OPFLOW_OUT: join(dir, 'out'),
    });
    const run = await runOpflow(
      ['ingest', 'batch.jsonl', '--workflow', 'novelty-check', '--batch', 'wb', '--select', 'auto'],
      { env, cwd: dir },
    );
    // Exit 1: a bad line (the last one), reported and kept in Problems; every valid item ran.
    expect(run.code, run.stderr).toBe(1);
    expect(run.stdout).toContain('line 4: not valid JSON');
    const folder = join(dir, 'out', 'batches', 'wb');
    const csv: Record<string, string>[] = parse(readFileSync(join(folder, 'summary.csv'), 'utf8'), {
      columns: true,
    });
    const book = XLSX.readFile(join(folder, 'summary.xlsx'));
    expect(book.SheetNames).toEqual(['Summary', 'novelty-check detail', 'Problems', 'About']);

    const summary = rowsOf(book.Sheets.Summary as XLSX.WorkSheet);
    expect(summary.map((row) => row.Id)).toEqual(csv.map((row) => row.id));
    expect(summary.map((row) => row.Status)).toEqual(csv.map((row) => row.status));
    expect(summary.map((row) => row['Job id'])).toEqual(csv.map((row) => row.job_id));
    expect(summary[2]?.Title).toBe(`'=HYPERLINK("http://evil.example/","click")`);
    expect(summary[2]?.Id).toBe("'=1+1");

    const detail = rowsOf(book.Sheets['novelty-check detail'] as XLSX.WorkSheet);
    for (const row of summary) {
      expect(row.Status, String(row.Error)).toBe('SUCCEEDED');
      expect(String(row.Verdict).length).toBeGreaterThan(10);
      const own = detail.filter((line) => line.Id === row.Id);
      expect(own.length).toBe(row.References);
      for (const category of ['X', 'Y', 'A'] as const)
        expect(own.filter((line) => line.Category === category).length, `${row.Id} ${category}`).toBe(
          row[category],
        );
      expect(String(row['Closest references'])).toContain(String(csv.find((c) => c.id === row.Id)?.closest));
      expect(row.Upstream).toBe('sandbox (simulated data)');
    }

    const problems = rowsOf(book.Sheets.Problems as XLSX.WorkSheet);
    expect(problems).toHaveLength(1);
    expect(problems[0]?.Where).toBe('line 4');

    const about = rowsOf(book.Sheets.About as XLSX.WorkSheet);
    expect(about.find((row) => row.Batch === 'Simulated data')?.wb).toMatch(
      /3 of 3 items ran on opflow's built-in sandbox/,
    );

    for (const [where, cell] of cellsOf(book)) {
      expect(cell.f, where).toBeUndefined();
      if (typeof cell.v === 'string') expect(/^[=+\-@\t\r]/.test(cell.v), `${where}: ${cell.v}`).toBe(false);
    }

    const links = cellsOf(book)
      .filter(([, cell]) => cell.l)
      .map(([, cell]) => cell.l?.Target as string);
    expect(links).toHaveLength(3);
    for (const link of links) expect(existsSync(resolve(folder, link)), link).toBe(true);

    const download = await runOpflow(['batch', 'wb', '--download', join(dir, 'copy')], { env, cwd: dir });
    // Exit 1 again: `opflow batch` says the batch had bad lines; the download itself is whole.
    expect(download.code, download.stderr).toBe(1);
    expect(download.stdout).toMatch(/downloaded to .*: 3 reports/);
    const copied = XLSX.readFile(join(dir, 'copy', 'summary.xlsx'));
    const copiedLinks = cellsOf(copied)
      .filter(([, cell]) => cell.l)
      .map(([, cell]) => cell.l?.Target as string);
    expect(copiedLinks).toHaveLength(3);
    for (const link of copiedLinks) {
      expect(link).toMatch(/^reports\/[^/]+\/report\.html$/);
      expect(existsSync(join(dir, 'copy', link)), link).toBe(true);
    }
    expect(dirname(copiedLinks[0] as string)).not.toBe('.');

    const { run: serve, url } = await startServe([], { env, cwd: dir });
    try {
      const answer = await fetch(new URL('batches/wb/outputs/summary.xlsx', url));
      expect(answer.status).toBe(200);
      expect(answer.headers.get('content-type')).toBe(
        'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
      );
      expect(answer.headers.get('content-disposition')).toBe('attachment; filename="summary.xlsx"');
      const served = Buffer.from(await answer.arrayBuffer());
      expect(served.equals(readFileSync(join(folder, 'summary.xlsx')))).toBe(true);
    } finally {
      serve.child.kill('SIGTERM');
      await serve.done;
    }
  }, 240_000);
});
