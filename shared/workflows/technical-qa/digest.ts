/** What a scheduled technical question is compared by with its previous run: its answer and its sources. */
import type { ReportInput, WorkflowDigest } from '../../engine/workflow';
import { shorten } from '../../reports/markdown';
import { digestHash, uniqueEntries } from '../common/digest';
import { qaAnswerOf, qaAnswerText, qaSources } from './report';

export function qaDigest(r: ReportInput): WorkflowDigest {
  const answer = qaAnswerOf(r.outputs);
  const text = qaAnswerText(answer);
  if (text === '') return {};
  return {
    answer: {
      hash: digestHash(text.replace(/\s+/g, ' ').trim()),
      length: text.length,
      excerpt: shorten(text, 200),
    },
    lists: [
      {
        kind: 'sources',
        entries: uniqueEntries(
          qaSources(answer).map((source) => ({
            id: source.link || source.title,
            text: [source.type, shorten(source.title, 150)].filter(Boolean).join(' · '),
          })),
        ),
      },
    ],
  };
}
