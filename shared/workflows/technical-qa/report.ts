/**
 * The technical Q&A report, in the order a reader wants it: the answer, the sources it cites (by
 * the numbers the answer uses), related questions and where the technique applies, then how the
 * platform read the question, and the question in full.
 */
import type { ReportInput } from '../../engine/workflow';
import type { DataOf } from '../../openplatform/schemas/responses';
import {
  blocks,
  bullets,
  count,
  field,
  heading,
  inline,
  paragraphs,
  shorten,
  table,
  webLink,
} from '../../reports/markdown';
import { outputOf } from '../common/step-data';
import type { TechnicalQaInput } from './workflow';

type Answer = DataOf<'ai36-2TechnicalQaReport'>;

export interface QaSource {
  type: string;
  title: string;
  link: string;
  published: string;
  excerpt: string;
}

/** The finished answer, as ai36-2 gave it. */
export const qaAnswerOf = (outputs: Record<string, unknown>): Answer | undefined =>
  outputOf(outputs, 'answer', 'ai36-2TechnicalQaReport');

/** The answer's sources, whichever case the platform wrote their field names in (`TITLE`, `title`). */
export function qaSources(answer: Answer | undefined): QaSource[] {
  const text = (record: unknown, key: string) => {
    const value = field(record, key);
    return typeof value === 'string' || typeof value === 'number' ? String(value) : '';
  };
  return (answer?.message_response?.references ?? []).map((reference) => ({
    type: text(reference, 'solution_type').toLowerCase(),
    title: text(reference, 'title'),
    link: text(reference, 'link'),
    published: text(reference, 'pbd'),
    excerpt: text(reference, 'content'),
  }));
}

/** The answer's text: the platform's Markdown headings become plain lines (the report has its own). */
export const qaAnswerText = (answer: Answer | undefined) =>
  (answer?.message_response?.summary ?? '').replace(/^[ \t]*#{1,6}[ \t]+/gm, '');

export const qaTitle = (input: TechnicalQaInput) => input.title ?? shorten(input.question, 100);

export function qaMarkdown(r: ReportInput<TechnicalQaInput>): string {
  const { input, outputs } = r;
  const answer = qaAnswerOf(outputs);
  const response = answer?.message_response;
  const [header, ...applications] = response?.application ?? [];
  return blocks(
    heading(1, `Technical Q&A: ${qaTitle(input)}`),
    inline(qaSummary(r)),
    heading(2, 'Answer'),
    paragraphs(qaAnswerText(answer), '_No answer was given._'),
    heading(2, 'Sources'),
    table(
      ['#', 'Type', 'Source', 'Published', 'Excerpt'],
      qaSources(answer).map((source, index) => [
        index + 1,
        source.type,
        webLink(shorten(source.title, 200), source.link),
        source.published,
        shorten(source.excerpt, 240),
      ]),
      '_No sources._',
    ),
    (response?.recommend?.length ?? 0) > 0 && heading(2, 'Related questions'),
    (response?.recommend?.length ?? 0) > 0 && bullets(response?.recommend ?? []),
    header && applications.length > 0 && heading(2, 'Applications'),
    header && applications.length > 0 && table(header, applications),
    heading(2, 'How the question was read'),
    table(
      ['Queries', 'Concepts'],
      [[(answer?.split_query?.query ?? []).join('; '), (answer?.split_query?.concept ?? []).join(', ')]],
    ),
    heading(2, 'Question'),
    paragraphs(input.question),
  );
}

/** "Answer of 1,234 characters citing 4 sources (2 patents, 1 paper, 1 web page)". */
export function qaSummary({ outputs }: ReportInput<TechnicalQaInput>): string {
  const answer = qaAnswerOf(outputs);
  const sources = qaSources(answer);
  const byType = new Map<string, number>();
  for (const source of sources) byType.set(source.type, (byType.get(source.type) ?? 0) + 1);
  const names: Record<string, [string, string]> = {
    patent: ['patent', 'patents'],
    paper: ['paper', 'papers'],
    website: ['web page', 'web pages'],
  };
  const parts = [...byType].map(([type, n]) => {
    const [one, many] = names[type] ?? [type || 'other', type || 'other'];
    return `${n} ${n === 1 ? one : many}`;
  });
  return `Answer of ${count(qaAnswerText(answer).length)} characters citing ${sources.length} ${
    sources.length === 1 ? 'source' : 'sources'
  }${parts.length > 0 ? ` (${parts.join(', ')})` : ''}`;
}
