import { describe, expect, it } from 'vitest';
import { patentCount } from '../../../shared/workflows/patent-count/workflow';
import { contextFor, decideOf, inputProblems, kept, reportOf, requestOf } from './fixtures';

const QUERY = 'TTL:(lithium AND battery) AND PBD:[2015 TO 2024]';

describe('patent-count', () => {
  it('takes a query with collapse options (any case) and checks how they combine', () => {
    expect(
      patentCount.input.parse({
        query: QUERY,
        collapseType: 'apno',
        collapseBy: 'apd',
        collapseOrder: 'oldest',
      }),
    ).toEqual({
      query: QUERY,
      collapseType: 'APNO',
      collapseBy: 'APD',
      collapseOrder: 'OLDEST',
    });
    expect(
      inputProblems(patentCount, { query: QUERY, collapseType: 'DOCDB', collapseOrder: 'LATEST' }),
    ).toEqual(['collapseOrder: collapseOrder: only with collapseType APNO and collapseBy APD or PBD']);
    expect(inputProblems(patentCount, { query: QUERY, collapseType: 'FAMILY' })[0]).toMatch(
      /collapseType: one of ALL, APNO, DOCDB, INPADOC, EXTEND/,
    );
    expect(inputProblems(patentCount, { query: 'x'.repeat(1501) })).toEqual([
      'query: query: at most 1,500 characters (the platform refuses longer queries)',
    ]);
  });

  it('reads a query spread over lines as one expression', () => {
    expect(
      patentCount.fromText?.('# Batteries\nTTL:(lithium AND battery)\n  AND PBD:[2015 TO 2024]\n', 'b.txt'),
    ).toEqual({
      query: QUERY,
      title: 'Batteries',
    });
  });

  it('sends only the options given and completes with the count', () => {
    const ctx = contextFor(patentCount, { query: QUERY, collapseType: 'INPADOC' });
    expect(requestOf(patentCount, 'count', ctx)).toEqual({ query_text: QUERY, collapse_type: 'INPADOC' });
    expect(decideOf(patentCount, 'count', { total_search_result_count: '12345' }, ctx)).toEqual({
      type: 'complete',
    });
    expect(decideOf(patentCount, 'count', {}, ctx)).toMatchObject({
      type: 'fail',
      message: /total_search_result_count/,
    });
  });

  it('reports the count with the query and its options', () => {
    const { title, markdown, summary } = reportOf(
      patentCount,
      { query: QUERY, collapseType: 'APNO', collapseBy: 'PBD', collapseOrder: 'LATEST' },
      { outputs: { count: kept('p001PatentQuerySearchCount', { total_search_result_count: 12345 }) } },
    );
    expect(title).toBe(`Patent count: ${QUERY}`);
    expect(markdown).toContain('**12,345** patents match the query.');
    expect(markdown).toContain(
      '| TTL:(lithium AND battery) AND PBD:\\[2015 TO 2024\\] | APNO | PBD | LATEST |',
    );
    expect(summary).toBe(`12,345 patents for ${QUERY} (collapse APNO by PBD latest)`);
  });
});
