/**
 * novelty-check: is an invention new? The platform summarises the technical solution, extracts its
 * features (a person may choose which count), builds search elements, runs an agent search over the
 * patent literature, compares the closest references feature by feature and exports a report.
 *
 * ai35-1 submit → ai35-2 summary (poll) → ai35-3 confirm → ai35-4 features (poll) → SELECT features
 * → ai35-5 confirm → ai35-6 search elements (poll) → ai35-7 agent search → ai35-8 results (poll,
 * minutes) → p011 the references' bibliographic data, p041 their legal status and p014 their
 * families (optional: their failure does not fail the job) → ai35-10 export → ai35-11 report link (poll) → fetch the report document.
 */
import * as z from 'zod';
import type { SelectionOption } from '../../engine/job-record';
import type { PollPolicy } from '../../engine/policies';
import { type Decision, defineWorkflow, type ReportInput, stepsFor } from '../../engine/workflow';
import type { RequestOf } from '../../openplatform/schemas/requests';
import type { DataOf } from '../../openplatform/schemas/responses';
import { score, shorten } from '../../reports/markdown';
import { familyStep, legalStatusStep, patentDataBatch, patentDataQuery } from '../common/patent-status';
import { nonEmpty, numberState, outputOf, untilDone, withoutNulls } from '../common/step-data';
import { firstLine, readTextDocument } from '../common/text-input';
import { noveltyDigest } from './digest';
import { noveltyFindings } from './findings';
import { noveltyAnalysisOf, noveltyReportMarkdown, publicScore } from './report';

const dateText = z.lazy(() =>
  z
    .string()
    .trim()
    .regex(/^\d{4}-?\d{2}-?\d{2}$/, { error: 'a publication date is written YYYY-MM-DD or YYYYMMDD' })
    .refine(isCalendarDate, { error: 'is not a date on the calendar (month 01–12, a day that month has)' }),
);

/** `2020-02-29` yes, `2020-13-45` and `2021-02-29` no. */
function isCalendarDate(text: string): boolean {
  const digits = text.replace(/-/g, '');
  const [year, month, day] = [digits.slice(0, 4), digits.slice(4, 6), digits.slice(6, 8)].map(Number) as [
    number,
    number,
    number,
  ];
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

/** The input of a novelty check. */
export const noveltyCheckInput = z.lazy(() =>
  z.strictObject({
    /** The technical description to check (an invention disclosure, a claim set, an idea). */
    text: z
      .string({ error: 'text: the technical description to check is required (a string)' })
      .trim()
      .min(1, { error: 'text: the technical description is empty' }),
    /** The report's title; default: the description's first line. */
    title: z.string().trim().min(1, { error: 'title: must not be empty when given' }).max(200).optional(),
    /** The language of the analysis, `cn` or `en`; default `en`. */
    lang: z.enum(['cn', 'en'], { error: 'lang: must be "cn" or "en"' }).default('en'),
    /** Only literature published on or after this date (YYYY-MM-DD); default: no limit. */
    pbdStart: dateText.optional(),
    /** Only literature published on or before this date (YYYY-MM-DD); default: `priorityDate`, else no limit. */
    pbdEnd: dateText.optional(),
    /**
     * The disclosure's priority (or filing) date, YYYY-MM-DD: the prior-art cut-off. The search's
     * `pbdEnd` defaults to it, and a reference published after it is never rated X or Y (the report
     * shows it apart). Read from a disclosure form's "Priority date" (else "Filing date") too.
     */
    priorityDate: dateText.optional(),
    /**
     * Fetch the references' bibliographic data (publication number, title, assignee, dates) for the
     * report: one more call (p011, Patent Basic Data, one unit). Its failure does not fail the job.
     */
    bibliography: z.boolean({ error: 'bibliography: must be true or false' }).default(true),
    /**
     * Fetch the references' legal status (p041) and family (p014) for the report: two more calls,
     * one unit each, for all references at once. Their failure does not fail the job.
     */
    legalData: z.boolean({ error: 'legalData: must be true or false' }).default(true),
  }),
);
export type NoveltyCheckInput = z.infer<typeof noveltyCheckInput>;

/**
 * Poll schedules, aimed near the usual completion times: summary, features and search elements
 * about 15–20 s each, the agent search five minutes or so, the report export about 30 s.
 */
export const noveltyPolls = {
  summary: { firstDelayMs: 15_000, factor: 1.5, maxDelayMs: 60_000, giveUpAfterMs: 30 * 60_000 },
  features: { firstDelayMs: 20_000, factor: 1.5, maxDelayMs: 60_000, giveUpAfterMs: 30 * 60_000 },
  searchElements: { firstDelayMs: 20_000, factor: 1.5, maxDelayMs: 60_000, giveUpAfterMs: 30 * 60_000 },
  /** The agent search reports `task_cost` in the hundreds of seconds. */
  agentResult: { firstDelayMs: 60_000, factor: 1.5, maxDelayMs: 180_000, giveUpAfterMs: 90 * 60_000 },
  reportLink: { firstDelayMs: 25_000, factor: 1.5, maxDelayMs: 60_000, giveUpAfterMs: 30 * 60_000 },
} satisfies Record<string, PollPolicy>;

/** The search's end: `pbdEnd`, else the priority date (nothing published after it is prior art). */
export function searchEnd(input: Pick<NoveltyCheckInput, 'pbdEnd' | 'priorityDate'>): string | undefined {
  return input.pbdEnd ?? input.priorityDate;
}

/** The export's title: the input's, else the description's first line. */
export function noveltyTitle(input: NoveltyCheckInput): string {
  return input.title ?? (firstLine(input.text, 100) || 'Novelty check');
}

type Feature = NonNullable<DataOf<'ai35-4FeatureExtract'>['data']>[number];

/** Stable option ids `f1`, `f2`... in the upstream's order. */
export const featureOptionId = (index: number) => `f${index + 1}`;

/** The extracted features as options; the upstream's `selected` ones are preselected. */
export function featureOptions(features: Feature[]): SelectionOption[] {
  return features.map((feature, index) => {
    const details = [
      feature.feature_weight ? `weight: ${feature.feature_weight}` : undefined,
      feature.feature_elements ? `elements: ${feature.feature_elements}` : undefined,
    ].filter((part): part is string => part !== undefined);
    return {
      id: featureOptionId(index),
      label: shorten(feature.feature_text ?? feature.feature_text_original ?? `feature ${index + 1}`, 200),
      detail: details.length > 0 ? shorten(details.join('; '), 300) : undefined,
      preselected: feature.selected === true,
    };
  });
}

const featureTypes = ['topic_search', 'key_search', 'sup_search'] as const;
type FeatureType = (typeof featureTypes)[number];
const isFeatureType = (value: unknown): value is FeatureType => featureTypes.includes(value as FeatureType);

type Elements = NonNullable<DataOf<'ai35-6RetrievalElements'>['elements']>;

/** The search elements echoed back unchanged (nulls removed, an unknown feature type left out). */
export function echoElements(elements: Elements): RequestOf<'ai35-7NoveltySearchAgentSearch'>['elements'] {
  const clean = withoutNulls(elements);
  return {
    ...clean,
    list: clean.list?.map(({ feature_type, ...item }) =>
      isFeatureType(feature_type) ? { ...item, feature_type } : item,
    ),
  };
}

const FAILED_SEARCH = new Set(['failed', 'fail', 'failure', 'error', 'exception']);

const step = stepsFor('novelty-check', noveltyCheckInput);

/** The novelty task every call after the submit names, and the exported report's link. */
const taskId = step.key('taskId', nonEmpty);
const reportUrl = step.key('reportUrl', nonEmpty);

const submit = step.call({
  name: 'submit',
  title: 'submit',
  operation: 'ai35-1NoveltySearchSubmit',
  request: ({ input }) => ({
    input: input.text,
    lang: input.lang,
    ...(input.pbdStart ? { pbd_start: input.pbdStart } : {}),
    ...(searchEnd(input) ? { pbd_end: searchEnd(input) } : {}),
  }),
  decide: (data) =>
    data.task_id
      ? { type: 'next', context: taskId.set(data.task_id) }
      : { type: 'fail', message: 'ai35-1 answered without a task_id' },
});

const summary = step.call({
  name: 'summary',
  title: 'summary of the technical solution',
  operation: 'ai35-2TechSolutionGet',
  poll: noveltyPolls.summary,
  request: (ctx) => ({ task_id: ctx.get(taskId) }),
  decide: (data) => untilDone(numberState(data.status), 'the summary', data.status, () => ({ type: 'next' })),
});

const confirmSummary = step.call({
  name: 'confirm-summary',
  title: 'confirm the summary',
  operation: 'ai35-3TechSolutionUpdate',
  needs: [summary],
  request: (ctx) => {
    const { tech_solution } = ctx.output(summary);
    return { task_id: ctx.get(taskId), ...(tech_solution ? { tech_solution } : {}) };
  },
  decide: () => ({ type: 'next' }),
});

const features = step.call({
  name: 'features',
  title: 'technical features',
  operation: 'ai35-4FeatureExtract',
  poll: noveltyPolls.features,
  request: (ctx) => ({ task_id: ctx.get(taskId) }),
  decide: (data) =>
    untilDone(numberState(data.status), 'the feature extraction', data.status, () => {
      const extracted = data.data ?? [];
      if (extracted.length === 0) return { type: 'fail', message: 'ai35-4 extracted no technical features' };
      return {
        type: 'select',
        offer: {
          prompt: 'Which technical features should the novelty search compare?',
          options: featureOptions(extracted),
          min: 1,
        },
      };
    }),
});

const confirmFeatures = step.call({
  name: 'confirm-features',
  title: 'confirm the features',
  operation: 'ai35-5FeatureConfirm',
  needs: [features],
  request: (ctx) => {
    const picked = ctx.chosen(features);
    return {
      task_id: ctx.get(taskId),
      tech_features: (ctx.output(features).data ?? []).map((feature, index) => ({
        ...withoutNulls(feature),
        selected: picked.has(featureOptionId(index)),
      })),
    };
  },
  decide: () => ({ type: 'next' }),
});

const searchElements = step.call({
  name: 'search-elements',
  title: 'search elements',
  operation: 'ai35-6RetrievalElements',
  poll: noveltyPolls.searchElements,
  request: (ctx) => ({ task_id: ctx.get(taskId) }),
  decide: (data) =>
    untilDone(numberState(data.status), 'the search elements', data.status, () =>
      data.elements ? { type: 'next' } : { type: 'fail', message: 'ai35-6 answered without search elements' },
    ),
});

const agentSearch = step.call({
  name: 'agent-search',
  title: 'start the agent search',
  operation: 'ai35-7NoveltySearchAgentSearch',
  needs: [searchElements],
  request: (ctx) => ({
    task_id: ctx.get(taskId),
    elements: echoElements(ctx.output(searchElements).elements ?? {}),
  }),
  decide: () => ({ type: 'next' }),
});

const agentResult = step.call({
  name: 'agent-result',
  title: 'agent search (takes minutes)',
  operation: 'ai35-8NoveltySearchAgentResult',
  poll: noveltyPolls.agentResult,
  request: (ctx) => ({ task_id: ctx.get(taskId) }),
  decide: (data): Decision<'novelty-check'> => {
    const status = (data.task_status ?? '').trim().toLowerCase();
    if (status === 'success' || status === 'succeed' || status === 'succeeded') {
      // Without references there is nothing to look up; the optional steps leave themselves out by input.
      const found = (data.final_result ?? []).some((doc) => doc.patent_id);
      return found ? { type: 'next' } : { type: 'next', step: exportReport };
    }
    if (FAILED_SEARCH.has(status)) {
      return {
        type: 'fail',
        message: `the agent search failed upstream (task_status "${data.task_status}")`,
      };
    }
    // Anything else is a stage of a search still running.
    return { type: 'poll' };
  },
});

/** How many patents one p011 call may name. */
export const bibliographyBatch = patentDataBatch;

/**
 * The p011 (and p041, p014) query for the references found: by `patent_number` when every id is a
 * publication number (as the sandbox gives), else by `patent_id` (the platform's own ids); the first
 * 100, each once.
 */
export function bibliographyQuery(
  references: readonly { patent_id?: string | null | undefined }[],
): RequestOf<'p011BasicPatentDataSimpleBibliography'> {
  return patentDataQuery(references.map((doc) => doc.patent_id));
}

/** Why the legal-status and family calls are left out, when the input turns them off. */
const legalDataOff = ({ input }: { input: NoveltyCheckInput }) =>
  input.legalData ? undefined : '"legalData" is false';

const bibliography = step.call({
  name: 'bibliography',
  title: 'bibliographic data of the references',
  operation: 'p011BasicPatentDataSimpleBibliography',
  optional: true,
  note: 'one call for all references; left out with "bibliography": false; its failure does not fail the job (the report says what is missing and why)',
  needs: [agentResult],
  skipWhen: ({ input }) => (input.bibliography ? undefined : '"bibliography" is false'),
  request: (ctx) => bibliographyQuery(ctx.output(agentResult).final_result ?? []),
  decide: () => ({ type: 'next' }),
});

const legalStatus = step.call({
  name: legalStatusStep,
  title: 'legal status of the references',
  operation: 'p041BasicPatentDataSimpleLegalStatus',
  optional: true,
  note: 'one call for all references; left out with "legalData": false; its failure does not fail the job (the report says what is missing and why)',
  needs: [agentResult],
  skipWhen: legalDataOff,
  request: (ctx) => bibliographyQuery(ctx.output(agentResult).final_result ?? []),
  decide: () => ({ type: 'next' }),
});

const family = step.call({
  name: familyStep,
  title: 'patent families of the references',
  operation: 'p014BasicPatentDataPatentFamily',
  optional: true,
  note: 'one call for all references; left out with "legalData": false; its failure does not fail the job',
  needs: [agentResult],
  skipWhen: legalDataOff,
  request: (ctx) => bibliographyQuery(ctx.output(agentResult).final_result ?? []),
  decide: () => ({ type: 'next' }),
});

const exportReport = step.call({
  name: 'export',
  title: 'create the report',
  operation: 'ai35-10NoveltySearchExport',
  request: (ctx) => ({ task_id: ctx.get(taskId), title: noveltyTitle(ctx.input) }),
  decide: () => ({ type: 'next' }),
});

const reportLink = step.call({
  name: 'report-link',
  title: 'report link',
  operation: 'ai35-11ReportGet',
  poll: noveltyPolls.reportLink,
  request: (ctx) => ({ task_id: ctx.get(taskId) }),
  decide: (data) =>
    untilDone(numberState(data.status), 'the report export', data.status, () =>
      data.report_url
        ? { type: 'next', context: reportUrl.set(data.report_url) }
        : { type: 'fail', message: 'ai35-11 reported success without a report_url' },
    ),
});

const reportDocument = step.fetch({
  name: 'report-document',
  title: 'download the report',
  url: (ctx) => ctx.get(reportUrl),
  refreshFrom: reportLink,
  decide: () => ({ type: 'complete' }),
});

export const noveltyCheck = defineWorkflow<NoveltyCheckInput>({
  name: 'novelty-check',
  version: 1,
  description: 'Novelty search of a technical description: features, search elements, closest references.',
  input: noveltyCheckInput,
  fromText: (text, fileName) => {
    const document = readTextDocument(text, fileName);
    return { text: document.text, title: shorten(document.title, 200) };
  },
  steps: [
    submit,
    summary,
    confirmSummary,
    features,
    confirmFeatures,
    searchElements,
    agentSearch,
    agentResult,
    bibliography,
    legalStatus,
    family,
    exportReport,
    reportLink,
    reportDocument,
  ],
  report: (r) => ({ title: `Novelty check: ${noveltyTitle(r.input)}`, markdown: noveltyMarkdown(r) }),
  summary: noveltySummary,
  example: {
    text: 'A solid-state lithium battery whose ceramic separator is reinforced by a woven glass-fibre mesh, so that the separator survives 500 charge cycles without cracking. The mesh is embedded during tape casting and sintered with the ceramic.',
    title: 'Fibre-reinforced ceramic separator',
    lang: 'en',
    pbdStart: '2015-01-01',
  },
  digest: noveltyDigest,
  findings: noveltyFindings,
});

function noveltyMarkdown(r: ReportInput<NoveltyCheckInput>): string {
  return noveltyReportMarkdown(r, r.input, `Novelty check: ${noveltyTitle(r.input)}`);
}

/** "7 features (5 selected), 4 references, closest CN112345678A (0.82)". */
export function noveltySummary(r: ReportInput<NoveltyCheckInput>): string {
  const features = outputOf(r.outputs, 'features', 'ai35-4FeatureExtract')?.data ?? [];
  const selected = (r.selections['features'] ?? []).length;
  const { references, conclusion } = noveltyAnalysisOf(r, r.input);
  const parts = [
    `${features.length} features (${selected} selected)`,
    `${references.length} ${references.length === 1 ? 'reference' : 'references'}`,
  ];
  const closest = conclusion.closest;
  if (closest)
    parts.push(
      `closest ${closest.id} (${closest.category}, ${score(publicScore(closest.reference.public_score))})`,
    );
  if (references.length > 0)
    parts.push(
      conclusion.notFound.length > 0 ? `not found: ${conclusion.notFound.join(', ')}` : 'every feature found',
    );
  return parts.join(', ');
}
