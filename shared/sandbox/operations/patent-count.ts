/**
 * Patent count, p001: a deterministic count from the query text, smaller when results are
 * collapsed by family or application number, as the real counts are.
 */
import { hash32 } from '../seeded';
import { withoutMarkers } from '../triggers';
import { json, type OperationHandlers } from './contract';

const COLLAPSE_SHARE: Record<string, number> = { ALL: 1, APNO: 0.8, DOCDB: 0.6, INPADOC: 0.5, EXTEND: 0.45 };

/** The count the sandbox answers for a query, exported so tests and benchmarks can predict it. */
export function patentCountFor(queryText: string, collapseType = 'ALL'): number {
  const base = 100 + (hash32('p001', withoutMarkers(queryText).trim().toLowerCase()) % 500_000);
  return Math.floor(base * (COLLAPSE_SHARE[collapseType] ?? 1));
}

export function createPatentCountOperations(): Pick<OperationHandlers, 'p001PatentQuerySearchCount'> {
  return {
    p001PatentQuerySearchCount: (body) =>
      json({ total_search_result_count: patentCountFor(body.query_text, body.collapse_type) }),
  };
}
