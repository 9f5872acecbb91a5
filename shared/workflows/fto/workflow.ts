/**
 * fto: may this product be made and sold in these markets? The platform extracts the product's
 * technical features (a person may choose which count), searches the patents in force or pending
 * in the markets, compares each one's claims element by element with the product, rates the risk
 * and writes a report of up to five of them.
 *
 * ai66-1 submit → ai66-2 features (poll until extracted) → SELECT features → ai66-3 confirm →
 * ai66-4 start the search → ai66-8 for each patent named in `comparePatents` while the search runs
 * (optional, up to five; left out without one) → ai66-5 results (poll, minutes) → SELECT the
 * report's patents (1 to 5, beside the ones compared) → p041 legal status and p014 families of the
 * patents found (optional: their failure does not fail the job) → ai66-6 create the report → ai66-7
 * report link (poll) → fetch the report document. When the search finds nothing and no named patent
 * could be compared, the job ends at ai66-5 with opflow's report: the platform's report needs a patent.
 */
import * as z from 'zod';
import type { SelectionOption } from '../../engine/job-record';
import type { PollPolicy } from '../../engine/policies';
import { type Decision, defineWorkflow, type ReportInput, stepsFor } from '../../engine/workflow';
import type { RequestOf } from '../../openplatform/schemas/requests';
import type { DataOf } from '../../openplatform/schemas/responses';
import { shorten } from '../../reports/markdown';
import { familyStep, isPublicationNumber, legalStatusStep, patentDataQuery } from '../common/patent-status';
import { nonEmpty, nonNegativeInt, numberState, untilDone, withoutNulls } from '../common/step-data';
import { firstLine, readTextDocument } from '../common/text-input';
import { analyseFto } from './analysis';
import { addedPatents, compareStepName } from './compare';
import { ftoDigest, ftoFindings } from './digest';
import { compactDay, comparePatentLimit, type FtoInput, ftoInput, legalStatusCodes } from './input';
import { ftoReportMarkdown } from './report';

const name = 'fto';

/**
 * Poll schedules, aimed near the usual completion times: the feature extraction about 20 s, the
 * search agent five to eight minutes, the report about 40 s.
 */
export const ftoPolls = {
  features: { firstDelayMs: 20_000, factor: 1.5, maxDelayMs: 60_000, giveUpAfterMs: 30 * 60_000 },
  agentResult: { firstDelayMs: 90_000, factor: 1.5, maxDelayMs: 180_000, giveUpAfterMs: 120 * 60_000 },
  reportLink: { firstDelayMs: 30_000, factor: 1.5, maxDelayMs: 60_000, giveUpAfterMs: 30 * 60_000 },
} satisfies Record<string, PollPolicy>;

/** The report's title: the input's, else the description's first line. */
export function ftoTitle(input: Pick<FtoInput, 'title' | 'text'>): string {
  return input.title ?? (firstLine(input.text, 100) || 'FTO search');
}

type Feature = NonNullable<DataOf<'ai66-2FeatureExtract'>['features']>[number];
type Patent = NonNullable<DataOf<'ai66-5AgentResult'>['final_result']>[number];

/** Stable option ids `f1`, `f2`... and `p1`, `p2`... in the upstream's order. */
const featureId = (index: number) => `f${index + 1}`;
const patentId = (index: number) => `p${index + 1}`;

/** The extracted features as options; the platform's `is_select` ones (score ≥ threshold) preselected. */
export function ftoFeatureOptions(
  features: Feature[],
  threshold: number | null | undefined,
): SelectionOption[] {
  return features.map((feature, index) => ({
    id: featureId(index),
    label: shorten(feature?.tech_feature ?? `feature ${index + 1}`, 200),
    detail: shorten(
      [
        feature?.score !== null && feature?.score !== undefined ? `score ${feature.score}` : undefined,
        feature?.core ? 'core' : undefined,
        feature?.reason ?? undefined,
      ]
        .filter(Boolean)
        .join('; '),
      300,
    ),
    preselected: feature?.is_select ?? (feature?.score ?? 0) >= (threshold ?? 60),
  }));
}

/** The report can take at most this many patents (ai66-6). */
export const reportPatentLimit = 5;

const RISK_RANK: Record<string, number> = { high: 0, medium: 1, low: 2 };

/** The patents found as options; the five of highest risk (then score) preselected. */
export function ftoPatentOptions(patents: Patent[]): SelectionOption[] {
  const ranked = patents
    .map((patent, index) => ({ patent, index }))
    .sort(
      (a, b) =>
        (RISK_RANK[(a.patent?.risk_level ?? '').toLowerCase()] ?? 3) -
          (RISK_RANK[(b.patent?.risk_level ?? '').toLowerCase()] ?? 3) ||
        (b.patent?.public_score ?? 0) - (a.patent?.public_score ?? 0),
    )
    .slice(0, reportPatentLimit)
    .map(({ index }) => index);
  const preselected = new Set(ranked);
  return patents.map((patent, index) => ({
    id: patentId(index),
    label: shorten(
      `${patent?.patent_id ?? `patent ${index + 1}`} (${patent?.risk_level ?? 'risk not given'})`,
      200,
    ),
    detail: shorten(patent?.document, 300) || undefined,
    preselected: preselected.has(index),
  }));
}

/** A found patent as ai66-6 takes it back: nulls removed, what it requires filled in. */
export function reportPatent(patent: Patent): RequestOf<'ai66-6ReportCreate'>['final_res'][number] {
  const clean = withoutNulls(patent) ?? {};
  const features = (clean.features ?? []).map((feature) => ({
    ...feature,
    score: feature.score ?? 0,
    tech_feature: feature.tech_feature ?? '',
  }));
  return {
    ...clean,
    patent_id: clean.patent_id ?? '',
    features,
    public_score: clean.public_score ?? 0,
    feature_match_num: clean.feature_match_num ?? features.filter((feature) => feature.similar).length,
    comparison_conclusion: clean.comparison_conclusion ?? {},
    selected: true,
  } as RequestOf<'ai66-6ReportCreate'>['final_res'][number];
}

/** The Patent Basic Data query for the patents found: by number when all are numbers, else by id. */
export const patentQuery = (patents: readonly Patent[]) =>
  patentDataQuery(patents.map((patent) => patent?.patent_id));

/**
 * The legal-status and family query: the patents found, and the ones named for comparison when the
 * found ones are named by publication number too (one query names patents one way).
 */
function statusQuery(found: readonly Patent[], input: FtoInput) {
  const ids = found.filter(Boolean).map((patent) => patent?.patent_id);
  const byNumber = ids.every((id) => isPublicationNumber((id ?? '').trim()));
  return patentDataQuery([...ids, ...(byNumber ? (input.comparePatents ?? []) : [])]);
}

const FAILED_SEARCH = new Set(['failed', 'fail', 'failure', 'error', 'exception']);

const step = stepsFor(name, ftoInput);

const taskId = step.key('taskId', nonEmpty);
const reportUrl = step.key('reportUrl', nonEmpty);
/** The places in `comparePatents` whose ai66-8 comparison came back (the failed ones are skipped steps). */
const compared = step.key(
  'comparedPatents',
  z.lazy(() => z.array(nonNegativeInt)),
);

const submit = step.call({
  name: 'submit',
  title: 'submit',
  operation: 'ai66-1FtoSubmit',
  request: ({ input }) => ({
    input: input.text,
    lang: input.lang,
    legal_status: input.legalStatus.map((status) => legalStatusCodes[status]),
    ...(input.markets ? { country: input.markets } : {}),
    ...(input.apdStart ? { apd_start: compactDay(input.apdStart) } : {}),
    ...(input.apdEnd ? { apd_end: compactDay(input.apdEnd) } : {}),
    ...(input.includeCompanies ? { include_company: input.includeCompanies } : {}),
    ...(input.excludeCompanies ? { exclude_company: input.excludeCompanies } : {}),
  }),
  decide: (data) =>
    data.task_id
      ? { type: 'next', context: taskId.set(data.task_id) }
      : { type: 'fail', message: 'ai66-1 answered without a task_id' },
});

const features = step.call({
  name: 'features',
  title: 'technical features',
  operation: 'ai66-2FeatureExtract',
  poll: ftoPolls.features,
  request: (ctx) => ({ task_id: ctx.get(taskId) }),
  // The platform answers an empty list while the analysis of ai66-1 still runs.
  decide: (data) => {
    const extracted = (data.features ?? []).filter((feature) => feature?.tech_feature);
    if (extracted.length === 0) return { type: 'poll' };
    return {
      type: 'select',
      offer: {
        prompt: 'Which technical features of the product should the FTO search compare with patent claims?',
        options: ftoFeatureOptions(extracted, data.threshold),
        min: 1,
      },
    };
  },
});

const confirmFeatures = step.call({
  name: 'confirm-features',
  title: 'confirm the features',
  operation: 'ai66-3FeatureConfirm',
  needs: [features],
  request: (ctx) => {
    const picked = ctx.chosen(features);
    const extracted = (ctx.output(features).features ?? []).filter((feature) => feature?.tech_feature);
    return {
      task_id: ctx.get(taskId),
      tech_features: extracted.map((feature, index) => {
        const clean = withoutNulls(feature) ?? {};
        return {
          ...clean,
          core: clean.core ?? false,
          keywords: clean.keywords ?? [],
          reason: clean.reason ?? '',
          score: clean.score ?? 0,
          tech_feature: clean.tech_feature ?? '',
          user_add: clean.user_add ?? false,
          is_select: picked.has(featureId(index)),
        };
      }),
    };
  },
  decide: () => ({ type: 'next' }),
});

const search = step.call({
  name: 'search',
  title: 'start the FTO search',
  operation: 'ai66-4SearchAgent',
  request: (ctx) => ({ task_id: ctx.get(taskId) }),
  decide: () => ({ type: 'next' }),
});

/** Why the `index`-th comparison step is left out: no patent named at that place. */
function noPatentAt(input: FtoInput, index: number): string | undefined {
  const named = input.comparePatents?.length ?? 0;
  if (index < named) return undefined;
  return named === 0
    ? 'no "comparePatents" given'
    : `"comparePatents" names ${named} ${named === 1 ? 'patent' : 'patents'}`;
}

/** ai66-8 for the `index`-th patent named in `comparePatents` (a step per place, up to five). */
const compareStep = (index: number) =>
  step.call({
    name: compareStepName(index),
    title: `compare patent ${index + 1} named (comparePatents)`,
    operation: 'ai66-8FeatureComparison',
    optional: true,
    note: 'one call per patent named in "comparePatents", left out without one; its failure does not fail the job (the report says which patent could not be compared and why)',
    skipWhen: ({ input }) => noPatentAt(input, index),
    request: (ctx) => ({ task_id: ctx.get(taskId), pn: ctx.input.comparePatents?.[index] ?? '' }),
    decide: (data, ctx) =>
      (data.final_res ?? []).some((patent) => patent?.patent_id || patent?.features?.length)
        ? { type: 'next', context: compared.set([...(ctx.find(compared) ?? []), index]) }
        : { type: 'fail', message: `ai66-8 answered no comparison of ${ctx.input.comparePatents?.[index]}` },
  });

const comparisons = Array.from({ length: comparePatentLimit }, (_, index) => compareStep(index));

const agentResult = step.call({
  name: 'agent-result',
  title: 'FTO search (takes minutes)',
  operation: 'ai66-5AgentResult',
  poll: ftoPolls.agentResult,
  request: (ctx) => ({ task_id: ctx.get(taskId) }),
  decide: (data, ctx): Decision<typeof name> => {
    const status = (data.task_status ?? '').trim().toLowerCase();
    if (FAILED_SEARCH.has(status))
      return { type: 'fail', message: `the FTO search failed upstream (task_status "${data.task_status}")` };
    if (status !== 'success' && status !== 'succeed' && status !== 'succeeded') return { type: 'poll' };
    const found = (data.final_result ?? []).filter((patent) => patent?.patent_id);
    const named = new Set(ctx.find(compared) ?? []).size;
    // Nothing in force in the markets and no named patent compared: the answer itself. The
    // platform's report needs a patent, so it is not asked for (opflow's report says why).
    if (found.length === 0) return named > 0 ? { type: 'next' } : { type: 'complete' };
    // The patents compared at the person's request take their places in the platform's report first.
    const places = reportPatentLimit - named;
    if (places <= 0) return { type: 'next' };
    return {
      type: 'select',
      offer: {
        prompt: `Which patents should the platform's FTO report analyse (1 to ${places}${named > 0 ? `, beside the ${named} named for comparison` : ''})? opflow's own report covers every patent found.`,
        options: ftoPatentOptions(found),
        min: 1,
        max: places,
      },
    };
  },
});

/** Why the legal-status and family calls are left out, when the input turns them off. */
const legalDataOff = ({ input }: { input: FtoInput }) =>
  input.legalData ? undefined : '"legalData" is false';

const legalStatus = step.call({
  name: legalStatusStep,
  title: 'legal status of the patents',
  operation: 'p041BasicPatentDataSimpleLegalStatus',
  optional: true,
  note: 'one call for all patents found; left out with "legalData": false; its failure does not fail the job (the report says what is missing and why)',
  needs: [agentResult],
  skipWhen: legalDataOff,
  request: (ctx) => statusQuery(ctx.output(agentResult).final_result ?? [], ctx.input),
  decide: () => ({ type: 'next' }),
});

const family = step.call({
  name: familyStep,
  title: 'patent families (where each patent reaches)',
  operation: 'p014BasicPatentDataPatentFamily',
  optional: true,
  note: 'one call for all patents found; left out with "legalData": false; its failure does not fail the job',
  needs: [agentResult],
  skipWhen: legalDataOff,
  request: (ctx) => statusQuery(ctx.output(agentResult).final_result ?? [], ctx.input),
  decide: () => ({ type: 'next' }),
});

const createReport = step.call({
  name: 'create-report',
  title: 'create the report',
  operation: 'ai66-6ReportCreate',
  needs: [agentResult, ...comparisons],
  request: (ctx) => {
    const picked = ctx.chosen(agentResult);
    const found = (ctx.output(agentResult).final_result ?? []).filter((patent) => patent?.patent_id);
    const added = addedPatents(ctx.outputs, ctx.input.comparePatents);
    return {
      task_id: ctx.get(taskId),
      title: ftoTitle(ctx.input),
      final_res: [
        ...found.filter((_, index) => picked.has(patentId(index))).map(reportPatent),
        ...added.map((patent) => ({ ...reportPatent(patent), user_added: true })),
      ],
    };
  },
  decide: () => ({ type: 'next' }),
});

const reportLink = step.call({
  name: 'report-link',
  title: 'report link',
  operation: 'ai66-7ReportGet',
  poll: ftoPolls.reportLink,
  request: (ctx) => ({ task_id: ctx.get(taskId) }),
  decide: (data) =>
    untilDone(numberState(data.status), 'the FTO report', data.status, () =>
      data.report_url
        ? { type: 'next', context: reportUrl.set(data.report_url) }
        : { type: 'fail', message: 'ai66-7 reported success without a report_url' },
    ),
});

const reportDocument = step.fetch({
  name: 'report-document',
  title: 'download the report',
  url: (ctx) => ctx.get(reportUrl),
  refreshFrom: reportLink,
  decide: () => ({ type: 'complete' }),
});

/** "6 patents: 2 high, 1 medium, 3 low risk; high in US, EP; highest EP4974878B1". */
export function ftoSummary(r: ReportInput<FtoInput>): string {
  const analysis = analyseFto(r.outputs, r.context, r.input);
  const { patents, markets } = analysis;
  if (patents.length === 0)
    return analysis.notCompared.length > 0
      ? `nothing compared: no patent found in the markets searched, and the ${analysis.notCompared.length} named could not be compared`
      : 'no patent found in the markets searched';
  const byRisk = (risk: string) => patents.filter((patent) => !patent.lapsed && patent.risk === risk).length;
  const parts = [
    `${patents.length} ${patents.length === 1 ? 'patent' : 'patents'}: ${byRisk('High')} high, ${byRisk('Medium')} medium, ${byRisk('Low')} low risk`,
  ];
  const high = markets.filter((market) => market.risk === 'High').map((market) => market.market);
  if (high.length > 0) parts.push(`high in ${high.join(', ')}`);
  const worst = patents[0];
  if (worst) parts.push(`highest ${worst.number ?? worst.id}`);
  return parts.join('; ');
}

export const fto = defineWorkflow<FtoInput>({
  name,
  version: 1,
  description:
    'Freedom-to-operate search of a product in its markets: patents in force or pending, a claim chart per independent claim, the risk per patent and market.',
  input: ftoInput,
  fromText: (text, fileName) => {
    const document = readTextDocument(text, fileName);
    return { text: document.text, title: shorten(document.title, 200) };
  },
  steps: [
    submit,
    features,
    confirmFeatures,
    search,
    ...comparisons,
    agentResult,
    legalStatus,
    family,
    createReport,
    reportLink,
    reportDocument,
  ],
  report: (r) => {
    const title = `FTO search: ${ftoTitle(r.input)}`;
    return { title, markdown: ftoReportMarkdown(r, title) };
  },
  summary: ftoSummary,
  example: {
    text: 'A solid-state lithium battery whose ceramic separator is reinforced by a woven glass-fibre mesh, so that the separator survives 500 charge cycles without cracking. The mesh is embedded during tape casting and sintered with the ceramic.',
    title: 'Fibre-reinforced ceramic separator',
    markets: ['US', 'EP', 'CN'],
    legalStatus: ['active', 'pending'],
  },
  digest: ftoDigest,
  findings: ftoFindings,
});
