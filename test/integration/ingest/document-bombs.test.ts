/**
 * The resource test of document extraction, through the real bin/opflow.js: crafted documents (a
 * .docx zip bomb, one that lies about its sizes, one under the unpack limit that still needs too much
 * memory, a .pdf whose content inflates to hundreds of MB, a 1.5 GB .txt) are each refused with a
 * line naming the file and the budget, while the whole process tree (opflow and its extractor
 * children) stays within the ingest function's 1,024 MB and the run within its time bound. The
 * extraction's time limit is set to that bound there (OPFLOW_EXTRACTION_TIMEOUT_MS), so that a loaded
 * machine cannot turn a memory refusal into a time one; the time limit has a test of its own, with a
 * small setting.
 */
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { extractDocument, extractionBudget } from '../../../shared/ingest/documents';
import { extractionTimeoutMs, extractionTimeoutVariable } from '../../../shared/ingest/extraction-timeout';
import { childEnv, opflowBin } from '../../e2e/local/opflow-process';
import { runChild } from '../../support/child-process';
import { docxWithParagraphs, pdfWithLines } from '../../support/document-bombs';

/** The ingest function's memory (infra/lib/inbox-ingestion.ts). */
const functionMemoryMb = 1024;
const timeBoundMs = 120_000;

let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'opflow-bombs-'));
  const docs = join(dir, 'docs');
  mkdirSync(docs);
  writeFileSync(join(docs, 'small.docx'), docxWithParagraphs(10));
  writeFileSync(join(docs, 'small.pdf'), pdfWithLines(10));
  writeFileSync(join(docs, 'bomb.docx'), docxWithParagraphs(15_000_000));
  writeFileSync(join(docs, 'liar.docx'), docxWithParagraphs(15_000_000, 1000));
  writeFileSync(join(docs, 'dense.docx'), docxWithParagraphs(1_400_000));
  writeFileSync(join(docs, 'bomb.pdf'), pdfWithLines(5_000_000));
  writeFileSync(join(docs, 'huge.txt'), '');
  truncateSync(join(docs, 'huge.txt'), 1.5 * 1024 ** 3);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The resident memory (MB) of `pid` and all its descendants, from /proc. */
function treeResidentMb(pid: number): number {
  const parents = new Map<number, number>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      parents.set(Number(name), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {}
  }
  const tree = new Set([pid]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const [child, parent] of parents)
      if (tree.has(parent) && !tree.has(child)) {
        tree.add(child);
        grew = true;
      }
  }
  let kb = 0;
  for (const member of tree) {
    try {
      kb += Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${member}/status`, 'utf8'))?.[1] ?? 0);
    } catch {}
  }
  return kb / 1024;
}

describe('document bombs', () => {
  it(`are refused within ${functionMemoryMb} MB for the process tree and ${timeBoundMs / 1000} s, each named with its budget`, {
    timeout: timeBoundMs + 30_000,
  }, async () => {
    let peakMb = 0;
    const { code, stdout, stderr, elapsedMs } = await runChild(
      process.execPath,
      [opflowBin, '--json', 'ingest', 'docs', '--workflow', 'novelty-check', '--dry-run'],
      {
        cwd: dir,
        env: childEnv({
          OPFLOW_DB: join(dir, 'opflow.db'),
          OPFLOW_OUT: join(dir, 'out'),
          [extractionTimeoutVariable]: String(timeBoundMs),
        }),
        timeoutMs: timeBoundMs,
        onStart: (child) => {
          const sampler = setInterval(() => {
            if (child.pid) peakMb = Math.max(peakMb, treeResidentMb(child.pid));
          }, 25);
          return () => clearInterval(sampler);
        },
      },
    );
    console.info(`document bombs: ${elapsedMs} ms, peak process-tree memory ${Math.round(peakMb)} MB`);

    expect(code, stderr).toBe(1);
    const answer = JSON.parse(stdout) as { items: number; problems: { position: string; reason: string }[] };
    const reasons = Object.fromEntries(answer.problems.map((problem) => [problem.position, problem.reason]));
    expect(answer.items).toBe(2);
    expect(reasons['bomb.docx']).toMatch(
      /bomb\.docx: the docx document unpacks to \d+ MB \(at most 100 MB\)/,
    );
    expect(reasons['liar.docx']).toMatch(
      /liar\.docx: the docx document: reading it needs more than \d+ MB of memory/,
    );
    expect(reasons['dense.docx']).toMatch(
      /dense\.docx: the docx document: reading it needs more than \d+ MB of memory/,
    );
    expect(reasons['bomb.pdf']).toMatch(
      /bomb\.pdf: the pdf document: reading it needs more than \d+ MB of memory/,
    );
    expect(reasons['huge.txt']).toBe('file: huge.txt: too large (1536 MB; at most 50 MB)');
    expect(peakMb).toBeLessThan(functionMemoryMb);
    expect(peakMb).toBeLessThan(extractionBudget.residentMb + 400);
    expect(elapsedMs).toBeLessThan(timeBoundMs);
  });

  it(`refuse a document that takes longer than ${extractionTimeoutVariable} with the time reason`, async () => {
    const before = process.env[extractionTimeoutVariable];
    process.env[extractionTimeoutVariable] = '100';
    try {
      // Seconds of reading (20,000 paragraphs), far under the memory budget: stopped at 0.1 s.
      await expect(extractDocument('slow.docx', docxWithParagraphs(20_000))).rejects.toThrow(
        'the docx document: it took more than 0.1 s to read: refused',
      );
    } finally {
      if (before === undefined) delete process.env[extractionTimeoutVariable];
      else process.env[extractionTimeoutVariable] = before;
    }
  });

  it(`take ${extractionTimeoutVariable} as a whole number of ms from 100 to 900000, or refuse it by name`, () => {
    expect(extractionTimeoutMs({}, extractionBudget.timeMs)).toBe(extractionBudget.timeMs);
    expect(extractionTimeoutMs({ [extractionTimeoutVariable]: ' 45000 ' }, extractionBudget.timeMs)).toBe(
      45_000,
    );
    for (const [raw, why] of [
      ['soon', 'must be a number of milliseconds'],
      ['1.5', 'must be a whole number of milliseconds'],
      ['99', 'must be at least 100 (ms)'],
      ['900001', 'must be at most 900000 (ms, 15 minutes)'],
    ])
      expect(() =>
        extractionTimeoutMs({ [extractionTimeoutVariable]: raw }, extractionBudget.timeMs),
      ).toThrow(`${extractionTimeoutVariable} ${why}, got "${raw}"`);
  });
});
