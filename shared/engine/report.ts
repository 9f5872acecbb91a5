/**
 * Turning a finished job into its outputs: result.json (every kept step output, normalised, plus
 * usage), report.md and report.html. Raw HTML in the Markdown (which may come from upstream text)
 * is escaped, never rendered.
 */
import { Marked } from 'marked';
import type { Job } from './job-record';
import type { ReportStore } from './ports';
import type { ReportInput, Workflow } from './workflow';

const escapeHtml = (text: string) =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

const marked = new Marked({
  gfm: true,
  renderer: {
    html: ({ text }) => escapeHtml(text),
  },
});

export function renderHtml(title: string, markdown: string): string {
  const body = marked.parse(markdown, { async: false });
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>
body { font: 15px/1.5 system-ui, sans-serif; max-width: 60rem; margin: 2rem auto; padding: 0 1rem; color: #1a1a1a; }
table { border-collapse: collapse; margin: 1rem 0; width: 100%; }
th, td { border: 1px solid #ccc; padding: .35rem .5rem; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
code { background: #f3f3f3; padding: 0 .2rem; }
a { color: #0645ad; overflow-wrap: anywhere; }
p, li, td { overflow-wrap: break-word; }
h1 { font-size: 1.6rem; line-height: 1.25; }
@media (max-width: 40rem) {
  body { font-size: 16px; margin: 1rem auto; padding: 0 .75rem; }
  h1 { font-size: 1.35rem; }
  table { display: block; overflow-x: auto; width: auto; max-width: 100%; }
  th, td { min-width: 4rem; }
  td:nth-child(2) { min-width: 14rem; }
}
@media print {
  @page { margin: 1.5cm; }
  body { font: 10.5pt/1.4 Georgia, 'Times New Roman', serif; max-width: none; margin: 0; padding: 0; color: #000; }
  h1, h2, h3 { break-after: avoid; page-break-after: avoid; }
  table, tr, img, pre, blockquote { break-inside: avoid; page-break-inside: avoid; }
  thead { display: table-header-group; }
  th { background: #eee !important; -webkit-print-color-adjust: exact; print-color-adjust: exact; }
  a { color: #000; text-decoration: none; }
  a[href^="http"]::after { content: " (" attr(href) ")"; font-size: 85%; color: #444; }
}
</style>
</head>
<body>
${body}</body>
</html>
`;
}

export const stepOutputKey = (jobId: string, outputName: string) =>
  `reports/${jobId}/steps/${outputName}.json`;
export const attachmentKey = (jobId: string, fileName: string) => `reports/${jobId}/attachments/${fileName}`;
export const inputKey = (jobId: string) => `reports/${jobId}/input.json`;
export const reportKeys = (jobId: string) => ({
  result: `reports/${jobId}/result.json`,
  markdown: `reports/${jobId}/report.md`,
  html: `reports/${jobId}/report.html`,
});

const stepsPrefix = (jobId: string) => `reports/${jobId}/steps/`;
const attachmentsPrefix = (jobId: string) => `reports/${jobId}/attachments/`;

/** Everything a report renderer needs, read back from the report store. */
export async function loadReportInput(reports: ReportStore, job: Job, input: unknown): Promise<ReportInput> {
  const outputs: Record<string, unknown> = {};
  const attachments: ReportInput['attachments'] = [];
  for (const key of job.outputs) {
    if (key.startsWith(stepsPrefix(job.id))) {
      const stored = await reports.get(key);
      if (stored)
        outputs[key.slice(stepsPrefix(job.id).length, -'.json'.length)] = JSON.parse(
          Buffer.from(stored.body).toString('utf8'),
        );
    } else if (key.startsWith(attachmentsPrefix(job.id))) {
      const stored = await reports.get(key);
      attachments.push({
        key,
        fileName: key.slice(attachmentsPrefix(job.id).length),
        contentType: stored?.contentType ?? 'application/octet-stream',
      });
    }
  }
  return { job, input, context: job.context, selections: job.selections, outputs, attachments };
}

/** Write result.json, report.md and report.html; overwriting, so a repeated finish leaves one report. */
export async function writeReport(
  reports: ReportStore,
  workflow: Workflow,
  job: Job,
  input: unknown,
): Promise<string[]> {
  const reportInput = await loadReportInput(reports, job, input);
  const { title, markdown } = workflow.report(reportInput);
  const keys = reportKeys(job.id);
  const result = {
    job: {
      id: job.id,
      workflow: job.workflow,
      workflowVersion: job.workflowVersion,
      label: job.label,
      status: job.status,
      createdAt: new Date(job.createdAt).toISOString(),
      finishedAt: job.finishedAt === undefined ? undefined : new Date(job.finishedAt).toISOString(),
      elapsedMs: (job.finishedAt ?? job.updatedAt) - job.createdAt,
    },
    title,
    summary: workflow.summary?.(reportInput),
    answer: workflow.answer?.(reportInput),
    input,
    selections: job.selections,
    context: job.context,
    steps: reportInput.outputs,
    attachments: reportInput.attachments.map(({ fileName, contentType }) => ({ fileName, contentType })),
    usage: job.usage,
  };
  await reports.put(keys.result, JSON.stringify(result, null, 2), 'application/json');
  await reports.put(keys.markdown, markdown, 'text/markdown; charset=utf-8');
  await reports.put(keys.html, renderHtml(title, markdown), 'text/html; charset=utf-8');
  return [keys.result, keys.markdown, keys.html];
}
