/**
 * The chat operations: the three LLM streams (ai07, ai50, ai20) and the encyclopedia Q&A (ai68-1
 * creates a chat with reference documents, ai68-2 streams the answer). Answers are built from the
 * question with a seeded generator; how frames are encoded is event-stream.ts's business.
 */
import * as z from 'zod';
import { driftSalt } from '../drift';
import { isoDate, patentNumber } from '../prior-art';
import { notFound } from '../sandbox-rejection';
import { hashText, SeededRandom } from '../seeded';
import { answerText, streamPieces, titleOf, tokenCount } from '../text-content';
import {
  json,
  type OperationContext,
  type OperationHandlers,
  type RegistryFactory,
  type StreamPlan,
  type StreamVariant,
} from './contract';

type ChatOperations = Pick<
  OperationHandlers,
  | 'ai07ChatCcGptStream'
  | 'ai50ChatPatGptStream'
  | 'ai20ChatPharmGptStream'
  | 'ai68-1ChatAiLsChat'
  | 'ai68-2ChatAiLsStream'
>;

interface Chat {
  owner: string;
  query: string;
  chatItemId: string;
  refDoc: {
    index: string;
    type: string;
    doc_type_detail: string;
    text: string;
    _text_display: string;
    link: string;
    post_time: string;
  }[];
}

const chatSchema = z.strictObject({
  owner: z.string().min(1),
  query: z.string(),
  chatItemId: z.string().min(1),
  refDoc: z.array(
    z.strictObject({
      index: z.string(),
      type: z.string(),
      doc_type_detail: z.string(),
      text: z.string(),
      _text_display: z.string(),
      link: z.string(),
      post_time: z.string(),
    }),
  ),
}) satisfies z.ZodType<Chat>;

interface Answer {
  text: string;
  usage: { input_tokens: number; output_tokens: number; total_tokens: number };
}

function answerFor(context: OperationContext, operation: string, question: string): Answer {
  const drift = driftSalt(context.drift(`${operation}\u0000${question}`));
  const text = answerText(
    question,
    SeededRandom.from(context.seed, hashText(question), operation, ...drift),
    5,
  );
  const input = tokenCount(question);
  const output = tokenCount(text);
  return { text, usage: { input_tokens: input, output_tokens: output, total_tokens: input + output } };
}

function plan(
  answer: Answer,
  defaultVariant: StreamVariant,
  envelopeData: StreamPlan['envelopeData'],
  chunkFields: Record<string, unknown> = {},
): StreamPlan {
  return {
    pieces: streamPieces(answer.text),
    finishStatus: 'finished',
    tokens: { input: answer.usage.input_tokens, output: answer.usage.output_tokens },
    defaultVariant,
    envelopeData,
    chunkFields,
  };
}

export function createChatOperations(registry: RegistryFactory): ChatOperations {
  const chats = registry<Chat>('chat', 'chat_id', chatSchema);

  return {
    ai07ChatCcGptStream: (body, context) => {
      const answer = answerFor(context, 'ai07', body.prompt);
      if (body.stream === false) {
        return json({ output: { content: answer.text, status: 'finished', usage: answer.usage } });
      }
      return {
        kind: 'stream',
        plan: plan(answer, 'delta', (content, status, final) => ({
          output: { content, status, ...(final ? { usage: answer.usage } : {}) },
        })),
      };
    },

    ai50ChatPatGptStream: (body, context) => {
      const answer = answerFor(context, 'ai50', body.query);
      const random = SeededRandom.from(context.seed, hashText(body.query), 'ai50-references');
      const references = [1, 2, 3].map((n) => ({
        type: 'patent',
        value: patentNumber(random),
        text: `Reference ${n} on ${titleOf(body.query, 40)}`,
      }));
      if (body.stream === false) {
        return json({
          output: { content: answer.text, status: 'finished', usage: answer.usage },
          references,
        });
      }
      return {
        kind: 'stream',
        plan: plan(answer, 'delta', (content, status, final) => ({
          output: { content, status, ...(final ? { usage: answer.usage } : {}) },
          ...(final ? { references } : {}),
        })),
      };
    },

    ai20ChatPharmGptStream: (body, context) => {
      const answer = answerFor(context, 'ai20', body.query);
      const sessionId = body.session_id ?? context.newId('hex');
      const random = SeededRandom.from(context.seed, hashText(body.query), 'ai20-references');
      const references = [1, 2].map((index) => ({
        index,
        doc_id: random.hex(24),
        doc_type: 'paper',
        type: 'paper',
        link: `https://sandbox.invalid/papers/${random.hex(12)}`,
        text: `Study ${index} related to ${titleOf(body.query, 40)}`,
        text_summary: 'A study whose findings support the answer.',
        post_date: Number(isoDate(random).replace(/-/g, '')),
      }));
      return {
        kind: 'stream',
        plan: plan(answer, 'cumulative', (content, status, final) => ({
          output: {
            content,
            status,
            session_id: sessionId,
            ...(final ? { usage: answer.usage, references } : {}),
          },
        })),
        resourceId: sessionId,
      };
    },

    'ai68-1ChatAiLsChat': (body, context) => {
      const chatId = context.newId('hex');
      const chatItemId = context.newId('hex');
      const random = SeededRandom.from(context.seed, hashText(body.query), 'ai68-1');
      const refDoc = [1, 2, 3].map((index) => {
        const text = `Reference ${index}: findings related to ${titleOf(body.query, 40)}`;
        return {
          index: String(index),
          type: random.pick(['paper', 'patent', 'clinical_trial']),
          doc_type_detail: 'Journal article',
          text,
          _text_display: text,
          link: `https://sandbox.invalid/docs/${random.hex(12)}`,
          post_time: isoDate(random),
        };
      });
      chats.add(chatId, { owner: context.owner, query: body.query, chatItemId, refDoc });
      return json({ chat_id: chatId, chat_item_id: chatItemId, ref_doc: refDoc }, chatId);
    },

    'ai68-2ChatAiLsStream': (body, context) => {
      const chat = chats.get(body.chat_id, context.owner);
      if (chat.chatItemId !== body.chat_item_id) throw notFound('chat_item_id', body.chat_item_id);
      const answer = answerFor(context, 'ai68-2', chat.query);
      const ids = { chat_id: body.chat_id, chat_item_id: body.chat_item_id };
      return {
        kind: 'stream',
        // The reference describes ai68-2's `data` as an OpenAI-like chunk, hence chunks in envelopes.
        plan: plan(
          answer,
          'openai-envelope',
          (content, status, final) => ({
            ...ids,
            output: { content, status, ...(final ? { usage: answer.usage } : {}) },
          }),
          ids,
        ),
        resourceId: body.chat_item_id,
      };
    },
  };
}
