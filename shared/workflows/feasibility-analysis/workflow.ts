/**
 * feasibility-analysis (Feasibility Analysis Assistant): a technical solution assessed by the
 * platform for its technical and economic feasibility, its risks and a recommendation, delivered as
 * a PDF.
 *
 * ai40-1 submit the solution (task_id) → ai40-2 poll until the assessment's link → fetch the PDF.
 */
import * as z from 'zod';
import type { PollPolicy } from '../../engine/policies';
import { defineWorkflow, stepsFor } from '../../engine/workflow';
import { shorten } from '../../reports/markdown';
import { nonEmpty, numberState, untilDone } from '../common/step-data';
import { firstLine, readTextDocument } from '../common/text-input';
import { feasibilityMarkdown, feasibilitySummary } from './report';

/** The input of a feasibility analysis. */
export const feasibilityInput = z.lazy(() =>
  z.strictObject({
    /** The technical solution to assess: what it is, how it works, what it is for. */
    text: z
      .string({ error: 'text: the technical solution to assess is required (a string)' })
      .trim()
      .min(1, { error: 'text: the technical solution is empty' }),
    /** The report's title; default: the solution's first line. */
    title: z.string().trim().min(1, { error: 'title: must not be empty when given' }).max(200).optional(),
    /** The assessment's language, `en` or `cn`; default `en`. */
    lang: z.enum(['en', 'cn'], { error: 'lang: en or cn' }).default('en'),
    /** Whether the PDF carries the platform's logo; default: the platform's choice. */
    logo: z.boolean({ error: 'logo: true or false' }).optional(),
  }),
);
export type FeasibilityInput = z.infer<typeof feasibilityInput>;

/** The assessment takes a few minutes; one still missing after two hours is given up. */
export const feasibilityPolls = {
  assessment: { firstDelayMs: 120_000, factor: 1.5, maxDelayMs: 90_000, giveUpAfterMs: 2 * 60 * 60_000 },
} satisfies Record<string, PollPolicy>;

/** The report's title: the input's, else the solution's first line. */
export function feasibilityTitle(input: Pick<FeasibilityInput, 'title' | 'text'>): string {
  return input.title ?? (firstLine(input.text, 100) || 'Technical solution');
}

const step = stepsFor('feasibility-analysis', feasibilityInput);

const taskId = step.key('taskId', nonEmpty);
const reportUrl = step.key('reportUrl', nonEmpty);

const submit = step.call({
  name: 'submit',
  title: 'submit the solution',
  operation: 'ai40-1AiFeasibilityAnalysisCreation',
  request: ({ input }) => ({
    text: input.text,
    lang: input.lang,
    ...(input.logo !== undefined && { need_logo: input.logo }),
  }),
  decide: (data) =>
    data.task_id
      ? { type: 'next', context: taskId.set(data.task_id) }
      : { type: 'fail', message: 'ai40-1 answered without a task_id' },
});

const assessment = step.call({
  name: 'assessment',
  title: 'wait for the assessment',
  operation: 'ai40-2AiFeasibilityAnalysisQuery',
  poll: feasibilityPolls.assessment,
  request: (ctx) => ({ task_id: ctx.get(taskId) }),
  decide: (data) =>
    untilDone(numberState(data.status), 'the feasibility analysis', data.status, () =>
      data.url
        ? { type: 'next', context: reportUrl.set(data.url) }
        : { type: 'fail', message: 'ai40-2 reported success without a url' },
    ),
});

const document = step.fetch({
  name: 'assessment-document',
  title: 'download the assessment',
  url: (ctx) => ctx.get(reportUrl),
  refreshFrom: assessment,
  decide: () => ({ type: 'complete' }),
});

export const feasibilityAnalysis = defineWorkflow<FeasibilityInput>({
  name: 'feasibility-analysis',
  version: 1,
  description:
    'A technical solution assessed for technical and economic feasibility, risks and a recommendation (a PDF).',
  input: feasibilityInput,
  fromText: (text, fileName) => {
    const read = readTextDocument(text, fileName);
    return { text: read.body || read.text, title: shorten(read.title, 200) };
  },
  steps: [submit, assessment, document],
  report: (r) => {
    const title = `Feasibility analysis: ${feasibilityTitle(r.input)}`;
    return { title, markdown: feasibilityMarkdown(r, title) };
  },
  summary: feasibilitySummary,
  example: {
    text: 'Wrap each egg in a soft protective layer that absorbs the impact of a fall: expanded polystyrene, sponge, cotton, bubble wrap or a towel, held by a paper sleeve.',
    title: 'Impact-absorbing egg sleeve',
    lang: 'en',
  },
});
