/**
 * What a scheduled patent count is compared by with its previous runs: the count, under a series
 * name (a schedule of counts charts the series over its runs).
 */
import type { ReportInput, WorkflowDigest } from '../../engine/workflow';
import { outputOf } from '../common/step-data';

/** The query's total as a named count. */
export function countDigest(r: ReportInput): WorkflowDigest {
  const total = outputOf(r.outputs, 'count', 'p001PatentQuerySearchCount')?.total_search_result_count;
  return typeof total === 'number' ? { counts: [{ name: seriesName(r.input), value: total }] } : {};
}

/** A patent count's series name: its title, else its query (and its collapse, which changes counts). */
function seriesName(input: unknown): string {
  const record = (input ?? {}) as Record<string, unknown>;
  const base = typeof record['title'] === 'string' ? record['title'] : String(record['query'] ?? '');
  const collapse = record['collapseType'];
  return typeof collapse === 'string' && collapse !== 'ALL'
    ? `${base} (collapse ${[collapse, record['collapseBy'], record['collapseOrder']].filter(Boolean).join(' ')})`
    : base;
}
