/**
 * The call workflow against the sandbox: one operation per job, pages followed to a limit or to
 * the end, result.json's answer joining the pages, and a report with the list as a table.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lookupOperation } from '../../../shared/openplatform';
import { pagedTotal } from '../../../shared/sandbox/operations/generic';
import { lastSeq, startWorld, type World } from './world';

const okCalls = (world: World, after: number) =>
  world.sandbox.ledger.entries({ outcome: 'ok' }).filter((entry) => entry.seq > after);

describe('call against the sandbox', () => {
  let world: World;
  beforeAll(async () => {
    world = await startWorld();
  });
  afterAll(() => world.close());

  it('follows a paginated operation up to maxPages and joins the pages', async () => {
    const before = lastSeq(world);
    const job = await world.run('call', {
      operation: 'p002',
      body: { query_text: 'TACD:(heat pump)', limit: 2 },
      maxPages: 3,
    });
    expect(job.status).toBe('SUCCEEDED');
    const calls = okCalls(world, before);
    expect(calls.map((entry) => entry.operationId)).toEqual(Array(3).fill('p002PatentQuerySearch'));
    const { result, markdown, html } = await world.report(job.id);
    const answer = (result as unknown as { answer: { results: { pn: string }[] } }).answer;
    expect(answer.results).toHaveLength(6);
    expect(new Set(answer.results.map((item) => item.pn)).size).toBe(6);
    expect(Object.keys(result.steps).sort()).toEqual(['page-1', 'page-2', 'page-3']);
    expect(markdown).toMatch(/6 items in 3 pages of \d+ \(stopped at the limit of 3 pages/);
    expect(markdown).toContain('| pn | patent_id |');
    expect(html).toContain('<table>');
    expect(result.summary).toBe('p002: 6 results in 3 pages');
  });

  it('stops at the last page when the total is reached', async () => {
    const request = { query_text: 'TACD:(drone battery)', limit: 5 };
    const found = lookupOperation('p002');
    if (!found.ok) throw new Error(found.message);
    const total = pagedTotal(1, found.operation, { parameters: {}, body: request });
    const before = lastSeq(world);
    const job = await world.run('call', { operation: 'p002PatentQuerySearch', body: request, maxPages: 50 });
    expect(job.status).toBe('SUCCEEDED');
    const { result } = await world.report(job.id);
    const answer = (result as unknown as { answer: { results: unknown[] } }).answer;
    expect(answer.results).toHaveLength(total);
    // Full pages until the total, and one more call only when the last page was exactly full.
    expect(okCalls(world, before).length).toBeLessThanOrEqual(Math.floor(total / 5) + 1);
  });

  it('calls a GET operation with path parameters once and reports its fields', async () => {
    const job = await world.run('call', { operation: 'jobIdStatus', parameters: { job_id: 'J-42' } });
    expect(job.status).toBe('SUCCEEDED');
    const calls = world.sandbox.ledger.entries().filter((entry) => entry.operationId === 'jobIdStatus');
    expect(calls.at(-1)?.path).toBe('/landscape-api/jobs/J-42/status');
    const { result, markdown } = await world.report(job.id);
    expect(Object.keys(result.steps)).toEqual(['answer']);
    expect(markdown).toContain('| job_status |');
    expect(result.usage.calls).toBe(1);
  });

  it('refuses a request that does not fit the operation before any call', async () => {
    const before = lastSeq(world);
    await expect(world.run('call', { operation: 'p002', body: { query_txt: 'x' } })).rejects.toThrow(
      /query_txt|query_text/,
    );
    await expect(world.run('call', { operation: 'p0022' })).rejects.toThrow(/did you mean/);
    await expect(world.run('call', { operation: 'p010ImageSearchImageUpload' })).rejects.toThrow(/multipart/);
    expect(okCalls(world, before)).toHaveLength(0);
  });

  it('fails the job with the upstream error when the key may not call the group', async () => {
    const other = await startWorld({
      keys: [{ key: 'sk-opflow-sandbox-0000000000000000', groups: ['Patent Legal Data'] }],
    });
    try {
      const job = await other.run('call', { operation: 'p002', body: { query_text: 'x' } });
      expect(job.status).toBe('FAILED');
      expect(job.lastError).toMatchObject({ kind: 'forbidden', operationId: 'p002PatentQuerySearch' });
      expect(job.lastError?.correlationId).toBeTruthy();
    } finally {
      await other.close();
    }
  });
});
