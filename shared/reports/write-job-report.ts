/**
 * Writes a finished job's result.json, report.md and report.html: what its workflow rendered,
 * assembled with its cost and facts (job-report.ts) and, for a scheduled job, what changed since the
 * schedule's previous run (shared/schedules/changes.ts). The engine calls it through
 * `EngineDeps.writeReport` when a job finishes; each runtime wires this one in, so the engine
 * imports neither the presentation nor the schedules.
 */

import type { ReportWriter } from '../engine/report';
import { loadReportInput, reportKeys } from '../engine/report';
import { scheduleChanges } from '../schedules/changes';
import { assembleJobReport } from './job-report';

/** Overwrites the three files, so a repeated finish leaves one report; returns their keys. */
export const writeJobReport: ReportWriter = async (reports, workflow, job, input) => {
  const reportInput = await loadReportInput(reports, job, input);
  const rendered = workflow.report(reportInput);
  const changes = await scheduleChanges(reports, workflow, reportInput, rendered.markdown);
  const report = assembleJobReport(workflow, reportInput, rendered, changes);
  const keys = reportKeys(job.id);
  await reports.put(keys.result, JSON.stringify(report.result, null, 2), 'application/json');
  await reports.put(keys.markdown, report.markdown, 'text/markdown; charset=utf-8');
  await reports.put(keys.html, report.html, 'text/html; charset=utf-8');
  return [keys.result, keys.markdown, keys.html];
};
