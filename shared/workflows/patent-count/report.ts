/** The patent-count report: the count, the query and its collapse. */
import type { ReportInput } from '../../engine/workflow';
import { blocks, count, heading, inline, shorten, table } from '../../reports/markdown';
import { outputOf } from '../common/step-data';
import type { PatentCountInput } from './workflow';

export const countTitle = (input: PatentCountInput) => input.title ?? shorten(input.query, 100);

const collapseDescription = (input: PatentCountInput) =>
  !input.collapseType || input.collapseType === 'ALL'
    ? 'none'
    : [input.collapseType, input.collapseBy && `by ${input.collapseBy}`, input.collapseOrder?.toLowerCase()]
        .filter(Boolean)
        .join(' ');

export function countMarkdown(r: ReportInput<PatentCountInput>): string {
  const total = outputOf(r.outputs, 'count', 'p001PatentQuerySearchCount')?.total_search_result_count;
  return blocks(
    heading(1, `Patent count: ${countTitle(r.input)}`),
    `**${count(total)}** ${total === 1 ? 'patent matches' : 'patents match'} the query.`,
    heading(2, 'Query'),
    table(
      ['Query', 'Collapse type', 'Collapse by', 'Collapse order'],
      [
        [
          r.input.query,
          r.input.collapseType ?? 'ALL',
          r.input.collapseBy ?? '—',
          r.input.collapseOrder ?? '—',
        ],
      ],
    ),
    inline(`Collapse: ${collapseDescription(r.input)}.`),
  );
}

/** "12,345 patents for TTL:(battery AND cathode) (collapse APNO by APD oldest)". */
export function countSummary({ input, outputs }: ReportInput<PatentCountInput>): string {
  const total = outputOf(outputs, 'count', 'p001PatentQuerySearchCount')?.total_search_result_count;
  const collapse = collapseDescription(input);
  return `${count(total)} patents for ${shorten(input.query, 80)}${collapse === 'none' ? '' : ` (collapse ${collapse})`}`;
}
