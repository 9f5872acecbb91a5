/** What a scheduled novelty check is compared by with its previous run: the references found. */
import type { ReportInput, WorkflowDigest } from '../../engine/workflow';
import { shorten } from '../../reports/markdown';
import { uniqueEntries } from '../common/digest';
import { outputOf } from '../common/step-data';

/** The agent's references, by publication number, with their score, category and document. */
export function noveltyDigest(r: ReportInput): WorkflowDigest {
  const references = outputOf(r.outputs, 'agent-result', 'ai35-8NoveltySearchAgentResult')?.final_result;
  if (!references) return {};
  return {
    lists: [
      {
        kind: 'references',
        entries: uniqueEntries(
          references.map((reference) => ({
            id: reference.patent_id ?? '',
            text: [
              reference.patent_id,
              typeof reference.public_score === 'number' ? `score ${reference.public_score}` : undefined,
              reference.comparative_literature_category
                ? `category ${reference.comparative_literature_category}`
                : undefined,
              shorten(reference.document, 120) || undefined,
            ]
              .filter(Boolean)
              .join(' · '),
          })),
        ),
      },
    ],
  };
}
