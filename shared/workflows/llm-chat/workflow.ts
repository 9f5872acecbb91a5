/**
 * llm-chat (Patsnap LLM): one question to one of the platform's three models, streamed.
 * ai07 is the general chat model (prompt of at most 500 characters), ai50 the patent model (query of
 * at most 30,000), ai20 the life-science model (query of at most 16,000, optionally continuing a
 * session).
 *
 * One step per model; the job starts at its model's step (`start`), which streams and completes.
 */
import { defineWorkflow, type StepContext, stepsFor, type Workflow } from '../../engine/workflow';
import { shorten } from '../../reports/markdown';
import { streamedAnswerDigest } from '../common/digest';
import { readTextDocument } from '../common/text-input';
import { answerStep, type LlmChatInput, llmChatInput, type Model, questionOf } from './input';
import { chatMarkdown, chatSummary, chatTitle, modelNames } from './report';

/*
 * A streamed answer has the default attempts, like a read: the engine sends a stream again only when
 * it was not streamed (an error answer instead of the stream, a refused connection);
 * a stream cut off once it began is never sent again (see docs/concepts/reliability.md).
 */

/** Refuse to ask a model other than the job's (would happen if a job were not started at `start`). */
function requireModel(ctx: StepContext<LlmChatInput>, model: Model) {
  if (ctx.input.model !== model) {
    throw new Error(
      `llm-chat: the job asks ${ctx.input.model} but reached the ${model} step; start it at ${answerStep(ctx.input.model)}`,
    );
  }
}

const answered = (result: { text: string; finishReason: string }, model: Model) =>
  result.text.trim() === ''
    ? ({
        type: 'fail',
        message: `${model} streamed no answer (finish reason "${result.finishReason}")`,
      } as const)
    : ({ type: 'complete' } as const);

const step = stepsFor('llm-chat', llmChatInput);

/** One step per model, each the job's start when the input asks its model. */
const answers = {
  ai50: step.stream({
    name: answerStep('ai50'),
    title: 'ai50 answer',
    operation: 'ai50ChatPatGptStream',
    request: (ctx) => {
      requireModel(ctx, 'ai50');
      return { query: questionOf(ctx.input), stream: true };
    },
    decide: (result) => answered(result, 'ai50'),
  }),
  ai07: step.stream({
    name: answerStep('ai07'),
    title: 'ai07 answer',
    operation: 'ai07ChatCcGptStream',
    request: (ctx) => {
      requireModel(ctx, 'ai07');
      return { prompt: questionOf(ctx.input), stream: true };
    },
    decide: (result) => answered(result, 'ai07'),
  }),
  ai20: step.stream({
    name: answerStep('ai20'),
    title: 'ai20 answer',
    operation: 'ai20ChatPharmGptStream',
    request: (ctx) => {
      requireModel(ctx, 'ai20');
      return {
        query: questionOf(ctx.input),
        ...(ctx.input.sessionId ? { session_id: ctx.input.sessionId } : {}),
      };
    },
    decide: (result) => answered(result, 'ai20'),
  }),
} satisfies Record<Model, unknown>;

const workflow = defineWorkflow<LlmChatInput>({
  name: 'llm-chat',
  version: 1,
  description: 'One question to the ai07, ai50 or ai20 model, answered as a stream.',
  input: llmChatInput,
  fromText: (text, fileName) => {
    const document = readTextDocument(text, fileName);
    return { query: document.body || document.text, title: shorten(document.title, 200) };
  },
  start: (input) => answers[input.model],
  steps: [answers.ai50, answers.ai07, answers.ai20],
  report: (r) => ({
    title: `${modelNames[r.input.model]}: ${chatTitle(r.input)}`,
    markdown: chatMarkdown(r),
  }),
  summary: chatSummary,
  example: { text: 'Summarise the main failure modes of solid-state battery separators.', model: 'ai50' },
  commonNames: { text: 'query' },
  digest: (r) => streamedAnswerDigest(r, [answers.ai50, answers.ai07, answers.ai20]),
});

/** The llm-chat workflow: a job starts at its model's step (`start`). */
export const llmChat: Workflow<LlmChatInput> = workflow;
