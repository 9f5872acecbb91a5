/**
 * Where a job's outputs live in the report store and reading its kept outputs back. The report files
 * a finished job gets are written by the `ReportWriter` the engine is wired with (EngineDeps.writeReport;
 * shared/reports/write-job-report.ts): their content is presentation, and a scheduled job's "Changes
 * since" section is the schedules' business, neither the engine's.
 */
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
  docx: `reports/${jobId}/report.docx`,
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
 * Writes a finished job's result.json, report.md and report.html (in that order, overwriting) and
 * returns their keys. The composition is presentation and lives above the engine
 * (shared/reports/write-job-report.ts's `writeJobReport`); the engine gets it as `EngineDeps.writeReport`.
 */
export type ReportWriter = (
  reports: ReportStore,
  workflow: Workflow,
  job: Job,
  input: unknown,
) => Promise<string[]>;
