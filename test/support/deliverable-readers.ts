/**
 * The deliverables read back as a person's software would, by readers other than the libraries that
 * wrote them: a Word report (report.docx, written with the `docx` package) through mammoth, its
 * text and every table as rows of cell texts; a batch workbook (summary.xlsx, written with exceljs)
 * through SheetJS, its sheets as rows keyed by their header. And the checks every e2e test of the
 * deliverables makes of a novelty check's Word report against the job's own result.json (the data,
 * not the Markdown the Word file was made from).
 */
import mammoth from 'mammoth';
import { expect } from 'vitest';
import * as XLSX from 'xlsx';

export interface WordReport {
  text: string;
  html: string;
  /** Every table, each a list of rows of cell texts (inline markup dropped, entities decoded). */
  tables: string[][][];
}

const entities: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'" };
const plain = (html: string) =>
  html.replace(/<[^>]+>/g, '').replace(/&(amp|lt|gt|quot|#39);/g, (_, name: string) => entities[name] ?? '');

/** A .docx read by mammoth; refuses what is not a zip (a Word file) at all. */
export async function readWordReport(bytes: Uint8Array): Promise<WordReport> {
  const buffer = Buffer.from(bytes);
  expect(buffer.subarray(0, 2).toString('latin1'), 'a .docx is a zip').toBe('PK');
  const [{ value: text }, { value: html }] = await Promise.all([
    mammoth.extractRawText({ buffer }),
    mammoth.convertToHtml({ buffer }),
  ]);
  const tables = [...html.matchAll(/<table>(.*?)<\/table>/gs)].map((table) =>
    [...(table[1] as string).matchAll(/<tr>(.*?)<\/tr>/gs)].map((row) =>
      [...(row[1] as string).matchAll(/<t[hd][^>]*>(.*?)<\/t[hd]>/gs)].map((cell) =>
        plain(cell[1] as string).trim(),
      ),
    ),
  );
  return { text, html, tables };
}

export interface Workbook {
  book: XLSX.WorkBook;
  /** A sheet's rows keyed by its first row (empty cells ''). */
  rows(sheet: string): Record<string, unknown>[];
}

/** An .xlsx read by SheetJS (exceljs wrote it). */
export function readWorkbook(bytes: Uint8Array): Workbook {
  const buffer = Buffer.from(bytes);
  expect(buffer.subarray(0, 2).toString('latin1'), 'an .xlsx is a zip').toBe('PK');
  const book = XLSX.read(buffer, { type: 'buffer' });
  return {
    book,
    rows(sheet) {
      const found = book.Sheets[sheet];
      expect(found, `sheet ${sheet} of ${book.SheetNames.join(', ')}`).toBeDefined();
      return XLSX.utils.sheet_to_json<Record<string, unknown>>(found as XLSX.WorkSheet, { defval: '' });
    },
  };
}

/** The parts of a novelty check's result.json the Word report's checks read. */
interface NoveltyResult {
  title: string;
  sandbox?: string;
  steps: {
    features: { data: { feature_text: string; selected?: boolean }[] };
    'agent-result': {
      final_result: {
        features: { tech_feature: string; type?: string; type_for_user?: string; score: number }[];
      }[];
    };
    bibliography?: unknown;
  };
}

/** The mark of a compared feature in the report's features × references table, from the platform's type. */
const markOf = (type: string | undefined) =>
  type === 'public' ? '●' : type === 'obvious' ? '◐' : type === 'unpublic' ? '○' : '[○?]';

/**
 * A novelty check's report.docx, read by mammoth, against the job's result.json: the title, the
 * sandbox notice when (and only when) the job ran on the sandbox, the conclusion, and the features ×
 * references table (the report's claim chart) cell by cell: each selected feature's text in its
 * row and, under each reference, the mark and the score the platform gave that feature.
 */
export async function expectNoveltyWordReport(bytes: Uint8Array, result: NoveltyResult): Promise<WordReport> {
  const word = await readWordReport(bytes);
  expect(word.text).toContain(result.title);
  if (result.sandbox) expect(word.text).toContain('Sandbox data: not real publications.');
  else expect(word.text).not.toContain('Sandbox data');
  expect(word.html).toContain('<h2>Conclusion</h2>');
  const chart = word.tables.find((table) => table[0]?.[0] === 'Id' && table[0]?.[1] === 'Feature');
  expect(chart, 'the features × references table').toBeDefined();
  const [head, ...rows] = chart as string[][];
  const documents = result.steps['agent-result'].final_result;
  expect(head).toHaveLength(2 + documents.length);
  for (const [index, label] of head!.slice(2).entries())
    expect(label).toMatch(new RegExp(`^D${index + 1} \\([XYA]\\)$`));
  const features = result.steps.features.data.filter((feature) => feature.selected !== false);
  const featureRows = rows.filter((row) => /^f\d+$/.test(row[0] ?? ''));
  expect(featureRows.map((row) => row[1])).toEqual(features.map((feature) => feature.feature_text));
  let compared = 0;
  for (const row of featureRows) {
    const feature = row[1] as string;
    for (const [index, document] of documents.entries()) {
      const found = document.features.find((candidate) => candidate.tech_feature === feature);
      const cell = row[2 + index];
      if (!found) {
        expect(cell, `${row[0]} × D${index + 1}`).toBe('—');
        continue;
      }
      compared += 1;
      expect(cell, `${row[0]} × D${index + 1}`).toMatch(
        new RegExp(`^${markOf(found.type_for_user ?? found.type)} ${found.score}$`),
      );
    }
  }
  expect(compared).toBeGreaterThan(0);
  return word;
}

/** The parts of an FTO search's result.json the Word report's checks read. */
interface FtoResult {
  title: string;
  sandbox?: string;
  steps: {
    'agent-result': {
      final_result: {
        patent_id: string;
        risk_level?: string;
        features?: { tech_feature: string; type?: string; score?: number; claim_num?: number }[];
      }[];
    };
  };
}

/**
 * An FTO search's report.docx, read by mammoth, against the job's result.json: the title, the
 * sandbox notice only on the sandbox, the patents table (each patent in order with its risk) and
 * the claim charts, cell by cell: every claim element the platform compared, with its match and
 * score, in a claim chart table, and nothing else there.
 */
export async function expectFtoWordReport(bytes: Uint8Array, result: FtoResult): Promise<WordReport> {
  const word = await readWordReport(bytes);
  expect(word.text).toContain(result.title);
  if (result.sandbox) expect(word.text).toContain('Sandbox data: not real publications.');
  else expect(word.text).not.toContain('Sandbox data');
  expect(word.html).toContain('<h2>Recommendation</h2>');
  const patents = result.steps['agent-result'].final_result;
  expect(patents.length).toBeGreaterThan(0);
  const table = word.tables.find(
    (candidate) => candidate[0]?.[0] === 'Ref' && candidate[0]?.[1] === 'Patent',
  );
  expect(table, 'the patents table').toBeDefined();
  const [head, ...rows] = table as string[][];
  const risk = head!.indexOf('Risk');
  expect(risk).toBeGreaterThan(1);
  expect(rows.map((row) => [row[0], row[1], row[risk]?.toLowerCase()])).toEqual(
    patents.map((patent, index) => [`P${index + 1}`, patent.patent_id, patent.risk_level?.toLowerCase()]),
  );
  const charted = word.tables
    .filter((candidate) => candidate[0]?.join('|') === '#|Claim element|In the product|Match|Score')
    .flatMap((chart) => chart.slice(1).map((row) => `${row[1]} | ${row[3]?.split(' ').pop()} | ${row[4]}`))
    .sort();
  const compared = patents
    .flatMap((patent) => patent.features ?? [])
    .map((feature) => `${feature.tech_feature} | ${feature.type} | ${feature.score}`)
    .sort();
  expect(compared.length).toBeGreaterThan(0);
  expect(charted).toEqual(compared);
  return word;
}
