/** The llm-chat report: the streamed answer, its references, then the question in full. */
import type { ReportInput } from '../../engine/workflow';
import { blocks, count, heading, inline, paragraphs, shorten, table, webLink } from '../../reports/markdown';
import { answerReferences } from '../common/answer-references';
import { streamOutputOf } from '../common/step-data';
import { answerStep, type LlmChatInput, type Model, questionOf } from './input';

export const modelNames: Readonly<Record<Model, string>> = {
  ai07: 'ai07 chat model',
  ai50: 'ai50 patent model',
  ai20: 'ai20 life-science model',
};

export const chatTitle = (input: LlmChatInput) => input.title ?? shorten(questionOf(input), 100);

export function chatMarkdown(r: ReportInput<LlmChatInput>): string {
  const { input, outputs } = r;
  const answer = streamOutputOf(outputs, answerStep(input.model));
  const references = answerReferences([], answer?.references ?? []);
  const session = answer?.ids['session_id'];
  return blocks(
    heading(1, `${modelNames[input.model]}: ${chatTitle(input)}`),
    inline(chatSummary(r)),
    heading(2, 'Answer'),
    paragraphs(answer?.text, '_No answer was streamed._'),
    answer?.finishReason === 'length' && inline('(The answer was cut off at the model’s length limit.)'),
    references.length > 0 && heading(2, 'References'),
    references.length > 0 &&
      table(
        ['#', 'Type', 'Reference', 'Date'],
        references.map((reference, index) => [
          index + 1,
          reference.type,
          webLink(shorten(reference.text, 200), reference.link),
          reference.date,
        ]),
      ),
    heading(2, 'Question'),
    paragraphs(questionOf(input)),
    session && inline(`Session: ${session} (give it as sessionId to continue this conversation with ai20).`),
  );
}

/** "ai50: answer of 1,234 characters, 812 tokens". */
export function chatSummary({ input, outputs }: ReportInput<LlmChatInput>): string {
  const answer = streamOutputOf(outputs, answerStep(input.model));
  const tokens = answer?.tokens?.total;
  return `${input.model}: answer of ${count(answer?.text.length ?? 0)} characters${tokens ? `, ${count(tokens)} tokens` : ''}`;
}
