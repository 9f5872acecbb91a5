/** A finished patent count's key finding in a batch's summary.csv: the count, in the references column. */
import type { BatchFindings, FindingsSource } from '../../engine/workflow';

export function countFindings({ steps }: FindingsSource): BatchFindings {
  const total = (steps['count'] as { total_search_result_count?: number } | undefined)
    ?.total_search_result_count;
  return total === undefined ? {} : { references: String(total) };
}
