/**
 * Where a job's outputs live in the report store, reading its kept outputs back, and writing its
 * result.json, report.md and report.html once it finishes (their content is presentation, assembled
 * in shared/reports/job-report.ts).
 */
import { assembleJobReport } from '../reports/job-report';
import { scheduleChanges } from '../schedules/changes';
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

/**
 * Write result.json, report.md and report.html (assembled in shared/reports/job-report.ts);
 * overwriting, so a repeated finish leaves one report.
 */
export async function writeReport(
  reports: ReportStore,
  workflow: Workflow,
  job: Job,
  input: unknown,
): Promise<string[]> {
  const reportInput = await loadReportInput(reports, job, input);
  const rendered = workflow.report(reportInput);
  // A scheduled job's report says what changed since the schedule's previous run (shared/schedules/changes.ts).
  const changes = await scheduleChanges(reports, workflow, reportInput, rendered.markdown);
  const report = assembleJobReport(workflow, reportInput, rendered, changes);
  const keys = reportKeys(job.id);
  await reports.put(keys.result, JSON.stringify(report.result, null, 2), 'application/json');
  await reports.put(keys.markdown, report.markdown, 'text/markdown; charset=utf-8');
  await reports.put(keys.html, report.html, 'text/html; charset=utf-8');
  return [keys.result, keys.markdown, keys.html];
}
