import { describe, expect, it } from 'vitest';
import {
  citationPageSize,
  maxCitationPages,
  nodeOutput,
} from '../../../shared/workflows/materials-find-solution/input';
import { materialsFindSolution } from '../../../shared/workflows/materials-find-solution/workflow';
import {
  contextFor,
  decideOf,
  inputProblems,
  kept,
  rawRequestOf,
  reportOf,
  requestOf,
  stepNamed,
} from './fixtures';

const PROBLEM =
  'Raise the thermal conductivity of epoxy potting compounds above 2 W/mK while keeping them insulating.';

const recommendAnswer = {
  status: 'SUCCEED',
  has_recommend: true,
  recommend: ['Boron nitride composite formulation', 'Alumina surface modification'],
};

const cell = (id: string, title: string, order: string, route = '') => ({
  id,
  shape: order === '0' ? 'idea-node' : order.includes('.') ? 'solution-node' : 'route-node',
  data: {
    node_id: id,
    sys_title: title,
    order,
    route_name: route,
    sys_content: `${title}: details`,
    status: 'success',
  },
});
const edge = (from: string, to: string) => ({
  id: `${from}>${to}`,
  shape: 'default-edge',
  source: { cell: from },
  target: { cell: to },
});

const mindAnswer = {
  status: 'SUCCEED',
  solution: {
    title: 'Thermally conductive epoxy',
    cells: [
      cell('root', 'Thermally conductive epoxy', '0'),
      edge('root', 'bn'),
      cell('bn', 'Boron nitride composite formulation', '1', 'Thermally conductive epoxy'),
      edge('bn', 'bn1'),
      cell('bn1', 'Boron nitride, variant 1', '1.1', 'Boron nitride composite formulation'),
      edge('bn', 'bn2'),
      cell('bn2', 'Boron nitride, variant 2', '1.2', 'Boron nitride composite formulation'),
    ],
  },
};

const thinkingAnswer = {
  status: 'SUCCEED',
  board_id: 'b1',
  problem_statement: {
    domain: 'Epoxy materials',
    problem_title: 'Thermally conductive epoxy',
    refined_statement: PROBLEM,
    technical_constraints: [{ category: 'Cost', description: 'At most 15% dearer', impact_level: 'medium' }],
    performance_requirements: [
      { parameter: 'Conductivity', target_value: '2', unit: 'W/mK', tolerance: '±0.2' },
    ],
  },
  references: {
    references: [{ pn: 'CN1A', title: 'BN filled epoxy', pbd: '2020-02-02', solution_type: 'PATENT' }],
  },
};

const nodesContext = { taskId: 't1', boardId: 'b1', nodeIds: ['bn1', 'bn2'], nodeIndex: 1, page: 2 };

describe('materials-find-solution input', () => {
  it('details no node unless asked', () => {
    expect(materialsFindSolution.input.parse({ problem: PROBLEM })).toEqual({
      problem: PROBLEM,
      lang: 'en',
      nodes: 'none',
    });
    expect(materialsFindSolution.input.parse({ problem: PROBLEM, nodes: 'all' }).nodes).toBe('all');
    expect(materialsFindSolution.input.parse({ problem: PROBLEM, nodes: [' bn1 '] }).nodes).toEqual(['bn1']);
  });

  it('says what a nodes policy may be', () => {
    expect(inputProblems(materialsFindSolution, { problem: PROBLEM, nodes: 'some' })).toEqual([
      'nodes: nodes: "none", "all", or a list of node ids',
    ]);
    expect(inputProblems(materialsFindSolution, { problem: PROBLEM, nodes: [] }).join()).toMatch(
      /at least one node id/,
    );
  });
});

describe('materials-find-solution steps', () => {
  it('submits, then offers the recommendations (or goes on when there are none)', () => {
    const ctx = contextFor(materialsFindSolution, { problem: PROBLEM }, { context: { taskId: 't1' } });
    expect(requestOf(materialsFindSolution, 'submit', ctx)).toEqual({ input: PROBLEM, lang: 'en' });
    expect(decideOf(materialsFindSolution, 'recommendations', { status: 'RUNNING' }, ctx)).toEqual({
      type: 'poll',
    });
    const decision = decideOf(materialsFindSolution, 'recommendations', recommendAnswer, ctx);
    if (decision.type !== 'select') throw new Error(`expected a selection, got ${decision.type}`);
    expect(decision.offer.options.map((o) => [o.id, o.label, o.preselected])).toEqual([
      ['r1', 'Boron nitride composite formulation', false],
      ['r2', 'Alumina surface modification', false],
    ]);
    expect(
      decideOf(
        materialsFindSolution,
        'recommendations',
        { status: 'SUCCEED', has_recommend: false, recommend: [] },
        ctx,
      ),
    ).toEqual({ type: 'next' });
  });

  it('confirms the chosen recommendations', () => {
    const ctx = contextFor(
      materialsFindSolution,
      { problem: PROBLEM },
      {
        context: { taskId: 't1' },
        selections: { recommendations: ['r2'] },
        outputs: { recommendations: kept('ai73-2FindSolutionRecommend', recommendAnswer) },
      },
    );
    expect(requestOf(materialsFindSolution, 'confirm-recommendations', ctx)).toEqual({
      task_id: 't1',
      recommend: ['Alumina surface modification'],
    });
  });

  it('keeps the board id from the thinking process', () => {
    const ctx = contextFor(materialsFindSolution, { problem: PROBLEM }, { context: { taskId: 't1' } });
    expect(decideOf(materialsFindSolution, 'thinking', { status: 'RUNNING', board_id: 'b1' }, ctx)).toEqual({
      type: 'poll',
    });
    expect(decideOf(materialsFindSolution, 'thinking', thinkingAnswer, ctx)).toEqual({
      type: 'next',
      context: { boardId: 'b1' },
    });
    expect(decideOf(materialsFindSolution, 'thinking', { status: 'SUCCEED' }, ctx)).toMatchObject({
      type: 'fail',
      message: /board_id/,
    });
  });

  it('resolves the nodes policy against the mind map', () => {
    const decide = (nodes: unknown) =>
      decideOf(
        materialsFindSolution,
        'mind-map',
        mindAnswer,
        contextFor(materialsFindSolution, { problem: PROBLEM, nodes }),
      );
    expect(decide('none')).toEqual({ type: 'complete' });
    expect(decide('all')).toEqual({
      type: 'next',
      context: { nodeIds: ['bn1', 'bn2'], nodeIndex: 0, page: 1 },
    });
    expect(decide(['bn', 'bn2', 'bn'])).toEqual({
      type: 'next',
      context: { nodeIds: ['bn', 'bn2'], nodeIndex: 0, page: 1 },
    });
    expect(decide(['bn9', 'root'])).toEqual({
      type: 'fail',
      message: 'nodes: "bn9" is not in the mind map (its nodes: root, bn, bn1, bn2)',
    });
  });

  it('asks about the current node with the task and board ids, each round under its own output name', () => {
    const ctx = contextFor(
      materialsFindSolution,
      { problem: PROBLEM, nodes: 'all' },
      { context: nodesContext },
    );
    expect(requestOf(materialsFindSolution, 'node-reference', ctx)).toEqual({
      task_id: 't1',
      board_id: 'b1',
      node_id: 'bn2',
    });
    expect(requestOf(materialsFindSolution, 'citations', ctx)).toEqual({
      task_id: 't1',
      board_id: 'b1',
      node_id: 'bn2',
      page: 2,
      limit: citationPageSize,
    });
    expect(stepNamed(materialsFindSolution, 'node-reference').outputName?.(ctx)).toBe('node-2-reference');
    expect(stepNamed(materialsFindSolution, 'citations').outputName?.(ctx)).toBe('node-2-citations-p2');
    expect(stepNamed(materialsFindSolution, 'implementation').outputName?.(ctx)).toBe(
      'node-2-implementation-start',
    );
    expect(stepNamed(materialsFindSolution, 'implementation-result').outputName?.(ctx)).toBe(
      'node-2-implementation',
    );
    expect(decideOf(materialsFindSolution, 'node-reference', {}, ctx)).toEqual({
      type: 'next',
      context: { page: 1 },
    });
  });

  it('reads every page of citations', () => {
    const ctx = contextFor(materialsFindSolution, { problem: PROBLEM }, { context: nodesContext });
    const page = (hasNext: boolean, records: unknown[] = [{ PN: 'CN1A' }]) => ({
      page: 2,
      limit: 20,
      total: 45,
      has_next: hasNext,
      records,
    });
    expect(decideOf(materialsFindSolution, 'citations', page(true), ctx)).toEqual({
      type: 'next',
      step: 'citations',
      context: { page: 3 },
    });
    expect(decideOf(materialsFindSolution, 'citations', page(false), ctx)).toEqual({ type: 'next' });
    // has_next with an empty page would loop for ever: stop there
    expect(decideOf(materialsFindSolution, 'citations', page(true, []), ctx)).toEqual({ type: 'next' });
    const last = contextFor(
      materialsFindSolution,
      { problem: PROBLEM },
      { context: { ...nodesContext, page: maxCitationPages } },
    );
    expect(decideOf(materialsFindSolution, 'citations', page(true), last)).toMatchObject({ type: 'fail' });
  });

  it('polls each implementation, then moves to the next node, and completes after the last', () => {
    const first = contextFor(
      materialsFindSolution,
      { problem: PROBLEM },
      { context: { ...nodesContext, nodeIndex: 0 } },
    );
    expect(decideOf(materialsFindSolution, 'implementation-result', { status: 'RUNNING' }, first)).toEqual({
      type: 'poll',
    });
    expect(
      decideOf(
        materialsFindSolution,
        'implementation-result',
        { status: 'SUCCEED', markdown_message: '# Plan' },
        first,
      ),
    ).toEqual({
      type: 'next',
      step: 'node-reference',
      context: { nodeIndex: 1, page: 1 },
    });
    const last = contextFor(materialsFindSolution, { problem: PROBLEM }, { context: nodesContext });
    expect(
      decideOf(
        materialsFindSolution,
        'implementation-result',
        { status: 'SUCCEED', markdown_message: '# Plan' },
        last,
      ),
    ).toEqual({
      type: 'complete',
    });
    expect(
      decideOf(materialsFindSolution, 'implementation-result', { status: 'FAILED' }, last),
    ).toMatchObject({ type: 'fail' });
  });

  it('refuses to ask about a node the context does not hold', () => {
    const ctx = contextFor(
      materialsFindSolution,
      { problem: PROBLEM },
      { context: { taskId: 't1', boardId: 'b1', nodeIds: [] } },
    );
    expect(() => rawRequestOf(materialsFindSolution, 'node-reference', ctx)).toThrow(/node number 1/);
  });
});

describe('materials-find-solution report', () => {
  const outputs = {
    recommendations: kept('ai73-2FindSolutionRecommend', recommendAnswer),
    thinking: kept('ai73-4FindSolutionThinking', thinkingAnswer),
    'mind-map': kept('ai73-5FindSolutionMind', mindAnswer),
    [nodeOutput.reference(0)]: kept('ai73-7FindSolutionNodeReference', {
      technical_principle: [
        'Boron nitride conducts heat<cite title="BN filled epoxy"><a href="/view/#/?patentId=1" target="_blank">1</a></cite>.',
      ],
      expected_challenge: ['Viscosity rises with filler load'],
    }),
    [nodeOutput.citations(0, 1)]: kept('ai73-6FindSolutionCitationReferenceList', {
      page: 1,
      total: 3,
      has_next: true,
      records: [
        { PN: 'CN1A', TITLE: 'BN filled epoxy', PBD: '2020-02-02', SOLUTION_TYPE: 'PATENT' },
        { PN: 'US2B2', TITLE: 'Alumina | epoxy', PBD: '2019-01-01', SOLUTION_TYPE: 'PATENT' },
      ],
    }),
    [nodeOutput.citations(0, 2)]: kept('ai73-6FindSolutionCitationReferenceList', {
      page: 2,
      total: 3,
      has_next: false,
      records: [{ PN: 'EP3C1', TITLE: 'Hybrid fillers', PBD: '2021-03-03', SOLUTION_TYPE: 'PAPER' }],
    }),
    [nodeOutput.implementation(0)]: kept('ai73-9FindSolutionImplementationResponse', {
      status: 'SUCCEED',
      markdown_message: '# Implementation plan\n\n## Steps\n1. Mix 30 vol% BN.\n2. Cure at 120 °C.',
    }),
  };

  it('shows the mind map nodes with their ids, then each chosen node with all its citations and its plan', () => {
    const { title, markdown, summary } = reportOf(
      materialsFindSolution,
      { problem: PROBLEM, nodes: ['bn1'] },
      {
        outputs,
        context: { nodeIds: ['bn1'] },
        selections: { recommendations: ['r1'] },
      },
    );
    expect(title).toBe('Materials find solution: Thermally conductive epoxy');
    expect(markdown).toContain(
      '| 1.1 | Boron nitride, variant 1 | Boron nitride composite formulation | bn1 |',
    );
    expect(markdown).toContain('### 1.1 Boron nitride, variant 1');
    expect(markdown).toContain('- Boron nitride conducts heat (BN filled epoxy).');
    expect(markdown).toContain('#### Citations (3)');
    expect(markdown).toContain('| CN1A | BN filled epoxy | 2020-02-02 | PATENT |');
    expect(markdown).toContain('| US2B2 | Alumina \\| epoxy | 2019-01-01 | PATENT |');
    expect(markdown).toContain('| EP3C1 | Hybrid fillers | 2021-03-03 | PAPER |');
    // the plan's own Markdown is shown as text, so it cannot break the report's structure
    expect(markdown).toContain(
      '\\# Implementation plan\n\n\\## Steps  \n1\\. Mix 30 vol% BN.  \n2\\. Cure at 120 °C.',
    );
    expect(markdown).toContain('| Conductivity | 2 | W/mK | ±0.2 |');
    expect(markdown).toContain('- Boron nitride composite formulation');
    expect(summary).toBe('Thermally conductive epoxy: 4 mind-map nodes, 1 detailed');
  });

  it('says how to detail nodes when none was', () => {
    const { markdown } = reportOf(materialsFindSolution, { problem: PROBLEM }, { outputs });
    expect(markdown).toContain('No node was detailed');
    expect(markdown).toContain('| 0 | Thermally conductive epoxy |   | root |');
  });
});
