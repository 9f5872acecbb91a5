/**
 * Patent count (p001) against the sandbox: deterministic counts, smaller when collapsed.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { patentCountFor } from '../../../../shared/sandbox';
import { startTestSandbox, type TestSandbox } from '../sandbox-harness';

let harness: TestSandbox;
beforeEach(async () => {
  harness = await startTestSandbox();
});
afterEach(() => harness.close());

describe('patent count', () => {
  it('answers the same count for the same query, a smaller one when collapsed by family', async () => {
    const query_text = 'TACD:(solid state electrolyte) AND PBD:[2015 TO 2024]';
    const all = (await harness.ok('p001', { query_text })).total_search_result_count;
    expect(all).toBe(patentCountFor(query_text));
    expect((await harness.ok('p001', { query_text })).total_search_result_count).toBe(all);
    const families = (await harness.ok('p001', { query_text, collapse_type: 'DOCDB', collapse_by: 'PBD' }))
      .total_search_result_count;
    expect(families).toBe(patentCountFor(query_text, 'DOCDB'));
    expect(families).toBeLessThan(all);
    expect((await harness.ok('p001', { query_text: 'TACD:(bicycle)' })).total_search_result_count).not.toBe(
      all,
    );
  });

  it('refuses a query over 1,500 characters and an unknown collapse type', async () => {
    expect((await harness.call('p001', { query_text: 'x'.repeat(1501) })).json.error_msg).toContain(
      'query_text',
    );
    expect(
      (await harness.call('p001', { query_text: 'a', collapse_type: 'FAMILY' })).json.error_msg,
    ).toContain('collapse_type');
  });
});
