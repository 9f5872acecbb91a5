/**
 * Find-solution (ai33-1..6) against the sandbox: the sequence, selections checked against what was
 * offered, out-of-order steps, unknown ids and the failure trigger.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PlatformCode } from '../../../../shared/sandbox';
import { startTestSandbox, type TestSandbox } from '../sandbox-harness';

const ISSUE = 'Increase the energy density of lithium battery cells without raising production cost.';
const STEP_MS = 30_000;

let harness: TestSandbox;
beforeEach(async () => {
  harness = await startTestSandbox({ defaultTaskDuration: { meanMs: STEP_MS, spreadMs: 0 } });
});
afterEach(() => harness.close());

describe('find-solution', () => {
  it('runs ai33-1 → ai33-6 with chosen recommendations and ticked directions', async () => {
    const { task_id } = await harness.ok('ai33-1', { lang: 'en', solution_issues: ISSUE });
    expect(await harness.ok('ai33-2', { task_id })).toEqual({ status: 'RUNNING', recommend: [] });
    const early = await harness.call('ai33-3', { task_id, lang: 'en', recommend: [] });
    expect(early.json.error_code).toBe(PlatformCode.invalidParameter);
    expect(early.json.error_msg).toMatch(/out of order: ai33-3 called before .*ai33-2 finished/);

    harness.advance(STEP_MS);
    const { status, recommend } = await harness.ok('ai33-2', { task_id });
    expect(status).toBe('SUCCEED');
    expect(recommend.length).toBeGreaterThanOrEqual(3);
    expect(recommend.every((item: unknown) => typeof item === 'string')).toBe(true);

    const invented = await harness.call('ai33-3', { task_id, lang: 'en', recommend: ['Make it free'] });
    expect(invented.json.error_msg).toContain('recommend[0]: "Make it free" was not offered');
    await expect(harness.ok('ai33-4', { task_id })).rejects.toThrow(/ai33-3/);
    await harness.ok('ai33-3', { task_id, lang: 'en', recommend: recommend.slice(0, 2) });

    expect((await harness.ok('ai33-4', { task_id })).status).toBe('RUNNING');
    harness.advance(STEP_MS);
    const { directions } = await harness.ok('ai33-4', { task_id });
    expect(directions.length).toBeGreaterThanOrEqual(3);
    expect(directions[0]).toMatchObject({ ticked: true, source_type: 'model' });
    expect(directions[0].verification).toContain(recommend[0]);

    const noneTicked = directions.map((d: object) => ({ ...d, ticked: false }));
    expect(
      (await harness.call('ai33-5', { task_id, lang: 'en', directions: noneTicked })).json.error_msg,
    ).toContain('tick at least one');
    const made = [{ reason: 'Invented direction', ticked: true }];
    expect(
      (await harness.call('ai33-5', { task_id, lang: 'en', directions: made })).json.error_msg,
    ).toContain('directions[0].reason');
    const chosen = directions.map((d: object, i: number) => ({ ...d, ticked: i === 2 }));
    chosen.push({
      reason: 'Use a solid-state electrolyte',
      ticked: true,
      source_type: 'customize',
      approaches: ['Sulfide electrolyte'],
    });
    await harness.ok('ai33-5', { task_id, lang: 'en', directions: chosen });

    expect(await harness.ok('ai33-6', { task_id })).toEqual({ status: 'RUNNING' });
    harness.advance(STEP_MS);
    const { solution } = await harness.ok('ai33-6', { task_id });
    expect(solution.title).toBe(ISSUE.replace(/\.$/, ''));
    const routes = solution.cells.filter((cell: { shape: string }) => cell.shape === 'route-node');
    expect(routes.map((cell: { data: { sys_title: string } }) => cell.data.sys_title)).toEqual([
      directions[2].reason,
      'Use a solid-state electrolyte',
    ]);
    const edges = solution.cells.filter((cell: { shape: string }) => cell.shape === 'default-edge');
    const nodeIds = new Set(solution.cells.map((cell: { data?: { node_id: string } }) => cell.data?.node_id));
    for (const edge of edges) {
      expect(nodeIds.has(edge.source.cell)).toBe(true);
      expect(nodeIds.has(edge.target.cell)).toBe(true);
    }
  });

  it('answers ai33-5 and ai33-6 out of order before their predecessors', async () => {
    const { task_id } = await harness.ok('ai33-1', { lang: 'en', solution_issues: ISSUE });
    harness.advance(STEP_MS);
    await harness.ok('ai33-3', { task_id, lang: 'en' });
    const early = await harness.call('ai33-5', { task_id, lang: 'en' });
    expect(early.json.error_msg).toContain('out of order: ai33-5');
    const sixth = await harness.call('ai33-6', { task_id });
    expect(sixth.json.error_msg).toContain('ai33-5');
  });

  it('answers 404 for an unknown task id, and FAILED on [sandbox:fail:ai33-4]', async () => {
    const unknown = await harness.call('ai33-2', { task_id: 'nope' });
    expect(unknown.status).toBe(404);
    expect(unknown.json.error_code).toBe(PlatformCode.notFound);

    const { task_id } = await harness.ok('ai33-1', {
      lang: 'en',
      solution_issues: `${ISSUE} [sandbox:fail:ai33-4]`,
    });
    harness.advance(STEP_MS);
    expect((await harness.ok('ai33-2', { task_id })).status).toBe('SUCCEED');
    await harness.ok('ai33-3', { task_id, lang: 'en' });
    harness.advance(STEP_MS);
    expect(await harness.ok('ai33-4', { task_id })).toEqual({ status: 'FAILED', directions: [] });
  });
});
