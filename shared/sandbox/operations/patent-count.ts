/**
 * Patent count, p001: a deterministic count from the query text, smaller when results are
 * collapsed by family or application number, as the real counts are.
 */
import { type DriftRun, driftedGrowth } from '../drift';
import { hash32 } from '../seeded';
import { withoutMarkers } from '../triggers';
import { json, type OperationHandlers } from './contract';

const COLLAPSE_SHARE: Record<string, number> = { ALL: 1, APNO: 0.8, DOCDB: 0.6, INPADOC: 0.5, EXTEND: 0.45 };

const subjectOf = (queryText: string) => withoutMarkers(queryText).trim().toLowerCase();

/**
 * The count the sandbox answers for a query, exported so tests and benchmarks can predict it. With
 * drift, run N of the query answers its count grown by 1 to 5 per run (before collapsing).
 */
export function patentCountFor(queryText: string, collapseType = 'ALL', drift?: DriftRun): number {
  const subject = subjectOf(queryText);
  const base = 100 + (hash32('p001', subject) % 500_000) + driftedGrowth(drift, `p001\u0000${subject}`);
  return Math.floor(base * (COLLAPSE_SHARE[collapseType] ?? 1));
}

export function createPatentCountOperations(): Pick<OperationHandlers, 'p001PatentQuerySearchCount'> {
  return {
    p001PatentQuerySearchCount: (body, context) => {
      const drift = context.drift(
        `p001\u0000${body.collapse_type ?? 'ALL'}\u0000${subjectOf(body.query_text)}`,
      );
      return json({ total_search_result_count: patentCountFor(body.query_text, body.collapse_type, drift) });
    },
  };
}
