/**
 * The section every report ends with: what the job cost (calls, billed units, the platform's own
 * `task_cost`) and which job it was, and the cost's line at the top of every report. Workflows'
 * reports put what their reader needs first; these facts come in the same form for every workflow.
 */
import type { Job } from '../engine/job-record';
import { describeUpstreamIdentity } from '../engine/upstream-identity';
import { blocks, count, heading, inline, table } from './markdown';

/** 640 ms, 12.3 s, 14 min 5 s, 2 h 3 min. */
export function duration(ms: number): string {
  if (ms < 1_000) return `${Math.round(ms)} ms`;
  if (ms < 90_000) return `${(ms / 1_000).toFixed(1)} s`;
  const minutes = Math.floor(ms / 60_000);
  if (minutes < 120) return `${minutes} min ${Math.round((ms % 60_000) / 1_000)} s`;
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

/** The platform's `task_cost`, in seconds as it reports it, read as a duration too. */
function taskCostText(taskCost: number | undefined): string {
  if (taskCost === undefined) return 'not reported';
  const minutes = taskCost >= 90 ? ` (${(taskCost / 60).toFixed(1)} min)` : '';
  return `${taskCost} s${minutes}`;
}

/**
 * The cost in one line, for the top of a report beside its key figures: "**Cost:** 14 calls ·
 * 1,234 units billed · platform task_cost 95 s". The table under "## Cost" at the end has the rest.
 */
export function costLine(job: Job): string {
  const u = job.usage;
  const calls = `${count(u.calls)} ${u.calls === 1 ? 'call' : 'calls'}${u.failedCalls > 0 ? ` (${count(u.failedCalls)} failed)` : ''}`;
  const units = `${count(u.billedUnits)} ${u.billedUnits === 1 ? 'unit' : 'units'} billed`;
  const parts = [calls, units];
  if (u.taskCost !== undefined) parts.push(`platform task_cost ${taskCostText(u.taskCost)}`);
  return `**Cost:** ${inline(parts.join(' · '))}`;
}

/**
 * `markdown` with `line` after its lead: after the text between the title and the first "## "
 * heading (a workflow's verdict or key figures), so it is read with them, before any detail. A report
 * with no such text opens with its verdict as a section (a novelty check's Conclusion): the line then
 * comes after that first section.
 */
export function withLineAfterLead(markdown: string, line: string): string {
  const lines = markdown.split('\n');
  const title = lines.findIndex((text) => /^#\s/.test(text));
  const sectionAfter = (from: number) => lines.findIndex((text, index) => index > from && /^##\s/.test(text));
  let at = sectionAfter(title);
  if (at >= 0 && lines.slice(title + 1, at).every((text) => text.trim() === '')) at = sectionAfter(at);
  if (at < 0) return `${markdown.trimEnd()}\n\n${line}\n`;
  const before = lines.slice(0, at);
  while (before.length > 0 && before[before.length - 1]?.trim() === '') before.pop();
  return [...before, '', line, '', ...lines.slice(at)].join('\n');
}

/** `markdown` with `line` as a paragraph right under its title (or first, without a title). */
export function withLineUnderTitle(markdown: string, line: string): string {
  const lines = markdown.split('\n');
  const title = lines.findIndex((text) => /^#\s/.test(text));
  if (title < 0) return `${line}\n\n${markdown}`;
  return [...lines.slice(0, title + 1), '', line, ...lines.slice(title + 1)].join('\n');
}

/** "## Cost" (a table) and "## Job" (id, workflow, times), in Markdown. */
export function jobFacts(job: Job): string {
  const u = job.usage;
  const finished = job.finishedAt ?? job.updatedAt;
  return blocks(
    heading(2, 'Cost'),
    table(
      ['Calls', 'Billed units', 'Platform task_cost', 'Tokens', 'Time in calls'],
      [
        [
          `${count(u.calls)}${u.failedCalls > 0 ? ` (${u.failedCalls} failed)` : ''}`,
          count(u.billedUnits),
          taskCostText(u.taskCost),
          count(u.tokens),
          duration(u.callMs),
        ],
      ],
    ),
    inline(
      'Billed units are the units the platform reported billing (x-openapi-amount); task_cost is the platform’s own measure of its work on the job’s tasks, in seconds.',
    ),
    heading(2, 'Job'),
    inline(
      [
        `${job.workflow} (version ${job.workflowVersion})`,
        `job ${job.id}`,
        `tenant ${job.tenant}`,
        `upstream: ${describeUpstreamIdentity(job.upstream)}`,
        `started ${new Date(job.createdAt).toISOString()}`,
        `finished ${new Date(finished).toISOString()}`,
        `took ${duration(finished - job.createdAt)}`,
      ].join(' · '),
    ),
  );
}
