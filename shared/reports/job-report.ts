/**
 * A finished job's documents, as presentation: result.json's document, report.md and report.html,
 * and the images they show or hold as files beside them (report-images.ts), from what its workflow rendered, the job's cost and facts (in one form for all workflows), and for
 * a scheduled job what changed since the schedule's previous run. Pure: the engine
 * (shared/engine/report.ts) reads what goes in and writes what comes out.
 */
import { isSandboxData } from '../engine/upstream-identity';
import type { ReportInput, Workflow } from '../engine/workflow';
import { changesHtml, changesMarkdown, type ScheduleChanges } from '../schedules/changes';
import { disclosureLine } from './disclosure-facts';
import { renderHtml, withSectionAfterLine } from './html';
import { costLine, jobFacts, withLineAfterLead, withLineUnderTitle } from './job-facts';
import { type ImageFile, ReportImageFiles, reportWithImageFiles } from './report-images';
import { sandboxDetail, sandboxHeadline, sandboxNotice, withSandboxNotice } from './sandbox-notice';

export interface JobReport {
  /**
   * result.json: the job, its title, summary and answer, every kept output, usage and changes; an
   * image it held as base64 named by its file instead, and listed under `images`.
   */
  result: Record<string, unknown>;
  /** report.md: its images linked to their files (`images/1.png`). */
  markdown: string;
  /** report.html: its images inside the page (as data), up to a size. */
  html: string;
  /** The image files beside the report (`images/<n>.<ext>`), for report.docx too. */
  images: ImageFile[];
}

export function assembleJobReport(
  workflow: Workflow,
  reportInput: ReportInput,
  rendered: { title: string; markdown: string },
  changes: ScheduleChanges | undefined,
): JobReport {
  const { job, input } = reportInput;
  const { title } = rendered;
  const changesSection = changes && changesMarkdown(changes);
  // Every report says what it cost at the top, after its verdict or key figures, and ends with the
  // job's cost and facts, in one form for all workflows.
  const sandbox = isSandboxData(job);
  const lead = withLineAfterLead(rendered.markdown, costLine(job)).trimEnd();
  // The disclosure's own facts (docket, inventors, dates: never sent upstream) under the title.
  const disclosure = disclosureLine(job);
  const body = `${disclosure ? withLineUnderTitle(lead, disclosure) : lead}\n\n${jobFacts(job)}`;
  // Data of the sandbox says so first, in every form of the report.
  const markdown = sandbox ? withSandboxNotice(body) : body;
  const data = {
    job: {
      id: job.id,
      workflow: job.workflow,
      workflowVersion: job.workflowVersion,
      label: job.label,
      tenant: job.tenant,
      upstream: job.upstream ?? null,
      status: job.status,
      createdAt: new Date(job.createdAt).toISOString(),
      finishedAt: job.finishedAt === undefined ? undefined : new Date(job.finishedAt).toISOString(),
      elapsedMs: (job.finishedAt ?? job.updatedAt) - job.createdAt,
    },
    ...(sandbox ? { sandbox: sandboxNotice } : {}),
    ...(job.metadata ? { disclosure: job.metadata } : {}),
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
  // A scheduled report: the answer and its cost first, then what changed since the previous run,
  // then the detail.
  const cost = costLine(job);
  // Images are numbered in result.json's order first, then any the report alone shows.
  const kept = new ReportImageFiles();
  const result = kept.replaceIn(data) as Record<string, unknown>;
  const file = reportWithImageFiles(
    changesSection ? withSectionAfterLine(markdown, cost, changesSection) : markdown,
    kept,
  );
  const page = reportWithImageFiles(body, kept).page;
  return {
    result: kept.images.length > 0 ? { ...result, images: kept.images } : result,
    markdown: file.markdown,
    images: kept.files,
    html: renderHtml(title, page, {
      ...(changes ? { insert: { afterLine: cost, html: changesHtml(changes) } } : {}),
      ...(sandbox ? { banner: { headline: sandboxHeadline, detail: sandboxDetail } } : {}),
    }),
  };
}
