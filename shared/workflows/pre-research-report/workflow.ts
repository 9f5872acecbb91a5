/**
 * pre-research-report (Tech Pre-research Report, beta): a technology pre-research report from a
 * question, with the platform's own chapters or with the chapters the job lists. opflow keeps a copy
 * of the report (its link is valid for three hours) and reports its key players and key patents.
 *
 * ai34-1 from the question (auto_directory) — or ai34-1 without auto_directory then ai34-2 with the
 * listed chapters — → ai34-3 (poll report_status) → fetch the report at report_url.
 */
import * as z from 'zod';
import type { PollPolicy } from '../../engine/policies';
import { type Decision, defineWorkflow, stepsFor } from '../../engine/workflow';
import type { DataOf } from '../../openplatform/schemas/responses';
import { humanise, shorten } from '../../reports/markdown';
import { nonEmpty, untilDone, wordState } from '../common/step-data';
import { readTextDocument } from '../common/text-input';
import { preResearchMarkdown, preResearchSummary, preResearchTitle } from './report';

/** The report's chapters, as the platform names them. Only the two custom modules may be renamed. */
export const directoryKeys = [
  'TECH_RESEARCH_TECHNICAL_BACKGROUND',
  'TECH_RESEARCH_MARKET_ANALYSIS',
  'TECH_RESEARCH_TECHNOLOGY_STATUS_CHALLENGES',
  'TECH_RESEARCH_EVOLUTION_PATH',
  'TECH_RESEARCH_HEAD_PLAYER_ANALYSIS',
  'TECH_RESEARCH_TECHNICAL_SCHEME_REVIEW',
  'TECH_RESEARCH_KEY_PATENT_INTERPRETATION',
  'TECH_RESEARCH_IDEA_SUMMARY',
  'TECH_RESEARCH_CUSTOM_MODULE_1',
  'TECH_RESEARCH_CUSTOM_MODULE_2',
] as const;
export type DirectoryKey = (typeof directoryKeys)[number];
const customKeys: ReadonlySet<string> = new Set([
  'TECH_RESEARCH_CUSTOM_MODULE_1',
  'TECH_RESEARCH_CUSTOM_MODULE_2',
]);

/** A chapter key, with or without its `TECH_RESEARCH_` prefix, in any case. */
const directoryKey = z.lazy(() =>
  z
    .string({ error: 'key: a chapter key such as MARKET_ANALYSIS is required' })
    .trim()
    .transform((key) => {
      const upper = key.toUpperCase().replace(/[\s-]+/g, '_');
      return upper.startsWith('TECH_RESEARCH_') ? upper : `TECH_RESEARCH_${upper}`;
    })
    .pipe(
      z.enum(directoryKeys, {
        error: `key: one of ${directoryKeys.map((key) => key.replace('TECH_RESEARCH_', '')).join(', ')}`,
      }),
    ),
);

const directoryEntry = z.lazy(() =>
  z
    .strictObject({
      /** The chapter, e.g. `MARKET_ANALYSIS` or `TECH_RESEARCH_MARKET_ANALYSIS`. */
      key: directoryKey,
      /** The chapter's name: only for CUSTOM_MODULE_1/2 (the others keep the platform's name). */
      name: z.string().trim().min(1, { error: 'name: must not be empty when given' }).max(200).optional(),
    })
    .superRefine((entry, ctx) => {
      if (entry.name !== undefined && !customKeys.has(entry.key)) {
        ctx.addIssue({
          code: 'custom',
          path: ['name'],
          message: `only CUSTOM_MODULE_1 and CUSTOM_MODULE_2 may be renamed, not ${entry.key.replace('TECH_RESEARCH_', '')}`,
        });
      }
    }),
);

/** The input of a pre-research report. */
export const preResearchReportInput = z.lazy(() =>
  z.strictObject({
    /** The technology question the report answers. */
    question: z
      .string({ error: 'question: the technology question is required (a string)' })
      .trim()
      .min(1, { error: 'question: the technology question is empty' }),
    /** The report's title; default: the question. */
    title: z.string().trim().min(1, { error: 'title: must not be empty when given' }).max(200).optional(),
    /** The chapters, in order; default: the platform chooses them. */
    directory: z
      .array(directoryEntry, { error: 'directory: a list of chapters ({ key, name? })' })
      .min(1, { error: 'directory: list at least one chapter, or leave the directory out' })
      .refine((entries) => new Set(entries.map((entry) => entry.key)).size === entries.length, {
        error: 'directory: a chapter is listed twice',
      })
      .optional(),
  }),
);
export type PreResearchReportInput = z.infer<typeof preResearchReportInput>;

/** The platform writes the report in about three minutes. */
export const preResearchPolls = {
  report: { firstDelayMs: 150_000, factor: 1.5, maxDelayMs: 90_000, giveUpAfterMs: 60 * 60_000 },
} satisfies Record<string, PollPolicy>;

type Proposed = NonNullable<DataOf<'ai34-1QuickSearchReportCreation'>['analysis_directory']>;

/**
 * ai34-2's directory: the listed chapters, named as ai34-1 proposed them (custom modules as the job
 * names them), with the proposed source type.
 */
export function customDirectory(
  entries: NonNullable<PreResearchReportInput['directory']>,
  proposed: Proposed,
) {
  return entries.map((entry) => {
    const offered = proposed.find((candidate) => candidate.key === entry.key);
    return {
      key: entry.key,
      name: entry.name ?? offered?.name ?? humanise(entry.key.replace('TECH_RESEARCH_', '')),
      source_type: offered?.source_type ?? (customKeys.has(entry.key) ? 'customize' : 'model'),
    };
  });
}

const step = stepsFor('pre-research-report', preResearchReportInput);

/** The report every call names, and its link once written. */
const reportId = step.key('reportId', nonEmpty);
const reportUrl = step.key('reportUrl', nonEmpty);

const create = step.call({
  name: 'create',
  title: 'create the report',
  operation: 'ai34-1QuickSearchReportCreation',
  request: ({ input }) => ({
    technical_issues: input.question,
    auto_directory: input.directory === undefined,
  }),
  decide: (data, ctx): Decision<'pre-research-report'> => {
    if (!data.report_id) return { type: 'fail', message: 'ai34-1 answered without a report_id' };
    return {
      type: 'next',
      step: ctx.input.directory ? customDir : report,
      context: reportId.set(data.report_id),
    };
  },
});

const customDir = step.call({
  name: 'custom-directory',
  title: 'supply the chapters',
  operation: 'ai34-2CreationCustomDir',
  needs: [create],
  request: (ctx) => ({
    report_id: ctx.get(reportId),
    technical_issues: ctx.input.question,
    analysis_directory: customDirectory(
      ctx.input.directory ?? [],
      ctx.output(create).analysis_directory ?? [],
    ),
  }),
  decide: (data) => ({
    type: 'next',
    ...(data.report_id ? { context: reportId.set(data.report_id) } : {}),
  }),
});

const report = step.call({
  name: 'report',
  title: 'write the report',
  operation: 'ai34-3QuickSearchReportQuery',
  poll: preResearchPolls.report,
  request: (ctx) => ({ report_id: ctx.get(reportId) }),
  decide: (data) =>
    untilDone(wordState(data.report_status), 'the report', data.report_status, () =>
      data.report_url
        ? { type: 'next', context: reportUrl.set(data.report_url) }
        : { type: 'fail', message: 'ai34-3 reported success without a report_url' },
    ),
});

const reportDocument = step.fetch({
  name: 'report-document',
  title: 'download the report',
  url: (ctx) => ctx.get(reportUrl),
  refreshFrom: report,
  decide: () => ({ type: 'complete' }),
});

export const preResearchReport = defineWorkflow<PreResearchReportInput>({
  name: 'pre-research-report',
  version: 1,
  description: 'Technology pre-research report from a question: key players, key patents, the report kept.',
  input: preResearchReportInput,
  fromText: (text, fileName) => {
    const document = readTextDocument(text, fileName);
    return { question: document.body || document.text, title: shorten(document.title, 200) };
  },
  steps: [create, customDir, report, reportDocument],
  report: (r) => ({
    title: `Pre-research report: ${preResearchTitle(r.input)}`,
    markdown: preResearchMarkdown(r),
  }),
  summary: preResearchSummary,
  example: { text: 'What limits the cycle life of solid-state lithium batteries?' },
  commonNames: { text: 'question' },
});
