/** The encyclopedia Q&A report: the answer, the documents it draws on, then the question in full. */
import type { ReportInput } from '../../engine/workflow';
import { blocks, count, heading, inline, paragraphs, shorten, table, webLink } from '../../reports/markdown';
import { answerReferences } from '../common/answer-references';
import { outputOf, streamOutputOf } from '../common/step-data';
import type { EncyclopediaQaInput } from './workflow';

export const qaTitle = (input: EncyclopediaQaInput) => input.title ?? shorten(input.question, 100);

export function encyclopediaMarkdown(r: ReportInput<EncyclopediaQaInput>): string {
  const { input, outputs } = r;
  const answer = streamOutputOf(outputs, 'answer');
  const chat = outputOf(outputs, 'create-chat', 'ai68-1ChatAiLsChat');
  const references = answerReferences(chat?.ref_doc ?? [], answer?.references ?? []);
  return blocks(
    heading(1, `Encyclopedia Q&A: ${qaTitle(input)}`),
    inline(encyclopediaSummary(r)),
    heading(2, 'Answer'),
    paragraphs(answer?.text, '_No answer was streamed._'),
    answer?.finishReason === 'length' && inline('(The answer was cut off at the model’s length limit.)'),
    heading(2, 'References'),
    table(
      ['#', 'Type', 'Reference', 'Date'],
      references.map((reference, index) => [
        index + 1,
        reference.type,
        webLink(shorten(reference.text, 200), reference.link),
        reference.date,
      ]),
      '_No references._',
    ),
    heading(2, 'Question'),
    paragraphs(input.question),
  );
}

/** "Answer of 1,234 characters with 3 references". */
export function encyclopediaSummary({ outputs }: ReportInput<EncyclopediaQaInput>): string {
  const answer = streamOutputOf(outputs, 'answer');
  const chat = outputOf(outputs, 'create-chat', 'ai68-1ChatAiLsChat');
  const references = answerReferences(chat?.ref_doc ?? [], answer?.references ?? []).length;
  return `Answer of ${count(answer?.text.length ?? 0)} characters with ${references} ${references === 1 ? 'reference' : 'references'}`;
}
