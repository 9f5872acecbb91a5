/**
 * Writes a finished job's result.json, report.md, report.html and report.docx: what its workflow rendered,
 * assembled with its cost and facts (job-report.ts) and, for a scheduled job, what changed since the
 * schedule's previous run (shared/schedules/changes.ts). The engine calls it through
 * `EngineDeps.writeReport` when a job finishes; each runtime wires this one in, so the engine
 * imports neither the presentation nor the schedules.
 *
 * The rendering (job-report.ts, the schedule's changes, Markdown to HTML with marked, to Word with
 * docx) is imported on first use: only the step that finishes a job renders, so a Lambda function holds it as a chunk
 * beside its entry (docs/concepts/lambda-bundles.md) instead of parsing it at every cold start.
 */

import type { ReportWriter } from '../engine/report';
import { loadReportInput, reportKeys } from '../engine/report';

/**
 * Overwrites the four files, and the images result.json held as base64 (`images/<n>.png`, result.json
 * naming each in its place), so a repeated finish leaves one report; returns their keys.
 */
export const writeJobReport: ReportWriter = async (reports, workflow, job, input) => {
  const [reportInput, { assembleJobReport }, { scheduleChanges }, { markdownToDocx }] = await Promise.all([
    loadReportInput(reports, job, input),
    import('./job-report'),
    import('../schedules/changes'),
    import('./docx'),
  ]);
  const rendered = workflow.report(reportInput);
  const changes = await scheduleChanges(reports, workflow, reportInput, rendered.markdown);
  const report = assembleJobReport(workflow, reportInput, rendered, changes);
  const keys = reportKeys(job.id);
  const imageKeys = report.images.map((file) => `reports/${job.id}/${file.name}`);
  // The images first: result.json and the reports, once written, name only files that exist.
  await Promise.all(
    report.images.map((file, index) => reports.put(imageKeys[index]!, file.body, file.contentType)),
  );
  await reports.put(keys.result, JSON.stringify(report.result, null, 2), 'application/json');
  await reports.put(keys.markdown, report.markdown, 'text/markdown; charset=utf-8');
  await reports.put(keys.html, report.html, 'text/html; charset=utf-8');
  await reports.put(
    keys.docx,
    await markdownToDocx(report.markdown, rendered.title, report.images),
    'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  );
  return [keys.result, keys.markdown, keys.html, keys.docx, ...imageKeys];
};
