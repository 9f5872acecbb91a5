/**
 * The resource test of document extraction, through the real bin/opflow.js: crafted documents (a
 * .docx zip bomb, one that lies about its sizes, one under the unpack limit that still needs too much
 * memory, a .pdf whose content inflates to hundreds of MB, a 1.5 GB .txt) are each refused with a
 * line naming the file and the budget that cut it, while the whole process tree (opflow and its
 * extractor children) stays within the ingest function's 1,024 MB and reads far less than the
 * documents would unpack to (the .txt is refused by its size, never read).
 *
 * No wall-clock bound: the run's time is bounded by construction, each extraction being killed at
 * the extraction's time limit (OPFLOW_EXTRACTION_TIMEOUT_MS); what the test asserts is which limit
 * cut each bomb. That limit is set high here (`extractionLimitMs`) so that a loaded machine cannot
 * turn a memory refusal into a time one; the time limit's own cut, and its reason, has a test of its
 * own with 100 ms.
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
/** The extraction's time limit in this run: high, so that only memory and size limits cut (see the header). */
const extractionLimitMs = 120_000;
/** The documents opflow extracts in a child, each within `extractionLimitMs`. */
const extractedDocuments = ['small.docx', 'small.pdf', 'bomb.docx', 'liar.docx', 'dense.docx', 'bomb.pdf'];
/**
 * Not a performance bound: a run that outlives every extraction's limit end to end (plus a minute to
 * start and write) has a hang that no limit cuts; it is killed then, and the test says so.
 */
const hangMs = extractedDocuments.length * extractionLimitMs + 60_000;
const hugeTxtBytes = 1.5 * 1024 ** 3;

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
  truncateSync(join(docs, 'huge.txt'), hugeTxtBytes);
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

/**
 * The bytes `pid` has read (`rchar` of /proc/<pid>/io: every read(2), files and pipes alike), its
 * reaped children's included (the kernel adds a child's I/O to its parent's when it is waited for).
 */
function readBytes(pid: number): number | undefined {
  try {
    return Number(/^rchar:\s+(\d+)$/m.exec(readFileSync(`/proc/${pid}/io`, 'utf8'))?.[1]);
  } catch {
    return undefined;
  }
}

describe('document bombs', () => {
  it(`are refused within ${functionMemoryMb} MB for the process tree, each named with the budget that cut it`, {
    timeout: hangMs + 30_000,
  }, async () => {
    let peakMb = 0;
    let readMb = 0;
    const { code, stdout, stderr, timedOut } = await runChild(
      process.execPath,
      [opflowBin, '--json', 'ingest', 'docs', '--workflow', 'novelty-check', '--dry-run'],
      {
        cwd: dir,
        env: childEnv({
          OPFLOW_DB: join(dir, 'opflow.db'),
          OPFLOW_OUT: join(dir, 'out'),
          [extractionTimeoutVariable]: String(extractionLimitMs),
        }),
        timeoutMs: hangMs,
        onStart: (child) => {
          const sampler = setInterval(() => {
            if (!child.pid) return;
            peakMb = Math.max(peakMb, treeResidentMb(child.pid));
            // opflow's reads with its extractors' (each reaped by opflow once it ends).
            readMb = Math.max(readMb, (readBytes(child.pid) ?? 0) / 1024 ** 2);
          }, 25);
          return () => clearInterval(sampler);
        },
      },
    );
    console.info(
      `document bombs: peak process-tree memory ${Math.round(peakMb)} MB, ${Math.round(readMb)} MB read`,
    );

    expect(timedOut, `opflow still ran after ${hangMs / 1000} s: a hang no extraction limit cut`).toBe(false);
    expect(code, stderr).toBe(1);
    const answer = JSON.parse(stdout) as { items: number; problems: { position: string; reason: string }[] };
    const reasons = Object.fromEntries(answer.problems.map((problem) => [problem.position, problem.reason]));
    expect(answer.items).toBe(2);
    // The budget that cut each: the declared unpacked size, the resident memory, the file's size.
    expect(reasons['bomb.docx']).toMatch(
      /bomb\.docx: the docx document unpacks to \d+ MB \(at most 100 MB\)/,
    );
    // The memory budget: the resident one (the child killed past it) or the heap's (V8 gave up first).
    const memory = `reading it needs more than (${extractionBudget.residentMb}|${extractionBudget.heapMb}) MB of memory: refused`;
    for (const [name, kind] of [
      ['liar.docx', 'docx'],
      ['dense.docx', 'docx'],
      ['bomb.pdf', 'pdf'],
    ] as const)
      expect(reasons[name]).toMatch(
        new RegExp(`${name.replace('.', '\\.')}: the ${kind} document: ${memory}`),
      );
    expect(reasons['huge.txt']).toBe('file: huge.txt: too large (1536 MB; at most 50 MB)');
    // No bomb was left to the time limit (that is the limit of a slow document, not of these).
    expect(JSON.stringify(answer.problems)).not.toContain('s to read');
    expect(peakMb).toBeLessThan(functionMemoryMb);
    expect(peakMb).toBeLessThan(extractionBudget.residentMb + 400);
    // The sampler saw opflow's reads; the .txt (1.5 GB) was refused by its size, never read.
    expect(readMb).toBeGreaterThan(0);
    expect(readMb).toBeLessThan(hugeTxtBytes / 1024 ** 2 / 4);
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
