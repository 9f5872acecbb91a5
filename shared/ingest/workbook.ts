/**
 * A batch's workbook, `batches/<batchId>/summary.xlsx`, beside summary.csv: what an IP team files
 * and forwards. Sheets: Summary (one row per item: docket, title, status, verdict, X/Y/A counts, the
 * closest references, cost and a link to the report), a detail sheet per workflow (one row per
 * reference or patent, from the workflow's `findings` hook), Problems (the lines that could not be
 * used) and About (the batch, its totals, and whether its data is the sandbox's).
 *
 * Written with exceljs's streaming writer, each Summary row committed as it comes, into the report
 * store's `putStream` (a file renamed into place, a multipart upload on S3). exceljs is imported on
 * first use, so no function's cold start carries it.
 *
 * No cell can start a formula: text starting with =, +, -, @, tab or carriage return gets a leading
 * quote (as summary.csv), and no cell is ever written as a formula.
 */
import { PassThrough } from 'node:stream';
import type { Batch, BatchProblem } from '../engine/batch-store';
import type { ReportStore } from '../engine/ports';
import type { BatchFindings } from '../engine/workflow';
import { sandboxHeadline } from '../reports/sandbox-notice';

export const workbookContentType = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';

/** Text that a spreadsheet could read as a formula gets a leading quote (OWASP's CSV injection rule). */
export function formulaSafe(text: string): string {
  return /^[=+\-@\t\r]/.test(text) ? `'${text}` : text;
}

/** One item of the batch, as its Summary row shows it. */
export interface WorkbookItem {
  docket: string;
  id: string;
  title: string;
  workflow: string;
  status: string;
  calls: string;
  billedUnits: string;
  durationS: string;
  /** The report's link relative to the batch folder (or `../../reports/...` in the bucket), or ''. */
  report: string;
  error: string;
  upstream: string;
  jobId: string;
  source: string;
  version: string;
  findings: BatchFindings;
}

export interface WorkbookTotals {
  items: number;
  byStatus: Record<string, number>;
  invalid: number;
  calls: number;
  billedUnits: number;
  sandbox: number;
}

export interface BatchWorkbook {
  add(item: WorkbookItem): void;
  /** Writes the detail, Problems and About sheets and finishes the object (it replaces the old one now). */
  end(totals: WorkbookTotals): Promise<void>;
  abort(error: Error): void;
}

/** Detail rows kept for the workflows' sheets (they are written after the Summary sheet). */
const detailRowsKept = 100_000;

const summaryColumns = [
  { header: 'Docket', key: 'docket', width: 14 },
  { header: 'Id', key: 'id', width: 22 },
  { header: 'Title', key: 'title', width: 40 },
  { header: 'Workflow', key: 'workflow', width: 16 },
  { header: 'Status', key: 'status', width: 12 },
  { header: 'Verdict', key: 'verdict', width: 60 },
  { header: 'X', key: 'x', width: 5 },
  { header: 'Y', key: 'y', width: 5 },
  { header: 'A', key: 'a', width: 5 },
  { header: 'References', key: 'references', width: 11 },
  { header: 'Closest references', key: 'closest', width: 36 },
  { header: 'Closest score (0-100)', key: 'closestScore', width: 12 },
  { header: 'Features matched', key: 'featuresMatched', width: 10 },
  { header: 'Calls', key: 'calls', width: 7 },
  { header: 'Billed units', key: 'billedUnits', width: 9 },
  { header: 'Duration (s)', key: 'durationS', width: 10 },
  { header: 'Report', key: 'report', width: 10 },
  { header: 'Error', key: 'error', width: 40 },
  { header: 'Upstream', key: 'upstream', width: 26 },
  { header: 'Job id', key: 'jobId', width: 28 },
  { header: 'Source', key: 'source', width: 20 },
  { header: 'Version', key: 'version', width: 16 },
] as const;

const numberOrText = (text: string): number | string => {
  if (text.trim() === '') return '';
  const value = Number(text);
  return Number.isFinite(value) ? value : formulaSafe(text);
};

/** A cell's value: numbers as numbers, text made formula-safe. */
const cellOf = (value: string | number): string | number =>
  typeof value === 'number' ? value : formulaSafe(value);

/** A link only to a place of the batch's own (a relative path) or a web page: never `file:` or script. */
const linkable = (link: string) =>
  /^https:\/\//.test(link) || (!/^[a-z][a-z0-9+.-]*:/i.test(link) && !link.startsWith('/') && link !== '');

/** An Excel sheet name: at most 31 characters, none of : \ / ? * [ ]. */
const sheetName = (text: string) => text.replace(/[:\\/?*[\]]/g, '-').slice(0, 31);

function summaryRow(item: WorkbookItem): Record<string, unknown> {
  const { findings } = item;
  const categories = findings.categories;
  return {
    docket: formulaSafe(item.docket),
    id: formulaSafe(item.id),
    title: formulaSafe(item.title),
    workflow: item.workflow,
    status: item.status,
    verdict: formulaSafe(findings.verdict ?? ''),
    x: categories?.X ?? '',
    y: categories?.Y ?? '',
    a: categories?.A ?? '',
    references: numberOrText(findings.references ?? ''),
    closest: formulaSafe(
      (findings.closestReferences ?? (findings.closest ? [findings.closest] : [])).join('; '),
    ),
    closestScore: numberOrText(findings.closestScore ?? ''),
    featuresMatched: numberOrText(findings.featuresMatched ?? ''),
    calls: numberOrText(item.calls),
    billedUnits: numberOrText(item.billedUnits),
    durationS: numberOrText(item.durationS),
    report: linkable(item.report) ? { text: 'report', hyperlink: item.report } : '',
    error: formulaSafe(item.error),
    upstream: formulaSafe(item.upstream),
    jobId: item.jobId,
    source: formulaSafe(item.source),
    version: formulaSafe(item.version),
  };
}

/**
 * Opens the workbook for writing: Summary rows go out as they are added; the rest is written by
 * `end()`. Nothing replaces the stored workbook until `end()` resolves.
 */
export async function openBatchWorkbook(
  store: ReportStore,
  key: string,
  batch: Batch,
  problems: readonly BatchProblem[],
): Promise<BatchWorkbook> {
  const { default: ExcelJS } = await import('exceljs');
  const stream = new PassThrough();
  let done: Promise<void>;
  if (store.putStream) done = store.putStream(key, stream, workbookContentType);
  else {
    const pieces: Buffer[] = [];
    stream.on('data', (piece: Buffer) => pieces.push(piece));
    done = new Promise<void>((resolve, reject) => {
      stream.on('end', resolve);
      stream.on('error', reject);
    }).then(() => store.put(key, Buffer.concat(pieces), workbookContentType));
  }
  // A failure before the end surfaces at end().
  done.catch(() => {});
  const workbook = new ExcelJS.stream.xlsx.WorkbookWriter({
    stream,
    useStyles: true,
    useSharedStrings: false,
  });
  workbook.creator = 'opflow';
  workbook.created = new Date(batch.updatedAt);
  const summary = workbook.addWorksheet('Summary', { views: [{ state: 'frozen', ySplit: 1 }] });
  summary.columns = summaryColumns.map((column) => ({ ...column }));
  summary.autoFilter = { from: { row: 1, column: 1 }, to: { row: 1, column: summaryColumns.length } };
  summary.getRow(1).font = { bold: true };
  summary.getRow(1).commit();
  const details = new Map<string, Record<string, string | number>[]>();
  let detailRows = 0;
  let detailDropped = 0;
  return {
    add(item) {
      const row = summary.addRow(summaryRow(item));
      if (item.findings.verdict) row.getCell('verdict').alignment = { wrapText: true, vertical: 'top' };
      if (item.report && linkable(item.report))
        row.getCell('report').font = { color: { argb: 'FF0969DA' }, underline: true };
      row.commit();
      for (const detail of item.findings.detail ?? []) {
        if (detailRows >= detailRowsKept) {
          detailDropped += 1;
          continue;
        }
        const rows = details.get(item.workflow) ?? [];
        rows.push({ Docket: item.docket, Id: item.id, ...detail });
        details.set(item.workflow, rows);
        detailRows += 1;
      }
    },
    async end(totals) {
      summary.commit();
      for (const [workflow, rows] of details) {
        const sheet = workbook.addWorksheet(sheetName(`${workflow} detail`), {
          views: [{ state: 'frozen', ySplit: 1 }],
        });
        const headers = [...new Set(rows.flatMap((row) => Object.keys(row)))];
        sheet.columns = headers.map((header) => ({
          header,
          key: header,
          width: Math.min(60, Math.max(8, header.length + 2)),
        }));
        sheet.getRow(1).font = { bold: true };
        sheet.getRow(1).commit();
        for (const row of rows)
          sheet
            .addRow(Object.fromEntries(headers.map((header) => [header, cellOf(row[header] ?? '')])))
            .commit();
        sheet.commit();
      }
      const problemSheet = workbook.addWorksheet('Problems');
      problemSheet.columns = [
        { header: 'Id', key: 'id', width: 22 },
        { header: 'Where', key: 'where', width: 24 },
        { header: 'Reason', key: 'reason', width: 80 },
      ];
      problemSheet.getRow(1).font = { bold: true };
      problemSheet.getRow(1).commit();
      for (const problem of problems)
        problemSheet
          .addRow({
            id: formulaSafe(problem.id ?? ''),
            where: formulaSafe(problem.position),
            reason: formulaSafe(problem.reason),
          })
          .commit();
      problemSheet.commit();
      const about = workbook.addWorksheet('About');
      about.columns = [
        { header: 'Batch', key: 'label', width: 24 },
        { header: formulaSafe(batch.name), key: 'value', width: 80 },
      ];
      about.getRow(1).font = { bold: true };
      about.getRow(1).commit();
      const facts: [string, string | number][] = [
        ['Workflow', batch.workflow],
        ['Source', batch.source.uri],
        ['Status', batch.status],
        ['Updated', new Date(batch.updatedAt).toISOString()],
        ['Items', totals.items],
        ...Object.entries(totals.byStatus).map(([status, count]): [string, number] => [`  ${status}`, count]),
        ['Lines not used (see Problems)', totals.invalid],
        ['Calls', totals.calls],
        ['Billed units', totals.billedUnits],
      ];
      if (totals.sandbox > 0)
        facts.push([
          'Simulated data',
          `${sandboxHeadline} ${totals.sandbox} of ${totals.items} items ran on opflow's built-in sandbox: their references, scores and answers are simulated, not the platform's. Set OPFLOW_API_KEY and run them again for real results.`,
        ]);
      if (detailDropped > 0)
        facts.push([
          'Detail sheets',
          `the first ${detailRowsKept} detail rows are shown; ${detailDropped} more are in each job's result.json (results.jsonl lists them).`,
        ]);
      for (const [label, value] of facts) about.addRow({ label, value: cellOf(value) }).commit();
      about.commit();
      await workbook.commit();
      await done;
    },
    abort(error) {
      stream.destroy(error);
    },
  };
}

/**
 * The workbook with its report links rewritten (a download's folder has the reports under
 * `reports/`, where the stored workbook links `../../`): read and written again with exceljs.
 */
export async function relinkWorkbook(
  body: Uint8Array,
  relink: (link: string) => string,
): Promise<Uint8Array> {
  const { default: ExcelJS } = await import('exceljs');
  const workbook = new ExcelJS.Workbook();
  await workbook.xlsx.load(Buffer.from(body) as unknown as ArrayBuffer);
  workbook.eachSheet((sheet) =>
    sheet.eachRow((row) =>
      row.eachCell((cell) => {
        const value = cell.value as { text?: string; hyperlink?: string } | null;
        if (value && typeof value === 'object' && typeof value.hyperlink === 'string')
          cell.value = { text: value.text ?? 'report', hyperlink: relink(value.hyperlink) };
      }),
    ),
  );
  return new Uint8Array(await workbook.xlsx.writeBuffer());
}
