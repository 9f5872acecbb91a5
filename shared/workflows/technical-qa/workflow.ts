/**
 * technical-qa (Technical Q&A): a technical question answered from patents, papers and the web,
 * with the sources the answer cites, the question's analysis and related questions.
 *
 * ai36-1 submit the question (task_id) → ai36-2 poll task_status until the answer is written.
 */
import * as z from 'zod';
import type { PollPolicy } from '../../engine/policies';
import { defineWorkflow, stepsFor } from '../../engine/workflow';
import { shorten } from '../../reports/markdown';
import { nonEmpty, numberState, untilDone } from '../common/step-data';
import { readTextDocument } from '../common/text-input';
import { qaDigest } from './digest';
import { qaFindings } from './findings';
import { qaMarkdown, qaSummary, qaTitle } from './report';

/** Where the answer may look, as the platform names its sources. */
export const ragSources = ['patent', 'paper', 'website'] as const;
/** The platform's answer models. */
export const qaModels = ['seekgpt-thinking', 'o3-mini', 'summary-gpt'] as const;

/** The input of a technical question. */
export const technicalQaInput = z.lazy(() =>
  z.strictObject({
    /** The technical question. */
    question: z
      .string({ error: 'question: the technical question is required (a string)' })
      .trim()
      .min(1, { error: 'question: the technical question is empty' }),
    /** The report's title; default: the question. */
    title: z.string().trim().min(1, { error: 'title: must not be empty when given' }).max(200).optional(),
    /** The answer's language, `en` or `cn`; default `en`. */
    lang: z.enum(['en', 'cn'], { error: 'lang: en or cn' }).default('en'),
    /** The model that writes the answer; default: the platform's choice. */
    model: z.enum(qaModels, { error: `model: one of ${qaModels.join(', ')}` }).optional(),
    /** Where to look (`patent`, `paper`, `website`); default: the platform's choice (all three). */
    sources: z
      .array(z.enum(ragSources, { error: `sources: each one of ${ragSources.join(', ')}` }), {
        error: `sources: a list of ${ragSources.join(', ')}`,
      })
      .min(1, { error: 'sources: name at least one source, or leave the list out' })
      .refine((list) => new Set(list).size === list.length, { error: 'sources: a source is listed twice' })
      .optional(),
    /** Let the platform check its summary against the sources (slower); default: the platform's choice. */
    summaryCheck: z.boolean({ error: 'summaryCheck: true or false' }).optional(),
  }),
);
export type TechnicalQaInput = z.infer<typeof technicalQaInput>;

/** The platform answers in one to three minutes; an answer still missing after an hour is given up. */
export const technicalQaPolls = {
  answer: { firstDelayMs: 60_000, factor: 1.5, maxDelayMs: 60_000, giveUpAfterMs: 60 * 60_000 },
} satisfies Record<string, PollPolicy>;

const step = stepsFor('technical-qa', technicalQaInput);

/** The task every poll names. */
const taskId = step.key('taskId', nonEmpty);

const submit = step.call({
  name: 'submit',
  title: 'submit the question',
  operation: 'ai36-1TechnicalQaSubmit',
  request: ({ input }) => ({
    input: input.question,
    lang: input.lang,
    ...(input.model && { model: input.model }),
    ...(input.sources && { rag_source: input.sources }),
    ...(input.summaryCheck !== undefined && { summary_check: input.summaryCheck }),
  }),
  decide: (data) =>
    data.task_id
      ? { type: 'next', context: taskId.set(data.task_id) }
      : { type: 'fail', message: 'ai36-1 answered without a task_id' },
});

const answer = step.call({
  name: 'answer',
  title: 'wait for the answer',
  operation: 'ai36-2TechnicalQaReport',
  poll: technicalQaPolls.answer,
  request: (ctx) => ({ task_id: ctx.get(taskId) }),
  decide: (data) =>
    untilDone(numberState(data.task_status), 'the technical Q&A task', data.task_status, () =>
      data.message_response?.summary
        ? { type: 'complete' }
        : { type: 'fail', message: 'ai36-2 reported success without an answer (message_response.summary)' },
    ),
});

export const technicalQa = defineWorkflow<TechnicalQaInput>({
  name: 'technical-qa',
  version: 1,
  description: 'A technical question answered from patents, papers and the web, with the sources it cites.',
  input: technicalQaInput,
  fromText: (text, fileName) => {
    const document = readTextDocument(text, fileName);
    return { question: document.body || document.text, title: shorten(document.title, 200) };
  },
  steps: [submit, answer],
  report: (r) => ({ title: `Technical Q&A: ${qaTitle(r.input)}`, markdown: qaMarkdown(r) }),
  summary: qaSummary,
  example: {
    text: 'How can the ceramic separator of a solid-state battery be kept from cracking over many charge cycles?',
    lang: 'en',
    sources: ['patent', 'paper'],
  },
  commonNames: { text: 'question' },
  digest: qaDigest,
  findings: qaFindings,
});
