/** A finished technical question's key finding in a batch's summary.csv: how many sources its answer cites. */
import type { BatchFindings, FindingsSource } from '../../engine/workflow';
import { qaAnswerOf, qaSources } from './report';

export function qaFindings({ steps }: FindingsSource): BatchFindings {
  const answer = qaAnswerOf(steps);
  return answer ? { references: String(qaSources(answer).length) } : {};
}
