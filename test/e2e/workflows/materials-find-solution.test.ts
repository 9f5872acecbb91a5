import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callSequence, lastSeq, offered, startWorld, type World } from './world';

const PROBLEM =
  'Raise the thermal conductivity of epoxy potting compounds for power electronics above 2 W/mK while keeping them electrically insulating.';

interface MindMapStep {
  solution: {
    title: string;
    cells: { id: string; shape?: string; data?: { node_id: string; sys_title: string } }[];
  };
}
interface CitationPage {
  page: number;
  total: number;
  has_next: boolean;
  records: unknown[];
}

const nodesOf = (result: { steps: Record<string, unknown> }) =>
  (result.steps['mind-map'] as MindMapStep).solution.cells.filter((cell) => cell.data?.node_id);

describe('materials-find-solution against the sandbox', () => {
  let world: World;
  beforeAll(async () => {
    world = await startWorld();
  });
  afterAll(() => world.close());

  it('auto with nodes "none": the mind map and the thinking, no node detailed', async () => {
    const before = lastSeq(world);
    const job = await world.run('materials-find-solution', { problem: PROBLEM });
    expect(job.status, JSON.stringify(job.lastError)).toBe('SUCCEEDED');
    expect(callSequence(world, before)).toEqual(['ai73-1', 'ai73-2', 'ai73-3', 'ai73-4', 'ai73-5']);
    const { markdown, result } = await world.report(job.id);
    const nodes = nodesOf(result);
    expect(nodes.length).toBeGreaterThan(3);
    expect(markdown).toContain(`## Mind map: ${(result.steps['mind-map'] as MindMapStep).solution.title}`);
    for (const node of nodes) expect(markdown).toContain(`| ${node.data!.node_id} |`);
    expect(markdown).toContain('No node was detailed');
    expect(markdown).toContain('## Problem statement');
    expect(world.sandbox.ledger.count({ operationId: 'ai73-7' })).toBe(0);
    expect(result.summary).toMatch(new RegExp(`: ${nodes.length} mind-map nodes, 0 detailed$`));
  });

  it('nodes "all": every solution node gets its reference, every page of citations and an implementation plan', async () => {
    const before = lastSeq(world);
    const job = await world.run('materials-find-solution', { problem: PROBLEM, nodes: 'all' });
    expect(job.status, JSON.stringify(job.lastError)).toBe('SUCCEEDED');
    const { markdown, result } = await world.report(job.id);
    const leaves = nodesOf(result).filter((cell) => cell.shape === 'solution-node');
    // per node: reference, every citation page (collapsed), start, implementation (polled)
    expect(callSequence(world, before)).toEqual([
      'ai73-1',
      'ai73-2',
      'ai73-3',
      'ai73-4',
      'ai73-5',
      ...leaves.flatMap(() => ['ai73-7', 'ai73-6', 'ai73-8', 'ai73-9']),
    ]);
    expect(job.context.nodeIds).toEqual(leaves.map((cell) => cell.data!.node_id));
    let pages = 0;
    leaves.forEach((leaf, index) => {
      const round = `node-${index + 1}`;
      expect(result.steps[`${round}-reference`]).toBeDefined();
      const first = result.steps[`${round}-citations-p1`] as CitationPage;
      const expectedPages = Math.ceil(first.total / 20);
      for (let page = 1; page <= expectedPages; page++)
        expect(result.steps[`${round}-citations-p${page}`]).toBeDefined();
      expect(result.steps[`${round}-citations-p${expectedPages + 1}`]).toBeUndefined();
      pages += expectedPages;
      expect(markdown).toContain(`#### Citations (${first.total})`);
      expect(result.steps[`${round}-implementation`]).toMatchObject({ status: 'SUCCEED' });
      expect(markdown).toContain(`\\# Implementation plan: ${leaf.data!.sys_title}`);
    });
    expect(pages).toBeGreaterThan(leaves.length);
    expect(markdown).toContain('**Technical principle**');
    expect(markdown).not.toContain('<cite');
    expect(result.summary).toMatch(new RegExp(`, ${leaves.length} detailed$`));
  });

  it('listed nodes: details just those, and refuses a node id the mind map does not have', async () => {
    const first = await world.run('materials-find-solution', { problem: PROBLEM });
    const nodes = nodesOf(await world.report(first.id).then((report) => report.result));
    // the same problem and choice give the same mind map, so its node ids can be named
    const chosenNode = nodes[2]!.data!.node_id;
    const job = await world.run('materials-find-solution', { problem: PROBLEM, nodes: [chosenNode] });
    expect(job.status, JSON.stringify(job.lastError)).toBe('SUCCEEDED');
    const { markdown } = await world.report(job.id);
    expect(markdown).toContain(`Node id: ${chosenNode}`);
    expect(markdown.match(/Node id: /g)).toHaveLength(1);

    const unknown = await world.run('materials-find-solution', { problem: PROBLEM, nodes: ['no-such-node'] });
    expect(unknown.status).toBe('FAILED');
    expect(unknown.lastError).toMatchObject({ step: 'mind-map', retryable: false });
    expect(unknown.lastError?.message).toMatch(/^nodes: "no-such-node" is not in the mind map \(its nodes: /);
  });

  it('manual: offers the recommendations, refuses an invalid answer, and builds the map from the chosen ones', async () => {
    const waiting = await world.run('materials-find-solution', { problem: PROBLEM }, { mode: 'manual' });
    expect(waiting.status).toBe('AWAITING_INPUT');
    expect(waiting.step).toBe('recommendations');
    const options = waiting.pending!.options;
    expect(offered(waiting)[0]).toMatch(/^r1: /);
    await expect(world.answer(waiting.id, ['x1'])).rejects.toThrow(/not among the options offered: x1/);
    const done = await world.answer(waiting.id, ['r1']);
    expect(done.status, JSON.stringify(done.lastError)).toBe('SUCCEEDED');
    const { markdown, result } = await world.report(done.id);
    expect(result.selections.recommendations).toEqual(['r1']);
    expect(markdown).toContain(`## Chosen recommendations\n\n- ${options[0]!.label}\n`);
    // the map's routes are the chosen recommendations
    expect(markdown).toContain(`| 1 | ${options[0]!.label} |`);
    expect(markdown).not.toContain(`| 2 | ${options[1]!.label} |`);
  });

  it('goes on without a selection when there is no recommendation', async () => {
    const job = await world.run(
      'materials-find-solution',
      { problem: `${PROBLEM} [sandbox:no-recommend]` },
      { mode: 'manual' },
    );
    expect(job.status, JSON.stringify(job.lastError)).toBe('SUCCEEDED');
    const { markdown, result } = await world.report(job.id);
    expect(result.selections).toEqual({});
    expect(markdown).toContain('_None: the platform offered no recommendations._');
  });
});
