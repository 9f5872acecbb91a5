/**
 * A batch's outputs beside the job reports (`batches/<batchId>/` in the report store: under the
 * output folder locally, in the bucket on AWS): summary.csv (one row per item with the workflow's
 * key findings), summary.xlsx (the same rows with verdicts and X/Y/A counts, a detail sheet per
 * workflow: workbook.ts), results.jsonl, failed.jsonl (bad lines and failed items, with where and
 * why) and index.html (totals, a sortable table, a link to every report, the failures). Rewritten every few
 * seconds while the batch runs, so an interrupted batch has a partial summary, and once at the end;
 * and again when a job of the finished batch ends again (a retry, a redrive: ./settled-batch.ts),
 * always whole from the items and their jobs as they are, never patched.
 */
import { dirname, relative } from 'node:path';
import type { Batch, BatchItem, BatchProblem, BatchStore } from '../engine/batch-store';
import type { JobDeps } from '../engine/deps';
import { isTerminal, type Job } from '../engine/job-record';
import { reportKeys } from '../engine/report';
import { isSandboxData } from '../engine/upstream-identity';
import type { BatchFindings } from '../engine/workflow';
import { docketOf } from '../reports/disclosure-facts';
import { sandboxHeadline } from '../reports/sandbox-notice';
import { workflows } from '../workflows';
import { openOutput } from './output-writer';
import { batchOutputKeys, recordOutputsWritten } from './outputs-record';
import { formulaSafe, openBatchWorkbook } from './workbook';

export { batchOutputKeys };

/** The columns of summary.csv. */
export const summaryColumns = [
  'id',
  'version',
  'title',
  'workflow',
  'status',
  'key_findings',
  'references',
  'closest',
  'closest_score',
  'features_matched',
  'calls',
  'billed_units',
  'duration_s',
  'report',
  'error',
  'job_id',
  'source',
  'upstream',
  'docket',
] as const;
type Row = Record<(typeof summaryColumns)[number], string>;

export interface OutputDeps {
  engine: JobDeps;
  batches: BatchStore;
}

/** A finished job's findings: summary.csv's cells and the workflow's own (the workbook's). */
interface JobFindings {
  cells: Partial<Row>;
  own: BatchFindings;
}

/**
 * Findings of finished jobs, read once per process, by job id and version: a job retried after it
 * ended (a FAILED item run again to SUCCEEDED) is read again at its new end.
 */
const findingsCache = new Map<string, JobFindings>();
/** Detail rows held by the cache: it is cleared past this many, as past 20,000 jobs. */
const cachedDetailRowsMax = 200_000;
let cachedDetailRows = 0;

/** The workflow's key findings from a finished job's result.json: its summary, and its `findings` hook's. */
export function keyFindings(workflow: string, result: Record<string, unknown>): Partial<Row> {
  return findingsOfResult(workflow, result).cells;
}

function findingsOfResult(workflow: string, result: Record<string, unknown>): JobFindings {
  const cells: Partial<Row> = {};
  if (typeof result.summary === 'string') cells.key_findings = result.summary;
  const own =
    workflows.get(workflow)?.findings?.({
      steps: (result.steps ?? {}) as Record<string, unknown>,
      input: result.input,
      selections: (result.selections ?? {}) as Record<string, string[]>,
      context: (result.context ?? {}) as Record<string, unknown>,
    }) ?? {};
  if (own.references !== undefined) cells.references = own.references;
  if (own.closest !== undefined) cells.closest = own.closest;
  if (own.closestScore !== undefined) cells.closest_score = own.closestScore;
  if (own.featuresMatched !== undefined) cells.features_matched = own.featuresMatched;
  return { cells, own };
}

async function findingsOf(deps: OutputDeps, job: Job): Promise<JobFindings> {
  const cacheKey = `${job.id}:${job.version}`;
  const cached = findingsCache.get(cacheKey);
  if (cached) return cached;
  let findings: JobFindings = { cells: {}, own: {} };
  const key = reportKeys(job.id).result;
  if (job.status === 'SUCCEEDED' && job.outputs.includes(key)) {
    const stored = await deps.engine.reports.get(key);
    if (stored) {
      try {
        findings = findingsOfResult(job.workflow, JSON.parse(Buffer.from(stored.body).toString('utf8')));
      } catch {
        findings = { cells: {}, own: {} };
      }
    }
  }
  if (isTerminal(job.status)) {
    if (findingsCache.size > 20_000 || cachedDetailRows > cachedDetailRowsMax) {
      findingsCache.clear();
      cachedDetailRows = 0;
    }
    findingsCache.set(cacheKey, findings);
    cachedDetailRows += findings.own.detail?.length ?? 0;
  }
  return findings;
}

/**
 * A CSV cell: quoted when it must be, and never read as a formula by a spreadsheet (a cell starting
 * with =, +, -, @, tab or carriage return gets a leading quote, as OWASP's CSV injection guidance says).
 */
export function csvCell(text: string): string {
  const value = formulaSafe(text);
  return /[",\n\r;]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}
const escapeHtml = (text: string) =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

export interface BatchTotals {
  items: number;
  pending: number;
  byStatus: Record<string, number>;
  invalid: number;
  calls: number;
  billedUnits: number;
  /** Items whose job ran on the sandbox (simulated data). */
  sandbox: number;
}

/**
 * Writes the four outputs of a batch from its items (in order) and their jobs, and returns the
 * totals. Items are read a page at a time and every row goes straight to its outputs (streamed to
 * the report store), so memory does not grow with the batch; each finished job's findings are read
 * once.
 */
export async function writeBatchOutputs(
  deps: OutputDeps,
  batch: Batch,
  options: { record?: boolean } = {},
): Promise<BatchTotals> {
  const started = Date.now();
  const keys = batchOutputKeys(batch.id);
  const reports = deps.engine.reports;
  const totals: BatchTotals = {
    items: 0,
    pending: 0,
    byStatus: {},
    invalid: 0,
    calls: 0,
    billedUnits: 0,
    sandbox: 0,
  };
  const versions = new Map<string, number>();
  // Locally the index is a file beside the reports: link them relatively, so the folder can move.
  const indexLocation = await reports.link(keys.index);
  const linkBase = indexLocation.startsWith('/') ? dirname(indexLocation) : undefined;
  const problems: BatchProblem[] = await deps.batches.listProblems(batch.id, batch.run);
  totals.invalid = problems.length;
  const summary = openOutput(reports, keys.summary, 'text/csv; charset=utf-8');
  const results = openOutput(reports, keys.results, 'application/x-ndjson');
  const failed = openOutput(reports, keys.failed, 'application/x-ndjson');
  const index = openOutput(reports, keys.index, 'text/html; charset=utf-8');
  const workbook = await openBatchWorkbook(reports, keys.workbook, batch, problems);
  const writers = [summary, results, failed, index];
  const failedRows: string[] = [];
  try {
    await summary.write(`${summaryColumns.join(',')}\n`);
    // Bad lines first, in source order; then failed items.
    for (const problem of problems)
      await failed.write(
        `${JSON.stringify({
          kind: 'input',
          id: problem.id,
          source: problem.position,
          record: problem.record,
          reason: problem.reason,
        })}\n`,
      );
    await index.write(indexHead(batch));
    for (let from = 0; ; ) {
      const page = await deps.batches.listItems(batch.id, from, 500);
      const jobs = await jobsOfItems(
        deps,
        batch.tenant,
        page.filter((item) => item.seq < batch.admitted),
      );
      for (const item of page) {
        const version = (versions.get(item.id) ?? 0) + 1;
        versions.set(item.id, version);
        const job = jobs.get(item.key);
        const { row, own } = await rowOf(deps, item, version, job, linkBase);
        totals.items += 1;
        if (!job) totals.pending += 1;
        totals.byStatus[row.status] = (totals.byStatus[row.status] ?? 0) + 1;
        totals.calls += job?.usage.calls ?? 0;
        totals.billedUnits += job?.usage.billedUnits ?? 0;
        if (job && isSandboxData(job)) totals.sandbox += 1;
        await summary.write(`${summaryColumns.map((column) => csvCell(row[column])).join(',')}\n`);
        workbook.add({
          docket: row.docket,
          id: row.id,
          title: row.title,
          workflow: row.workflow,
          status: row.status,
          calls: row.calls,
          billedUnits: row.billed_units,
          durationS: row.duration_s,
          report: row.report,
          error: row.error,
          upstream: row.upstream,
          jobId: row.job_id,
          source: row.source,
          version: row.version,
          findings: own,
        });
        if (job && isTerminal(job.status))
          await results.write(
            `${JSON.stringify({ ...row, itemKey: item.key, contentHash: item.contentHash, run: item.run })}\n`,
          );
        if (
          job &&
          (job.status === 'FAILED' || job.status === 'CANCELLED') &&
          failedRows.length < failuresShown
        )
          failedRows.push(
            `<tr><td>${escapeHtml(row.id)}</td><td>${escapeHtml(row.source)}</td><td><span class="s ${escapeHtml(row.status)}">${escapeHtml(row.status)}</span></td><td>${escapeHtml(row.error)}</td></tr>`,
          );
        if (job && (job.status === 'FAILED' || job.status === 'CANCELLED'))
          await failed.write(
            `${JSON.stringify({
              kind: 'job',
              id: item.id,
              source: item.position,
              jobId: job.id,
              status: job.status,
              reason: row.error,
            })}\n`,
          );
        await index.write(`${htmlRow(row)}\n`);
      }
      if (page.length < 500) break;
      from = (page[page.length - 1]?.seq ?? from) + 1;
    }
    await index.write(indexTail(batch, totals, problems, failedRows));
    for (const writer of writers) await writer.end();
    await workbook.end(totals);
  } catch (error) {
    for (const writer of writers) writer.abort(error as Error);
    workbook.abort(error as Error);
    throw error;
  }
  if (options.record !== false) {
    await recordOutputsWritten(deps.batches, batch, { at: Date.now(), costMs: Date.now() - started });
  }
  return totals;
}

/**
 * The jobs of a page of released items, by item key: on DynamoDB a few BatchGetItem requests
 * instead of two reads per item (a 1,000-item batch's outputs were 2,000 round trips, rewritten
 * every few seconds while it runs).
 */
async function jobsOfItems(
  deps: OutputDeps,
  tenant: string,
  items: readonly BatchItem[],
): Promise<Map<string, Job>> {
  const keys = items.map((item) => item.key);
  const store = deps.engine.store;
  if (store.findByIdempotencyKeys) return store.findByIdempotencyKeys(tenant, keys);
  const found = new Map<string, Job>();
  for (const key of keys) {
    const job = await store.findByIdempotencyKey(tenant, key);
    if (job) found.set(key, job);
  }
  return found;
}

async function rowOf(
  deps: OutputDeps,
  item: BatchItem,
  version: number,
  job: Job | undefined,
  linkBase: string | undefined,
): Promise<{ row: Row; own: BatchFindings }> {
  const { cells: findings, own } = job ? await findingsOf(deps, job) : { cells: {} as Partial<Row>, own: {} };
  const reportKey = job ? reportKeys(job.id).html : undefined;
  let report = '';
  if (reportKey && job?.outputs.includes(reportKey)) {
    report = linkBase
      ? relative(linkBase, await deps.engine.reports.link(reportKey))
      : // In the bucket, the batch folder and the reports are siblings under the same root.
        `../../${reportKey}`;
  }
  const row: Row = {
    id: item.id,
    docket: docketOf(job) ?? '',
    version: `v${version} (${item.contentHash.slice(0, 8)})`,
    title: item.label,
    workflow: item.workflow,
    status: job?.status ?? 'PENDING',
    key_findings: findings.key_findings ?? '',
    references: findings.references ?? '',
    closest: findings.closest ?? '',
    closest_score: findings.closest_score ?? '',
    features_matched: findings.features_matched ?? '',
    calls: job ? String(job.usage.calls) : '',
    billed_units: job ? String(job.usage.billedUnits) : '',
    duration_s: job?.finishedAt ? ((job.finishedAt - job.createdAt) / 1000).toFixed(1) : '',
    report,
    error:
      job?.status === 'FAILED' || job?.status === 'CANCELLED'
        ? (job.lastError?.message ?? job.status.toLowerCase())
        : '',
    job_id: job?.id ?? '',
    source: item.position,
    upstream: upstreamCell(job),
  };
  return { row, own };
}

/** summary.csv's `upstream`: `sandbox` (simulated data), the platform's URL and key fingerprint, or empty. */
function upstreamCell(job: Job | undefined): string {
  const upstream = job?.upstream;
  if (!upstream) return '';
  return upstream.kind === 'sandbox'
    ? 'sandbox (simulated data)'
    : `${upstream.baseUrl} key ${upstream.keyFingerprint.slice(0, 8)}`;
}

function htmlRow(row: Row): string {
  const cells = [
    escapeHtml(row.id),
    escapeHtml(row.docket),
    escapeHtml(row.version),
    escapeHtml(row.title),
    `<span class="s ${escapeHtml(row.status)}">${escapeHtml(row.status)}</span>`,
    escapeHtml(row.key_findings),
    escapeHtml(row.calls),
    escapeHtml(row.billed_units),
    escapeHtml(row.duration_s),
    row.report ? `<a href="${escapeHtml(row.report)}">report</a>` : '',
    escapeHtml(row.error),
    row.upstream.startsWith('sandbox') ? '<span class="sandbox">sandbox</span>' : escapeHtml(row.upstream),
  ];
  return `<tr>${cells.map((cell) => `<td>${cell}</td>`).join('')}</tr>`;
}

/** Failed items listed by name in the page's failures section (all of them are in failed.jsonl). */
const failuresShown = 1000;

/** The page up to the items table's rows: what is known before the items are read. */
function indexHead(batch: Batch): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Batch ${escapeHtml(batch.name)}</title>
<style>
body { font: 14px/1.45 system-ui, sans-serif; margin: 1.5rem; color: #1a1a1a; }
main { display: flex; flex-direction: column; }
#sandbox { order: -1; } header { order: 0; } #overview { order: 1; } #items-part { order: 2; } #failures { order: 3; }
h1 { font-size: 1.4rem; margin: 0 0 .3rem; }
h2 { font-size: 1.1rem; margin: 1.2rem 0 .4rem; }
.meta { color: #555; margin-bottom: .5rem; overflow-wrap: anywhere; }
.totals { display: flex; gap: 1rem; flex-wrap: wrap; margin: .5rem 0; }
.totals div { background: #f4f5f7; border-radius: 6px; padding: .5rem .9rem; }
.totals b { display: block; font-size: 1.3rem; }
table { border-collapse: collapse; width: 100%; margin: .5rem 0 1.5rem; }
th, td { border-bottom: 1px solid #ddd; padding: .3rem .5rem; text-align: left; vertical-align: top; }
#items th { background: #f3f3f3; user-select: none; position: sticky; top: 0; }
#items th button { font: inherit; font-weight: 600; color: inherit; background: none; border: 0; padding: 0; cursor: pointer; text-align: left; }
#items th button:focus-visible { outline: 2px solid #0969da; outline-offset: 2px; }
th[aria-sort="ascending"]::after { content: " \u25b2"; }
th[aria-sort="descending"]::after { content: " \u25bc"; }
.s { font-weight: 600; }
.SUCCEEDED { color: #1a7f37; } .FAILED, .CANCELLED { color: #cf222e; } .PENDING { color: #777; }
.banner { background: #fff3cd; border: 2px solid #b45309; color: #5c2d00; padding: .6rem .8rem; margin: 0 0 1rem; font-size: 1.05rem; }
.sandbox { color: #b45309; font-weight: 600; }
input { padding: .3rem .5rem; width: 20rem; max-width: 100%; }
@media print { #filter { display: none; } #items th { position: static; } }
</style>
</head>
<body>
<main>
<header>
<h1>Batch ${escapeHtml(batch.name)}</h1>
<div class="meta">${escapeHtml(batch.workflow)} · ${escapeHtml(batch.source.uri)} · status ${escapeHtml(batch.status)}${batch.reason ? ` (${escapeHtml(batch.reason)})` : ''} · updated ${escapeHtml(new Date(batch.updatedAt).toISOString())}</div>
</header>
<section id="items-part" aria-label="Items">
<h2>Items</h2>
<input id="filter" type="search" placeholder="Filter rows" aria-label="Filter rows">
<table id="items">
<thead><tr><th>Id</th><th>Docket</th><th>Version</th><th>Title</th><th>Status</th><th>Key findings</th><th>Calls</th><th>Billed units</th><th>Duration (s)</th><th>Report</th><th>Error</th><th>Upstream</th></tr></thead>
<tbody>
`;
}

/**
 * The rest of the page once every row is written: the failures and the totals (written last, as
 * only then are they known, and shown first: the page is a flex column ordered by CSS).
 */
function indexTail(
  batch: Batch,
  totals: BatchTotals,
  problems: BatchProblem[],
  failedRows: string[],
): string {
  const failedCount = (totals.byStatus.FAILED ?? 0) + (totals.byStatus.CANCELLED ?? 0);
  const statusLine = Object.entries(totals.byStatus)
    .map(([status, count]) => `<span class="s ${escapeHtml(status)}">${escapeHtml(status)}</span> ${count}`)
    .join(' · ');
  const problemRows = problems
    .map(
      (p) =>
        `<tr><td>${escapeHtml(p.position)}</td><td>${escapeHtml(p.id ?? '')}</td><td>${escapeHtml(p.reason)}</td></tr>`,
    )
    .join('');
  return `</tbody>
</table>
</section>
<section id="failures" aria-label="Failures">
<h2>Failed or cancelled items (${failedCount})</h2>
<table id="failed-items">
<thead><tr><th>Id</th><th>Where</th><th>Status</th><th>Reason</th></tr></thead>
<tbody>${failedRows.join('') || '<tr><td colspan="4">none</td></tr>'}</tbody>
</table>
${failedCount > failedRows.length ? `<p>… and ${failedCount - failedRows.length} more in failed.jsonl</p>` : ''}
<h2>Lines that could not be used (${problems.length})</h2>
<table id="bad-lines">
<thead><tr><th>Where</th><th>Id</th><th>Reason</th></tr></thead>
<tbody>${problemRows || '<tr><td colspan="3">none</td></tr>'}</tbody>
</table>
<p>Every failure with where and why: <a href="failed.jsonl">failed.jsonl</a>; every row: <a href="summary.csv">summary.csv</a>, <a href="summary.xlsx">summary.xlsx</a> (a workbook: verdicts, X/Y/A counts, a detail sheet per workflow), <a href="results.jsonl">results.jsonl</a>.</p>
</section>
${
  totals.sandbox === 0
    ? ''
    : `<section id="sandbox" class="banner" role="alert"><strong>${escapeHtml(sandboxHeadline)}</strong> ${totals.sandbox === totals.items ? 'Every item' : `${totals.sandbox} of ${totals.items} items`} ran against opflow’s built-in sandbox, which simulates the Open Platform (see the Upstream column); set OPFLOW_API_KEY to run them against the platform.</section>`
}
<section id="overview" aria-label="Totals">
<div class="totals">
<div><b>${totals.items}</b>items</div>
<div><b>${totals.byStatus.SUCCEEDED ?? 0}</b>succeeded</div>
<div><b>${failedCount}</b>failed or cancelled</div>
<div><b>${totals.pending}</b>not started</div>
<div><b>${problems.length}</b>bad lines</div>
<div><b>${totals.calls}</b>calls</div>
<div><b>${totals.billedUnits}</b>billed units</div>
</div>
<p>${statusLine}${batch.status === 'FINISHED' ? '' : ' · <em>the batch is not finished: this page is rewritten as it runs</em>'}</p>
</section>
</main>
<script>
(() => {
  const table = document.getElementById('items');
  const body = table.tBodies[0];
  const numeric = (text) => text !== '' && !Number.isNaN(Number(text));
  table.querySelectorAll('th').forEach((th, index) => {
    // A button in each heading: sortable by keyboard (Tab, Enter) as well as by mouse.
    const button = document.createElement('button');
    button.type = 'button';
    button.textContent = th.textContent;
    th.textContent = '';
    th.append(button);
    button.addEventListener('click', () => {
      const ascending = th.getAttribute('aria-sort') !== 'ascending';
      table.querySelectorAll('th').forEach((other) => other.removeAttribute('aria-sort'));
      th.setAttribute('aria-sort', ascending ? 'ascending' : 'descending');
      const rows = [...body.rows];
      rows.sort((a, b) => {
        const x = a.cells[index].textContent.trim();
        const y = b.cells[index].textContent.trim();
        const order = numeric(x) && numeric(y) ? Number(x) - Number(y) : x.localeCompare(y, undefined, { numeric: true });
        return ascending ? order : -order;
      });
      body.append(...rows);
    });
  });
  document.getElementById('filter').addEventListener('input', (event) => {
    const needle = event.target.value.toLowerCase();
    for (const row of body.rows) row.hidden = needle !== '' && !row.textContent.toLowerCase().includes(needle);
  });
})();
</script>
</body>
</html>
`;
}
