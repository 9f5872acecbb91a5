/**
 * What the llm-chat workflow (llm-chat.ts) and its report (llm-chat-report.ts) both read: the models,
 * the job's input, its question and the step of each model. A file of its own so that the report
 * does not import the workflow, which imports the report.
 */
import * as z from 'zod';

export const models = ['ai07', 'ai50', 'ai20'] as const;
export type Model = (typeof models)[number];

/** The longest question each model takes, in characters (the platform's limits). */
export const questionLimits: Readonly<Record<Model, number>> = { ai07: 500, ai50: 30_000, ai20: 16_000 };

/** The input of a chat. `query` and `prompt` name the same thing (ai07's field is called prompt). */
export const llmChatInput = z.lazy(() =>
  z
    .strictObject({
      /** `ai07` (chat), `ai50` (patents) or `ai20` (life sciences); default `ai50`. */
      model: z.enum(models, { error: 'model: one of ai07, ai50, ai20' }).default('ai50'),
      /** The question. */
      query: z
        .string({ error: 'query: the question, a string' })
        .trim()
        .min(1, { error: 'query: the question is empty' })
        .optional(),
      /** The question, under the name ai07 uses; give either this or `query`. */
      prompt: z
        .string({ error: 'prompt: the question, a string' })
        .trim()
        .min(1, { error: 'prompt: the question is empty' })
        .optional(),
      /** ai20 only: the session of an earlier answer, to continue that conversation. */
      sessionId: z.string().trim().min(1, { error: 'sessionId: must not be empty when given' }).optional(),
      /** The report's title; default: the question. */
      title: z.string().trim().min(1, { error: 'title: must not be empty when given' }).max(200).optional(),
    })
    .superRefine((input, ctx) => {
      if (input.query === undefined && input.prompt === undefined) {
        ctx.addIssue({
          code: 'custom',
          path: ['query'],
          message: 'query: the question is required (or give it as prompt)',
        });
        return;
      }
      if (input.query !== undefined && input.prompt !== undefined) {
        ctx.addIssue({
          code: 'custom',
          path: ['prompt'],
          message: 'give the question once, as query or as prompt, not both',
        });
        return;
      }
      const field = input.query !== undefined ? 'query' : 'prompt';
      const length = (input.query ?? input.prompt ?? '').length;
      const limit = questionLimits[input.model];
      if (length > limit) {
        ctx.addIssue({
          code: 'custom',
          path: [field],
          message: `${field}: ${input.model} takes at most ${limit.toLocaleString('en-US')} characters, this question has ${length.toLocaleString('en-US')}`,
        });
      }
      if (input.sessionId !== undefined && input.model !== 'ai20') {
        ctx.addIssue({
          code: 'custom',
          path: ['sessionId'],
          message: `sessionId: only ai20 continues sessions, not ${input.model}`,
        });
      }
    }),
);
export type LlmChatInput = z.infer<typeof llmChatInput>;

/** The question, whichever name it came under. */
export const questionOf = (input: LlmChatInput) => input.query ?? input.prompt ?? '';

/** The step that asks `model`. */
export const answerStep = (model: Model) => `answer-${model}`;
