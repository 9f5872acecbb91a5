/**
 * encyclopedia-qa (Bio-Pharma Encyclopedia Q&A): a biomedical question answered from the platform's
 * literature, with the documents the answer draws on.
 *
 * ai68-1 create the chat (chat_id, chat_item_id, reference documents) → ai68-2 streamed answer.
 */
import * as z from 'zod';
import { defineWorkflow, stepsFor } from '../../engine/workflow';
import { shorten } from '../../reports/markdown';
import { streamedAnswerDigest } from '../common/digest';
import { nonEmpty, outputOf } from '../common/step-data';
import { readTextDocument } from '../common/text-input';
import { encyclopediaMarkdown, encyclopediaSummary, qaTitle } from './report';

/** The platform's data sources, by name; its codes are 1 to 8 in this order. */
export const dataSources = [
  'all',
  'paper',
  'patent',
  'clinical-trial',
  'fda-label',
  'financial-report',
  'clinical-guideline',
  'epidemiology',
] as const;
export type DataSource = (typeof dataSources)[number];

/** The input of an encyclopedia question. */
export const encyclopediaQaInput = z.lazy(() =>
  z.strictObject({
    /** The biomedical question. */
    question: z
      .string({ error: 'question: the question is required (a string)' })
      .trim()
      .min(1, { error: 'question: the question is empty' }),
    /** The report's title; default: the question. */
    title: z.string().trim().min(1, { error: 'title: must not be empty when given' }).max(200).optional(),
    /** Where to look, by name (`paper`, `patent`, `clinical-trial`...); default: the platform's choice (all). */
    dataSource: z.enum(dataSources, { error: `dataSource: one of ${dataSources.join(', ')}` }).optional(),
    /** Deeper search (slower); default false. */
    deepSearch: z.boolean({ error: 'deepSearch: true or false' }).default(false),
    /** Longer reasoning (slower); default false. */
    longThink: z.boolean({ error: 'longThink: true or false' }).default(false),
    /** Also search the web; default false. */
    searchWebsite: z.boolean({ error: 'searchWebsite: true or false' }).default(false),
  }),
);
export type EncyclopediaQaInput = z.infer<typeof encyclopediaQaInput>;

/** The platform's code of a data source name (1 = all ... 8 = epidemiology). */
export const dataSourceCode = (source: DataSource) => dataSources.indexOf(source) + 1;

/*
 * A streamed answer has the default attempts, like a read: the engine sends a stream again only when
 * it was not streamed (an error answer instead of the stream, a refused connection);
 * a stream cut off once it began is never sent again (see docs/concepts/reliability.md).
 */

const step = stepsFor('encyclopedia-qa', encyclopediaQaInput);

/** The chat and the question's item in it, which the stream names. */
const chatId = step.key('chatId', nonEmpty);
const chatItemId = step.key('chatItemId', nonEmpty);

const answer = step.stream({
  name: 'answer',
  title: 'stream the answer',
  operation: 'ai68-2ChatAiLsStream',
  request: (ctx) => ({
    chat_id: ctx.get(chatId),
    chat_item_id: ctx.get(chatItemId),
  }),
  decide: (result) =>
    result.text.trim() === ''
      ? { type: 'fail', message: `ai68-2 streamed no answer (finish reason "${result.finishReason}")` }
      : { type: 'complete' },
});

export const encyclopediaQa = defineWorkflow<EncyclopediaQaInput>({
  name: 'encyclopedia-qa',
  version: 1,
  description: 'A biomedical question answered from the literature, with its references.',
  input: encyclopediaQaInput,
  fromText: (text, fileName) => {
    const document = readTextDocument(text, fileName);
    return { question: document.body || document.text, title: shorten(document.title, 200) };
  },
  steps: [
    step.call({
      name: 'create-chat',
      title: 'create the chat',
      operation: 'ai68-1ChatAiLsChat',
      request: ({ input }) => ({
        query: input.question,
        deep_search: input.deepSearch,
        long_think: input.longThink,
        search_website: input.searchWebsite,
        ...(input.dataSource ? { data_source: dataSourceCode(input.dataSource) } : {}),
      }),
      decide: (data) =>
        data.chat_id && data.chat_item_id
          ? { type: 'next', context: { ...chatId.set(data.chat_id), ...chatItemId.set(data.chat_item_id) } }
          : { type: 'fail', message: 'ai68-1 answered without a chat_id and chat_item_id' },
    }),
    answer,
  ],
  report: (r) => ({ title: `Encyclopedia Q&A: ${qaTitle(r.input)}`, markdown: encyclopediaMarkdown(r) }),
  summary: encyclopediaSummary,
  example: { text: 'Which biomarkers predict the response to PD-1 inhibitors?', deepSearch: false },
  commonNames: { text: 'question' },
  digest: (r) =>
    streamedAnswerDigest(
      r,
      [answer],
      outputOf(r.outputs, 'create-chat', 'ai68-1ChatAiLsChat')?.ref_doc ?? [],
    ),
});
