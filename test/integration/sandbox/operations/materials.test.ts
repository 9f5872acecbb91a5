/**
 * Materials find-solution (ai73-1..9) against the sandbox: recommendations, the mind map and its
 * nodes, paginated citations, node references, implementations, and the out-of-order answers.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PlatformCode } from '../../../../shared/sandbox';
import { startTestSandbox, type TestSandbox } from '../sandbox-harness';

const PROBLEM =
  'Improve the UVA protection of zinc oxide sunscreen while keeping the formulation transparent.';
const STEP_MS = 20_000;

let harness: TestSandbox;
beforeEach(async () => {
  harness = await startTestSandbox({ defaultTaskDuration: { meanMs: STEP_MS, spreadMs: 0 } });
});
afterEach(() => harness.close());

/** ai73-1 → ai73-3 done, the mind map finished; returns what later calls need. */
async function finishedMindMap(input = PROBLEM) {
  const { task_id } = await harness.ok('ai73-1', { input, lang: 'en' });
  harness.advance(STEP_MS);
  const { recommend } = await harness.ok('ai73-2', { task_id });
  await harness.ok('ai73-3', { task_id, recommend: recommend.slice(0, 2) });
  harness.advance(STEP_MS);
  const { board_id } = await harness.ok('ai73-4', { task_id });
  const { solution } = await harness.ok('ai73-5', { task_id });
  const nodes = solution.cells.filter((cell: { data?: { node_id?: string } }) => cell.data?.node_id);
  return {
    task_id,
    board_id,
    recommend,
    solution,
    nodeIds: nodes.map((c: { data: { node_id: string } }) => c.data.node_id),
  };
}

describe('materials find-solution', () => {
  it('runs submit → recommend → confirm → thinking and mind map', async () => {
    const { task_id } = await harness.ok('ai73-1', { input: PROBLEM, lang: 'en' });
    expect(await harness.ok('ai73-2', { task_id })).toEqual({
      status: 'RUNNING',
      recommend: [],
      has_recommend: false,
    });
    const early = await harness.call('ai73-3', { task_id });
    expect(early.json.error_msg).toContain('out of order: ai73-3');
    expect((await harness.call('ai73-5', { task_id })).json.error_msg).toContain('ai73-3');

    harness.advance(STEP_MS);
    const { recommend, has_recommend } = await harness.ok('ai73-2', { task_id });
    expect(has_recommend).toBe(true);
    expect((await harness.call('ai73-3', { task_id, recommend: ['Not offered'] })).json.error_msg).toContain(
      'recommend[0]: "Not offered" was not offered by ai73-2',
    );
    await harness.ok('ai73-3', { task_id, recommend: [recommend[0]] });

    const thinking = await harness.ok('ai73-4', { task_id });
    expect(thinking.status).toBe('RUNNING');
    expect(thinking.board_id).toMatch(/^[0-9a-f]{32}$/);
    expect(thinking.problem_statement.problem_title).toContain('zinc oxide sunscreen');
    expect(await harness.ok('ai73-5', { task_id })).toEqual({ status: 'RUNNING' });

    harness.advance(STEP_MS);
    expect((await harness.ok('ai73-4', { task_id })).references.references).toHaveLength(3);
    const mind = await harness.ok('ai73-5', { task_id });
    expect(mind.status).toBe('SUCCEED');
    const route = mind.solution.cells.find((cell: { shape: string }) => cell.shape === 'route-node');
    expect(route.data.sys_title).toBe(recommend[0]);
  });

  it('pages the citations of a node', async () => {
    const { task_id, board_id, nodeIds } = await finishedMindMap();
    const node_id = nodeIds[2];
    const first = await harness.ok('ai73-6', { task_id, board_id, node_id, page: 1, limit: 5 });
    expect(first).toMatchObject({ page: 1, limit: 5, has_previous: false, has_next: true });
    expect(first.total).toBeGreaterThanOrEqual(8);
    expect(first.records).toHaveLength(5);
    expect(Object.keys(first.records[0])).toEqual(
      expect.arrayContaining(['PN', 'TITLE', 'CONTENT', 'SOLUTION_ID', 'SOLUTION_TYPE', 'ORG_INFO']),
    );
    const lastPage = Math.ceil(first.total / 5);
    const last = await harness.ok('ai73-6', { task_id, board_id, node_id, page: lastPage, limit: 5 });
    expect(last).toMatchObject({ has_next: false, has_previous: true });
    expect(last.records.length).toBe(first.total - (lastPage - 1) * 5);
    const all = await harness.ok('ai73-6', { task_id, board_id, node_id, page: 1, limit: 100 });
    expect(all.records.slice(0, 5)).toEqual(first.records);
  });

  it('answers node references and implementations only for nodes of the mind map', async () => {
    const { task_id, board_id, nodeIds } = await finishedMindMap();
    const node_id = nodeIds[3];
    const reference = await harness.ok('ai73-7', { task_id, board_id, node_id });
    expect(reference.technical_principle[0]).toContain('<cite');
    expect(reference.expected_challenge).toHaveLength(1);

    const stranger = await harness.call('ai73-8', { task_id, board_id, node_id: 'not-a-node' });
    expect(stranger.json.error_code).toBe(PlatformCode.invalidParameter);
    expect(stranger.json.error_msg).toContain("node_id 'not-a-node' is not a node of the mind map");
    const wrongBoard = await harness.call('ai73-7', { task_id, board_id: 'other', node_id });
    expect(wrongBoard.json.error_msg).toContain('board_id');

    const before = await harness.call('ai73-9', { task_id, board_id, node_id });
    expect(before.json.error_msg).toContain('out of order: ai73-9 called before ai73-8');
    await harness.ok('ai73-8', { task_id, board_id, node_id });
    expect(await harness.ok('ai73-9', { task_id, board_id, node_id })).toEqual({ status: 'RUNNING' });
    harness.advance(STEP_MS);
    const plan = await harness.ok('ai73-9', { task_id, board_id, node_id });
    expect(plan.status).toBe('SUCCEED');
    expect(plan.markdown_message).toMatch(/^# Implementation plan: /);
  });

  it('refuses node calls before the mind map is finished', async () => {
    const { task_id } = await harness.ok('ai73-1', { input: PROBLEM, lang: 'en' });
    harness.advance(STEP_MS);
    await harness.ok('ai73-3', { task_id });
    const { board_id } = await harness.ok('ai73-4', { task_id });
    const answer = await harness.call('ai73-8', { task_id, board_id, node_id: 'n' });
    expect(answer.json.error_msg).toContain(
      'out of order: ai73-8 called before the mind map of ai73-5 finished',
    );
  });

  it('offers no recommendation on [sandbox:no-recommend], fails on [sandbox:fail], 404 on unknown ids', async () => {
    const none = (await harness.ok('ai73-1', { input: `${PROBLEM} [sandbox:no-recommend]`, lang: 'en' }))
      .task_id;
    harness.advance(STEP_MS);
    expect(await harness.ok('ai73-2', { task_id: none })).toEqual({
      status: 'SUCCEED',
      recommend: [],
      has_recommend: false,
    });
    await harness.ok('ai73-3', { task_id: none, recommend: [] });

    const failing = (await harness.ok('ai73-1', { input: `${PROBLEM} [sandbox:fail]`, lang: 'en' })).task_id;
    harness.advance(STEP_MS);
    expect((await harness.ok('ai73-2', { task_id: failing })).status).toBe('FAILED');

    const unknown = await harness.call('ai73-5', { task_id: 'nope' });
    expect(unknown.status).toBe(404);
    expect(unknown.json.error_code).toBe(PlatformCode.notFound);
  });
});
