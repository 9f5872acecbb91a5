import { describe, expect, it } from 'vitest';
import { formatIssues } from '../../../../shared/errors/zod-issues';
import { operationIds, requestSchemas } from '../../../../shared/openplatform';

const problemsOf = (op: keyof typeof requestSchemas, body: unknown): string => {
  const result = requestSchemas[op].safeParse(body);
  return result.success ? '' : formatIssues(result.error);
};

describe('request schemas', () => {
  it('has one schema per catalogue operation', () => {
    expect(Object.keys(requestSchemas).sort()).toEqual([...operationIds].sort());
  });

  it('accepts a valid body', () => {
    expect(problemsOf('ai35-1NoveltySearchSubmit', { input: 'a solution', lang: 'en' })).toBe('');
    expect(
      problemsOf('p001PatentQuerySearchCount', { query_text: 'TTL:(car)', collapse_type: 'DOCDB' }),
    ).toBe('');
  });

  it.each([
    ['ai33-1Step1V3', { lang: 'de', solution_issues: 'x' }, 'lang'],
    ['ai33-1Step1V3', { lang: 'en' }, 'solution_issues'],
    ['ai33-1Step1V3', { lang: 'en', solution_issues: 'x'.repeat(501) }, 'solution_issues'],
    ['ai07ChatCcGptStream', { prompt: 'x'.repeat(501) }, 'prompt'],
    ['p001PatentQuerySearchCount', { query_text: 'x'.repeat(1501) }, 'query_text'],
    ['p001PatentQuerySearchCount', { query_text: 'a', collapse_by: 'DATE' }, 'collapse_by'],
    [
      'ai68-1ChatAiLsChat',
      { query: 'q', deep_search: 'yes', long_think: false, search_website: false },
      'deep_search',
    ],
    [
      'ai34-2CreationCustomDir',
      { report_id: 'r', technical_issues: 't', analysis_directory: [{ key: 'k' }] },
      'analysis_directory[0].name',
    ],
    [
      'ai35-5FeatureConfirm',
      { task_id: 't', tech_features: [{ selected: 'yes' }] },
      'tech_features[0].selected',
    ],
    ['ai35-3TechSolutionUpdate', { task_id: 't', tech_solutoin: 'typo' }, 'tech_solutoin'],
  ] as const)('%s refuses %j naming %s', (op, body, field) => {
    expect(problemsOf(op, body)).toContain(field);
  });

  it('refuses more than five selected comparison documents (ai35-9)', () => {
    const doc = (selected: boolean) => ({ patent_id: 'p', selected });
    expect(
      problemsOf('ai35-9ComparisonConfirm', { task_id: 't', final_result: Array(5).fill(doc(true)) }),
    ).toBe('');
    expect(
      problemsOf('ai35-9ComparisonConfirm', {
        task_id: 't',
        final_result: [...Array(6).fill(doc(true)), doc(false)],
      }),
    ).toContain('final_result: at most 5 documents may be selected');
  });

  it('refuses a disclosure idea of more than 5000 words (ai32-1)', () => {
    expect(problemsOf('ai32-1PatentDisclosureTechMeans', { tech_solution: 'word '.repeat(5001) })).toContain(
      'tech_solution',
    );
  });
});
