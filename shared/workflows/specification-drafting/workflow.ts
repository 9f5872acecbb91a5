/**
 * specification-drafting: a patent specification (CNIPA) drafted by the platform from a disclosure
 * and its claims. The platform classifies the invention and outlines its embodiments, extracts the
 * claims' feature tree and terms (a person may leave features out), then drafts the specification
 * document.
 *
 * ai37-1 init → ai37-2 summary (poll until classified and outlined) → ai37-3 feature tree →
 * SELECT the claim features to describe → ai37-4 draft the specification (its own task_id) →
 * ai37-5 poll the draft until its link → fetch the specification document.
 */
import type { SelectionOption } from '../../engine/job-record';
import type { PollPolicy } from '../../engine/policies';
import { defineWorkflow, type ReportInput, stepsFor } from '../../engine/workflow';
import type { RequestOf } from '../../openplatform/schemas/requests';
import type { DataOf } from '../../openplatform/schemas/responses';
import { shorten } from '../../reports/markdown';
import { nonEmpty, numberState, untilDone, withoutNulls } from '../common/step-data';
import { type SpecificationInput, specificationFromText, specificationInput } from './input';
import {
  specificationDigest,
  specificationFindings,
  specificationMarkdown,
  specificationSummary,
} from './report';

const name = 'specification-drafting';

/** The initialisation takes about a minute, the drafting about two; an hour is given up on. */
export const specificationPolls = {
  summary: { firstDelayMs: 45_000, factor: 1.5, maxDelayMs: 60_000, giveUpAfterMs: 60 * 60_000 },
  features: { firstDelayMs: 10_000, factor: 1.5, maxDelayMs: 60_000, giveUpAfterMs: 30 * 60_000 },
  draft: { firstDelayMs: 90_000, factor: 1.5, maxDelayMs: 90_000, giveUpAfterMs: 2 * 60 * 60_000 },
} satisfies Record<string, PollPolicy>;

export type SpecificationClaim = NonNullable<DataOf<'ai37-3ExtractFeatureCnipa'>['feature_tree']>[number];

/** The option id of claim `num`'s `index`th feature: `c1f1`, `c1f2`, `c2f1`... */
export const featureOptionId = (claimIndex: number, num: string | null | undefined, index: number) =>
  `c${(num ?? '').trim() || claimIndex + 1}f${index + 1}`;

/** Every claim feature as an option, all preselected (leaving one out is the person's choice). */
export function claimFeatureOptions(tree: readonly SpecificationClaim[]): SelectionOption[] {
  return tree.flatMap((claim, claimIndex) =>
    (claim?.claim_features ?? []).map((feature, index) => ({
      id: featureOptionId(claimIndex, claim?.num, index),
      label: shorten(`claim ${claim?.num ?? claimIndex + 1}: ${feature?.feature ?? ''}`, 200),
      detail: shorten((feature?.concepts ?? []).join(', '), 300) || undefined,
      preselected: feature?.feature_deleted !== 1,
    })),
  );
}

type Embodiment = NonNullable<RequestOf<'ai37-4GenerateReportCnipa'>['embodiments']>[number];

/** ai37-2's outline items as ai37-4's embodiments (the common preamble first, as the platform writes it). */
export function embodimentsOf(summary: DataOf<'ai37-2InitResultCnipa'>): Embodiment[] {
  return (summary.embodiment_outline ?? []).flatMap((item) => {
    const clean = withoutNulls(item);
    if (!clean?.text && !clean?.claim_text) return [];
    return [
      {
        text: clean.text ?? clean.claim_text ?? '',
        ...(clean.type ? { type: clean.type } : {}),
        ...(clean.claim_numbers ? { claim_numbers: clean.claim_numbers } : {}),
        ...(clean.embodiment_number !== undefined ? { embodiment_number: clean.embodiment_number } : {}),
      },
    ];
  });
}

const step = stepsFor(name, specificationInput);

const taskId = step.key('taskId', nonEmpty);
const draftId = step.key('draftId', nonEmpty);
const reportUrl = step.key('reportUrl', nonEmpty);

const init = step.call({
  name: 'init',
  title: 'submit the disclosure and claims',
  operation: 'ai37-1InitCnipa',
  request: ({ input }) => ({ claim: input.claims, disclosure: input.disclosure }),
  decide: (data) =>
    data.task_id
      ? { type: 'next', context: taskId.set(data.task_id) }
      : { type: 'fail', message: 'ai37-1 answered without a task_id' },
});

const summary = step.call({
  name: 'summary',
  title: 'classification, problem and embodiment outline',
  operation: 'ai37-2InitResultCnipa',
  poll: specificationPolls.summary,
  request: (ctx) => ({ task_id: ctx.get(taskId) }),
  decide: (data) =>
    untilDone(numberState(data.status), 'the specification initialisation', data.status, () =>
      data.category
        ? { type: 'next' }
        : { type: 'fail', message: 'ai37-2 reported success without a technology category' },
    ),
});

const features = step.call({
  name: 'features',
  title: 'claim feature tree and terms',
  operation: 'ai37-3ExtractFeatureCnipa',
  poll: specificationPolls.features,
  needs: [summary],
  request: (ctx) => ({
    task_id: ctx.get(taskId),
    category: ctx.input.category ?? ctx.output(summary).category ?? '',
  }),
  decide: (data) => {
    const tree = (data.feature_tree ?? []).filter((claim) => (claim?.claim_features ?? []).length > 0);
    if (tree.length === 0) return { type: 'poll' };
    return {
      type: 'select',
      offer: {
        prompt:
          'Which claim features should the specification describe? A feature left out is dropped from its claim (feature_deleted).',
        options: claimFeatureOptions(tree),
        min: 1,
      },
    };
  },
});

const generate = step.call({
  name: 'generate',
  title: 'draft the specification',
  operation: 'ai37-4GenerateReportCnipa',
  needs: [summary, features],
  request: (ctx) => {
    const init = ctx.output(summary);
    const extracted = ctx.output(features);
    const picked = ctx.chosen(features);
    const tree = (extracted.feature_tree ?? []).filter((claim) => (claim?.claim_features ?? []).length > 0);
    return {
      task_id: ctx.get(taskId),
      title: ctx.input.title,
      category: ctx.input.category ?? init.category ?? '',
      ...(init.classification ? { classification: init.classification } : {}),
      ...(init.technical_problem ? { technical_problem: init.technical_problem } : {}),
      ...(init.technical_methods ? { technical_methods: init.technical_methods } : {}),
      ...(init.benefit ? { benefit: init.benefit } : {}),
      feature_tree: tree.map((claim, claimIndex) => {
        const clean = withoutNulls(claim) ?? {};
        return {
          ...clean,
          claim_features: (clean.claim_features ?? []).map((feature, index) => ({
            ...feature,
            feature_deleted: picked.has(featureOptionId(claimIndex, claim?.num, index)) ? 0 : 1,
          })),
        } as NonNullable<RequestOf<'ai37-4GenerateReportCnipa'>['feature_tree']>[number];
      }),
      terms: (extracted.terms ?? []).flatMap((term) =>
        term?.name && term.unique_id ? [withoutNulls(term) as { name: string; unique_id: string }] : [],
      ),
      embodiments: embodimentsOf(init),
      ...(ctx.input.drawings ? { urls: ctx.input.drawings } : {}),
    };
  },
  // The drafting has its own task id; a platform that answers none keeps the initialisation's.
  decide: (data, ctx) => ({ type: 'next', context: draftId.set(data.task_id || ctx.get(taskId)) }),
});

const download = step.call({
  name: 'download',
  title: 'wait for the specification',
  operation: 'ai37-5SpecificationDownloadReport',
  poll: specificationPolls.draft,
  request: (ctx) => ({ task_id: ctx.get(draftId) }),
  decide: (data) =>
    untilDone(numberState(data.status), 'the specification drafting', data.status, () =>
      data.report_url
        ? { type: 'next', context: reportUrl.set(data.report_url) }
        : { type: 'fail', message: 'ai37-5 reported success without a report_url' },
    ),
});

const document = step.fetch({
  name: 'specification-document',
  title: 'download the specification',
  url: (ctx) => ctx.get(reportUrl),
  refreshFrom: download,
  decide: () => ({ type: 'complete' }),
});

export const specificationDrafting = defineWorkflow<SpecificationInput>({
  name,
  version: 1,
  description:
    'A patent specification (CNIPA) drafted from a disclosure and its claims: classification, claim feature tree, embodiments and the specification document.',
  input: specificationInput,
  fromText: specificationFromText,
  steps: [init, summary, features, generate, download, document],
  report: (r: ReportInput<SpecificationInput>) => {
    const title = `Specification: ${r.input.title}`;
    return { title, markdown: specificationMarkdown(r, title) };
  },
  summary: specificationSummary,
  example: {
    title: 'Quick-release drone battery latch',
    disclosure:
      'Technical field: battery mounts of unmanned aerial vehicles. Background: swapping the battery of an inspection drone needs a tool, and a loose battery is not detected before take-off. Solution: a spring-loaded pawl engages a notch in the battery housing; a release lever frees it with one hand; a hall sensor tells the flight controller whether the latch is closed. Effect: the battery is swapped in seconds, and the drone refuses to arm with an open latch.',
    claims:
      '1. A battery latch for a drone, comprising: a spring-loaded pawl engaging a notch of the battery housing; a release lever disengaging the pawl; and a hall sensor detecting the position of the pawl.\n2. The battery latch of claim 1, wherein the flight controller refuses to arm the motors while the hall sensor reports the latch open.\n3. The battery latch of claim 1 or 2, wherein the release lever is operable with one hand.',
  },
  commonNames: { text: 'disclosure' },
  // A disclosure alone is not enough: the claims and the title are needed too.
  takesDocument: false,
  digest: specificationDigest,
  findings: specificationFindings,
});
