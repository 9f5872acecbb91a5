import { describe, expect, it } from 'vitest';
import { findSolution } from '../../../shared/workflows/find-solution/workflow';
import { contextFor, decideOf, inputProblems, kept, reportOf, requestOf } from './fixtures';

const PROBLEM = 'Increase the energy density of lithium-ion cells without loss of safety';

const recommendAnswer = {
  status: 'SUCCEED',
  recommend: [
    'Cost increase of at most 15%',
    'No loss of safety',
    'Compatible with existing production lines',
  ],
};

const directionsAnswer = {
  status: 'SUCCEED',
  directions: [
    {
      reason: 'Improve the cathode through material upgrades',
      ticked: true,
      approaches: ['Single-crystal NCM811 cathodes', 'Silicon-carbon anodes with 5-10% silicon'],
      source_type: 'model',
      verification: 'Verified against the constraints.',
    },
    {
      reason: 'Improve packaging through structural optimisation',
      ticked: 'false',
      approaches: ['Cell-to-pack design'],
      source_type: 'model',
      verification: null,
    },
    { reason: 'Custom: solid electrolyte', ticked: false, approaches: [], source_type: 'customize' },
  ],
};

const solutionAnswer = {
  status: 'SUCCEED',
  solution: {
    title: 'Higher energy density cells',
    cells: [
      {
        id: 'n0',
        shape: 'idea-node',
        data: { node_id: 'n0', sys_title: 'Higher energy density cells', order: '0' },
      },
      { id: 'e1', shape: 'default-edge', source: { cell: 'n0' }, target: { cell: 'n1' } },
      {
        id: 'n1',
        shape: 'route-node',
        data: {
          node_id: 'n1',
          sys_title: 'Cathode material upgrades',
          order: '1',
          route_name: 'Higher energy density cells',
        },
      },
      { id: 'e2', shape: 'default-edge', source: { cell: 'n1' }, target: { cell: 'n2' } },
      {
        id: 'n2',
        shape: 'solution-node',
        data: {
          node_id: 'n2',
          sys_title: 'Single-crystal NCM811',
          order: '1.1',
          route_name: 'Cathode material upgrades',
          sys_content: 'Use single-crystal particles to limit cracking.',
          sys_sub_content: 'Core contradiction: capacity versus stability.',
          innovation: '4',
          improvements: ['Validate on a pilot line'],
          reference: [
            {
              pn: 'CN113555000A',
              title: 'Single-crystal cathode',
              pbd: '2021-10-01',
              solution_type: 'PATENT',
            },
          ],
        },
      },
    ],
  },
};

describe('find-solution input', () => {
  it('takes a problem of at most 500 characters, language en by default', () => {
    expect(findSolution.input.parse({ problem: PROBLEM })).toEqual({ problem: PROBLEM, lang: 'en' });
    expect(inputProblems(findSolution, { problem: 'x'.repeat(501) })).toEqual([
      'problem: problem: at most 500 characters (the platform refuses longer problems)',
    ]);
    expect(inputProblems(findSolution, {})).toEqual([
      'problem: problem: the technical problem is required (a string)',
    ]);
  });

  it('reads the problem from a document without its title heading', () => {
    expect(findSolution.fromText?.(`# Denser cells\n\n${PROBLEM}\n`, 'cells.md')).toEqual({
      problem: PROBLEM,
      title: 'Denser cells',
    });
  });
});

describe('find-solution steps', () => {
  const base = { context: { taskId: 't1' } };

  it('creates the task and polls the recommendations on RUNNING/SUCCEED/FAILED', () => {
    const ctx = contextFor(findSolution, { problem: PROBLEM }, base);
    expect(requestOf(findSolution, 'create', ctx)).toEqual({ lang: 'en', solution_issues: PROBLEM });
    expect(decideOf(findSolution, 'create', { task_id: 't1' }, ctx)).toEqual({
      type: 'next',
      context: { taskId: 't1' },
    });
    expect(decideOf(findSolution, 'recommendations', { status: 'RUNNING', recommend: [] }, ctx)).toEqual({
      type: 'poll',
    });
    expect(decideOf(findSolution, 'recommendations', { status: 'FAILED' }, ctx)).toMatchObject({
      type: 'fail',
    });
  });

  it('offers the recommendations as r1, r2... none preselected, so auto takes them all', () => {
    const ctx = contextFor(findSolution, { problem: PROBLEM }, base);
    const decision = decideOf(findSolution, 'recommendations', recommendAnswer, ctx);
    expect(decision).toMatchObject({ type: 'select', offer: { min: 1 } });
    if (decision.type !== 'select') return;
    expect(decision.offer.options).toEqual([
      { id: 'r1', label: 'Cost increase of at most 15%', preselected: false },
      { id: 'r2', label: 'No loss of safety', preselected: false },
      { id: 'r3', label: 'Compatible with existing production lines', preselected: false },
    ]);
    // nothing to choose: go on without a selection point
    expect(decideOf(findSolution, 'recommendations', { status: 'SUCCEED', recommend: [] }, ctx)).toEqual({
      type: 'next',
    });
  });

  it('submits the chosen recommendations as the strings offered', () => {
    const ctx = contextFor(
      findSolution,
      { problem: PROBLEM, lang: 'cn' },
      {
        ...base,
        selections: { recommendations: ['r3', 'r1'] },
        outputs: { recommendations: kept('ai33-2Step2V3', recommendAnswer) },
      },
    );
    expect(requestOf(findSolution, 'submit-recommendations', ctx)).toEqual({
      lang: 'cn',
      task_id: 't1',
      recommend: ['Cost increase of at most 15%', 'Compatible with existing production lines'],
    });
    const none = contextFor(
      findSolution,
      { problem: PROBLEM },
      { ...base, outputs: { recommendations: kept('ai33-2Step2V3', { status: 'SUCCEED' }) } },
    );
    expect(requestOf(findSolution, 'submit-recommendations', none).recommend).toEqual([]);
  });

  it('offers the directions as d1, d2... with the ticked ones preselected', () => {
    const ctx = contextFor(findSolution, { problem: PROBLEM }, base);
    expect(decideOf(findSolution, 'directions', { status: 'RUNNING' }, ctx)).toEqual({ type: 'poll' });
    const decision = decideOf(findSolution, 'directions', directionsAnswer, ctx);
    if (decision.type !== 'select') throw new Error(`expected a selection, got ${decision.type}`);
    expect(decision.offer.options.map((o) => [o.id, o.preselected, o.label])).toEqual([
      ['d1', true, 'Improve the cathode through material upgrades'],
      ['d2', false, 'Improve packaging through structural optimisation'],
      ['d3', false, 'Custom: solid electrolyte'],
    ]);
    expect(decision.offer.options[0]?.detail).toBe(
      'Single-crystal NCM811 cathodes / Silicon-carbon anodes with 5-10% silicon',
    );
    expect(decideOf(findSolution, 'directions', { status: 'SUCCEED', directions: [] }, ctx)).toMatchObject({
      type: 'fail',
      message: /no technical directions/,
    });
  });

  it('submits every direction with ticked set from the choice', () => {
    const ctx = contextFor(
      findSolution,
      { problem: PROBLEM },
      {
        ...base,
        selections: { directions: ['d2'] },
        outputs: { directions: kept('ai33-4Step3QueryV3', directionsAnswer) },
      },
    );
    const body = requestOf(findSolution, 'submit-directions', ctx);
    const directions = body.directions as Record<string, unknown>[];
    expect(directions.map((d) => [d.reason, d.ticked])).toEqual([
      ['Improve the cathode through material upgrades', false],
      ['Improve packaging through structural optimisation', true],
      ['Custom: solid electrolyte', false],
    ]);
    expect(directions[1]).not.toHaveProperty('verification');
    expect(directions[2]).toMatchObject({ source_type: 'customize' });
  });

  it('completes when the final solution is there', () => {
    const ctx = contextFor(findSolution, { problem: PROBLEM }, base);
    expect(decideOf(findSolution, 'solution', { status: 'RUNNING' }, ctx)).toEqual({ type: 'poll' });
    expect(decideOf(findSolution, 'solution', solutionAnswer, ctx)).toEqual({ type: 'complete' });
    expect(decideOf(findSolution, 'solution', { status: 'SUCCEED' }, ctx)).toMatchObject({ type: 'fail' });
  });
});

describe('find-solution report', () => {
  const report = () =>
    reportOf(
      findSolution,
      { problem: PROBLEM },
      {
        outputs: {
          recommendations: kept('ai33-2Step2V3', recommendAnswer),
          directions: kept('ai33-4Step3QueryV3', directionsAnswer),
          solution: kept('ai33-6Step5V3', solutionAnswer),
        },
        selections: { recommendations: ['r1', 'r2'], directions: ['d1'] },
      },
    );

  it("leads with the final solution's title and nodes", () => {
    const { title, markdown } = report();
    expect(title).toBe('Find solution: Higher energy density cells');
    expect(markdown).toContain('## Final solution: Higher energy density cells');
    expect(markdown).toContain('| 1 | Cathode material upgrades |   |   |');
    expect(markdown).toContain('| 1.1 | Single-crystal NCM811 | Cathode material upgrades | 4 |');
    expect(markdown).toContain('### 1.1 Single-crystal NCM811');
    expect(markdown).toContain('Use single-crystal particles to limit cracking.');
    expect(markdown).toContain('| CN113555000A | Single-crystal cathode | 2021-10-01 | PATENT |');
    expect(markdown).toContain('- Cost increase of at most 15%\n- No loss of safety');
    expect(markdown).toContain('| Improve the cathode through material upgrades |');
    expect(markdown.indexOf('## Final solution')).toBeLessThan(markdown.indexOf('## Chosen recommendations'));
  });

  it('sums up the solution in a line', () => {
    expect(report().summary).toBe('Higher energy density cells: 2 solution nodes from 1 direction');
  });
});
