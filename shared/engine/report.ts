/**
 * Turning a finished job into its outputs: result.json (every kept step output, normalised, plus
 * usage), report.md and report.html (the page itself is rendered in shared/reports/html.ts).
 */
import { renderHtml } from '../reports/html';
import { costLine, jobFacts, withLineAfterLead } from '../reports/job-facts';
import { changesHtml, changesMarkdown, scheduleChanges, withSectionAfterTitle } from '../schedules/changes';
import type { Job } from './job-record';
import type { ReportStore } from './ports';
import type { ReportInput, Workflow } from './workflow';

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
  const rendered = workflow.report(reportInput);
  const { title } = rendered;
  // A scheduled job's report says what changed since the schedule's previous run (shared/schedules/changes.ts).
  const changes = await scheduleChanges(reports, workflow, reportInput, rendered.markdown);
  const changesSection = changes && changesMarkdown(changes);
  // Every report says what it cost at the top, after its verdict or key figures, and ends with the
  // job's cost and facts, in one form for all workflows.
  const markdown = `${withLineAfterLead(rendered.markdown, costLine(job)).trimEnd()}\n\n${jobFacts(job)}`;
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
    changes,
  };
  await reports.put(keys.result, JSON.stringify(result, null, 2), 'application/json');
  await reports.put(
    keys.markdown,
    changesSection ? withSectionAfterTitle(markdown, changesSection) : markdown,
    'text/markdown; charset=utf-8',
  );
  await reports.put(
    keys.html,
    renderHtml(title, markdown, { afterTitle: changes && changesHtml(changes) }),
    'text/html; charset=utf-8',
  );
  return [keys.result, keys.markdown, keys.html];
}
