import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { patentCountFor } from '../../../shared/sandbox';
import { callSequence, lastSeq, startWorld, type World } from './world';

const QUERY = 'TTL:(lithium AND battery) AND PBD:[2015 TO 2024]';

describe('patent-count against the sandbox', () => {
  let world: World;
  beforeAll(async () => {
    world = await startWorld();
  });
  afterAll(() => world.close());

  it('counts the patents of a query, collapsed as asked, and reports the count with the query', async () => {
    const before = lastSeq(world);
    const job = await world.run('patent-count', { query: QUERY, collapseType: 'DOCDB' });
    expect(callSequence(world, before)).toEqual(['p001']);
    expect(job.status).toBe('SUCCEEDED');
    const expected = patentCountFor(QUERY, 'DOCDB');
    const { markdown, html, result } = await world.report(job.id);
    expect(markdown).toContain(`**${expected.toLocaleString('en-US')}** patents match the query.`);
    expect(markdown).toContain('| TTL:(lithium AND battery) AND PBD:\\[2015 TO 2024\\] | DOCDB | — | — |');
    expect(html).toContain('<table>');
    expect(result.steps.count).toEqual({ total_search_result_count: expected });
    expect(result.usage.calls).toBe(1);
  });
});
