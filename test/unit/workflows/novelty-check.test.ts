import { describe, expect, it } from 'vitest';
import { pollDelay, stepsLeftOut } from '../../../shared/engine';
import { requestSchemas } from '../../../shared/openplatform/schemas/requests';
import { noveltyCheck, noveltyPolls } from '../../../shared/workflows/novelty-check/workflow';
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

const TEXT = `# Self-cleaning solar panel coating

A transparent coating for photovoltaic modules comprises titanium dioxide nanoparticles in a silica matrix.
The coating is applied by spray at 80 °C and cured by UV light.
Dust is removed by a piezoelectric vibrator mounted on the frame.`;

const input = { text: TEXT, pbdStart: '2015-01-01' };

/** ai35-4's answer: nine features like the platform's, the last one not selected, one with nulls. */
const featuresAnswer = {
  status: 2,
  data: [
    {
      feature_num: 'F1',
      feature_text: 'A transparent coating for photovoltaic modules',
      feature_text_original: 'A transparent coating for photovoltaic modules',
      feature_weight: 'topic',
      feature_elements: 'coating, photovoltaic',
      feature_function: 'Protects the module',
      feature_weight_reason: 'The subject of the technical solution',
      selected: true,
      user_add: false,
    },
    {
      feature_num: 'F1.1',
      feature_text: 'titanium dioxide nanoparticles in a silica matrix',
      feature_text_original: 'titanium dioxide nanoparticles in a silica matrix',
      feature_weight: 'core',
      feature_elements: 'titanium dioxide, silica',
      feature_function: null,
      feature_weight_reason: 'Distinguishes the solution',
      selected: 'true',
      user_add: false,
    },
    {
      feature_num: 'F1.2',
      feature_text: 'a piezoelectric vibrator | mounted on the frame',
      feature_weight: 'general',
      selected: false,
      user_add: false,
    },
  ],
};

const elementsAnswer = {
  status: 2,
  elements: {
    family_merge_enabled: true,
    list: [
      {
        feature_text_original: 'A transparent coating for photovoltaic modules',
        feature_type: 'topic_search',
        selected: true,
        express: [
          {
            word: { key: 'coating', source: 'keywords_extract' },
            extend: [{ key: 'film', source: 'semantic_search' }],
            ipc: [{ key: 'H01L 31/048', source: 'keywords_extract' }],
          },
        ],
      },
      {
        feature_text_original: 'titanium dioxide nanoparticles',
        feature_type: 'mystery_search',
        selected: null,
        express: [{ word: { key: 'TiO2', source: null }, extend: [], ipc: [] }],
      },
    ],
  },
};

const agentAnswer = {
  task_status: 'success',
  task_cost: '312.4',
  find_patent_num: 6,
  final_result: [
    {
      patent_id: 'CN112345678A',
      document: 'Self-cleaning photovoltaic glass with TiO2 coating',
      public_score: 0.82,
      feature_match_num: 2,
      most_similar: true,
      selected: true,
      comparative_literature_category: 'novelty',
      features: [
        {
          tech_feature: 'A transparent coating for photovoltaic modules',
          comparison_feature: 'A hydrophilic coating on PV glass',
          score: 91,
          similar: true,
          claim_num: 1,
          claim_type: 'independent',
          reason: 'The reference discloses a coating on modules.',
        },
        {
          tech_feature: 'a piezoelectric vibrator mounted on the frame',
          comparison_feature: 'not disclosed',
          score: 35,
          score_for_user: 40,
          similar: false,
          reason: 'Only partly <b>discloses</b> it.',
        },
      ],
    },
    {
      patent_id: 'US20210012345A1',
      document: 'Cleaning robot for solar arrays',
      public_score: '0.61',
      feature_match_num: 1,
      most_similar: false,
      comparative_literature_category: 'creativity',
      features: [],
    },
  ],
};

describe('novelty-check input', () => {
  it('defaults the language to en and keeps the publication range', () => {
    const parsed = noveltyCheck.input.parse({ text: ' idea ', pbdStart: '2015-01-01' });
    expect(parsed).toEqual({
      text: 'idea',
      lang: 'en',
      pbdStart: '2015-01-01',
      bibliography: true,
      legalData: true,
    });
  });

  it('says what is wrong with a bad input', () => {
    expect(inputProblems(noveltyCheck, { text: '   ' })).toEqual([
      'text: text: the technical description is empty',
    ]);
    expect(inputProblems(noveltyCheck, { text: 'x', lang: 'de' })).toEqual([
      'lang: lang: must be "cn" or "en"',
    ]);
    expect(inputProblems(noveltyCheck, { text: 'x', pbdEnd: 'last year' })[0]).toMatch(/YYYY-MM-DD/);
    expect(inputProblems(noveltyCheck, { txt: 'x' }).join()).toMatch(/text|txt/);
  });

  it('reads a Markdown document: the heading is the title, the whole text is checked', () => {
    expect(noveltyCheck.fromText?.(TEXT, 'examples/disclosures/solar.md')).toEqual({
      text: TEXT,
      title: 'Self-cleaning solar panel coating',
    });
    expect(noveltyCheck.fromText?.('A plain idea.\n', 'heat_pump-dryer.txt')).toEqual({
      text: 'A plain idea.',
      title: 'heat pump-dryer',
    });
  });
});

describe('novelty-check steps', () => {
  it('submits the description and keeps the task id', () => {
    const ctx = contextFor(noveltyCheck, { ...input, lang: 'cn', pbdStart: '20150101' });
    expect(requestOf(noveltyCheck, 'submit', ctx)).toEqual({
      input: TEXT,
      lang: 'cn',
      pbd_start: '20150101',
    });
    expect(decideOf(noveltyCheck, 'submit', { task_id: 'a1b2' }, ctx)).toEqual({
      type: 'next',
      context: { taskId: 'a1b2' },
    });
    expect(decideOf(noveltyCheck, 'submit', {}, ctx)).toMatchObject({ type: 'fail', message: /task_id/ });
  });

  it('polls the summary on the integer status 1/2/3', () => {
    const ctx = contextFor(noveltyCheck, input, { context: { taskId: 'a1b2' } });
    expect(requestOf(noveltyCheck, 'summary', ctx)).toEqual({ task_id: 'a1b2' });
    expect(decideOf(noveltyCheck, 'summary', { status: 1 }, ctx)).toEqual({ type: 'poll' });
    expect(decideOf(noveltyCheck, 'summary', { status: '2', tech_solution: 'S' }, ctx)).toEqual({
      type: 'next',
    });
    expect(decideOf(noveltyCheck, 'summary', { status: 3 }, ctx)).toMatchObject({
      type: 'fail',
      message: /summary failed/,
    });
    expect(decideOf(noveltyCheck, 'summary', { status: 9 }, ctx)).toMatchObject({
      type: 'fail',
      message: /unknown status 9/,
    });
  });

  it('confirms the summary by echoing it', () => {
    const ctx = contextFor(noveltyCheck, input, {
      context: { taskId: 'a1b2' },
      outputs: { summary: kept('ai35-2TechSolutionGet', { status: 2, tech_solution: 'The summary.' }) },
    });
    expect(requestOf(noveltyCheck, 'confirm-summary', ctx)).toEqual({
      task_id: 'a1b2',
      tech_solution: 'The summary.',
    });
  });

  it('offers the features as f1, f2... with the selected ones preselected', () => {
    const ctx = contextFor(noveltyCheck, input, { context: { taskId: 'a1b2' } });
    expect(decideOf(noveltyCheck, 'features', { status: 1, data: [] }, ctx)).toEqual({ type: 'poll' });
    const decision = decideOf(noveltyCheck, 'features', featuresAnswer, ctx);
    expect(decision.type).toBe('select');
    if (decision.type !== 'select') return;
    expect(decision.offer.min).toBe(1);
    expect(decision.offer.options.map((o) => [o.id, o.preselected])).toEqual([
      ['f1', true],
      ['f2', true],
      ['f3', false],
    ]);
    expect(decision.offer.options[1]).toMatchObject({
      label: 'titanium dioxide nanoparticles in a silica matrix',
      detail: 'weight: core; elements: titanium dioxide, silica',
    });
    expect(decideOf(noveltyCheck, 'features', { status: 2, data: [] }, ctx)).toMatchObject({
      type: 'fail',
      message: /no technical features/,
    });
  });

  it('confirms every feature with selected set from the choice', () => {
    const ctx = contextFor(noveltyCheck, input, {
      context: { taskId: 'a1b2' },
      selections: { features: ['f1', 'f3'] },
      outputs: { features: kept('ai35-4FeatureExtract', featuresAnswer) },
    });
    const body = requestOf(noveltyCheck, 'confirm-features', ctx);
    const features = body.tech_features as Record<string, unknown>[];
    expect(features.map((f) => [f.feature_num, f.selected])).toEqual([
      ['F1', true],
      ['F1.1', false],
      ['F1.2', true],
    ]);
    // nulls are left out, not sent
    expect(features[1]).not.toHaveProperty('feature_function');
  });

  it('starts the agent search with the search elements echoed back', () => {
    const ctx = contextFor(noveltyCheck, input, {
      context: { taskId: 'a1b2' },
      outputs: { 'search-elements': kept('ai35-6RetrievalElements', elementsAnswer) },
    });
    const body = requestOf(noveltyCheck, 'agent-search', ctx);
    expect(body.task_id).toBe('a1b2');
    const elements = body.elements as { family_merge_enabled: boolean; list: Record<string, unknown>[] };
    expect(elements.family_merge_enabled).toBe(true);
    expect(elements.list[0]).toMatchObject({ feature_type: 'topic_search', selected: true });
    expect(elements.list[0]?.express).toEqual([
      {
        word: { key: 'coating', source: 'keywords_extract' },
        extend: [{ key: 'film', source: 'semantic_search' }],
        ipc: [{ key: 'H01L 31/048', source: 'keywords_extract' }],
      },
    ]);
    // an unknown feature type is left out rather than refused by the request schema
    expect(elements.list[1]).not.toHaveProperty('feature_type');
    expect(elements.list[1]).not.toHaveProperty('selected');
  });

  it('waits for the agent search while its task_status is anything but success or a failure', () => {
    const ctx = contextFor(noveltyCheck, input, { context: { taskId: 'a1b2' } });
    for (const status of ['running', 'searching', '', undefined]) {
      expect(decideOf(noveltyCheck, 'agent-result', { task_status: status }, ctx)).toEqual({ type: 'poll' });
    }
    // Done: the next step (the references' data; the steps the input turns off leave themselves out).
    expect(decideOf(noveltyCheck, 'agent-result', agentAnswer, ctx)).toEqual({ type: 'next' });
    const neither = { ...input, bibliography: false, legalData: false };
    const state = contextFor(noveltyCheck, neither, { context: { taskId: 'a1b2' } });
    expect(stepsLeftOut(noveltyCheck, state)).toEqual({
      bibliography: '"bibliography" is false',
      'legal-status': '"legalData" is false',
      family: '"legalData" is false',
    });
    expect(stepsLeftOut(noveltyCheck, contextFor(noveltyCheck, input, { context: {} }))).toEqual({});
    // Nothing found: nothing to look up.
    expect(decideOf(noveltyCheck, 'agent-result', { ...agentAnswer, final_result: [] }, ctx)).toEqual({
      type: 'next',
      step: 'export',
    });
    expect(decideOf(noveltyCheck, 'agent-result', { task_status: 'FAILED' }, ctx)).toMatchObject({
      type: 'fail',
      message: /agent search failed/,
    });
  });

  it('polls the agent search first after about a minute, then less often', () => {
    const step = stepNamed(noveltyCheck, 'agent-result');
    expect(step.poll).toBe(noveltyPolls.agentResult);
    expect(noveltyPolls.agentResult.firstDelayMs).toBe(60_000);
    expect(pollDelay(noveltyPolls.agentResult, 2)).toBeGreaterThan(60_000);
  });

  it('exports under the input title, else the first line of the description', () => {
    const ctx = contextFor(noveltyCheck, input, { context: { taskId: 'a1b2' } });
    expect(requestOf(noveltyCheck, 'export', ctx)).toEqual({
      task_id: 'a1b2',
      title: 'Self-cleaning solar panel coating',
    });
    const titled = contextFor(
      noveltyCheck,
      { ...input, title: 'Coating v2' },
      { context: { taskId: 'a1b2' } },
    );
    expect(requestOf(noveltyCheck, 'export', titled).title).toBe('Coating v2');
  });

  it('polls the report link, then downloads the document, going back for a fresh link if it expired', () => {
    const ctx = contextFor(noveltyCheck, input, { context: { taskId: 'a1b2' } });
    expect(decideOf(noveltyCheck, 'report-link', { status: 1 }, ctx)).toEqual({ type: 'poll' });
    expect(
      decideOf(noveltyCheck, 'report-link', { status: 2, report_url: 'https://files.test/r.pdf' }, ctx),
    ).toEqual({
      type: 'next',
      context: { reportUrl: 'https://files.test/r.pdf' },
    });
    expect(decideOf(noveltyCheck, 'report-link', { status: 2 }, ctx)).toMatchObject({ type: 'fail' });
    expect(decideOf(noveltyCheck, 'report-link', { status: 3 }, ctx)).toMatchObject({ type: 'fail' });
    const fetch = stepNamed(noveltyCheck, 'report-document');
    expect(fetch.kind).toBe('fetch');
    if (fetch.kind !== 'fetch') return;
    expect(fetch.refreshFrom).toBe('report-link');
    expect(
      fetch.url(contextFor(noveltyCheck, input, { context: { reportUrl: 'https://files.test/r.pdf' } })),
    ).toBe('https://files.test/r.pdf');
    expect(decideOf(noveltyCheck, 'report-document', undefined, ctx)).toEqual({ type: 'complete' });
  });

  it('refuses to build a request when the task id is missing (a wiring mistake)', () => {
    expect(() => rawRequestOf(noveltyCheck, 'summary', contextFor(noveltyCheck, input))).toThrow(/taskId/);
  });

  it('builds request bodies the request schemas accept for every call step', () => {
    const ctx = contextFor(noveltyCheck, input, {
      context: { taskId: 'a1b2' },
      selections: { features: ['f2'] },
      outputs: {
        summary: kept('ai35-2TechSolutionGet', { status: 2, tech_solution: 'S' }),
        features: kept('ai35-4FeatureExtract', featuresAnswer),
        'search-elements': kept('ai35-6RetrievalElements', elementsAnswer),
        'agent-result': kept('ai35-8NoveltySearchAgentResult', agentAnswer),
      },
    });
    for (const step of noveltyCheck.steps) {
      if (step.kind === 'fetch' || step.kind === 'request') continue;
      expect(() => requestSchemas[step.operation].parse(step.request(ctx)), step.name).not.toThrow();
    }
  });
});

describe('novelty-check report', () => {
  const outputs = {
    summary: kept('ai35-2TechSolutionGet', {
      status: 2,
      tech_solution: 'A coating with TiO2 nanoparticles.\n\n# Not a heading\n| not | a table |',
    }),
    features: kept('ai35-4FeatureExtract', featuresAnswer),
    'search-elements': kept('ai35-6RetrievalElements', elementsAnswer),
    'agent-result': kept('ai35-8NoveltySearchAgentResult', agentAnswer),
  };
  const report = () =>
    reportOf(noveltyCheck, input, {
      outputs,
      selections: { features: ['f1', 'f2'] },
      attachments: [
        {
          key: 'reports/01JTESTJOB0000000000000000/attachments/novelty report.pdf',
          fileName: 'novelty report.pdf',
          contentType: 'application/pdf',
        },
      ],
    });

  it('puts the conclusion first, then the matrix, the references with category and claims, then the detail', () => {
    const { title, markdown } = report();
    expect(title).toBe('Novelty check: Self-cleaning solar panel coating');
    const order = [
      '## Conclusion',
      '## Features × references',
      '## References',
      '### D1 · CN112345678A',
      '## The invention',
      '## Search elements',
      '## Report document',
    ];
    const positions = order.map((text) => markdown.indexOf(text));
    expect(
      positions.every((position) => position >= 0),
      String(positions),
    ).toBe(true);
    expect([...positions].sort((a, b) => a - b)).toEqual(positions);
    // f1 disclosed by D1 alone, f2 (selected) compared by no reference, f3 compared though not selected
    expect(markdown).toContain('- Anticipated by a single document (D1, CN112345678A): f1');
    expect(markdown).toContain('- Found only in other documents or as close variants: none');
    expect(markdown).toContain('- Not found: f3');
    expect(markdown).toContain(
      '- Searched: publications from 2015-01-01 on; language English (en); 6 potentially similar patents found, 2 compared',
    );
    expect(markdown).toContain('| Id | Feature | D1 (X) | D2 (A) |');
    expect(markdown).toContain('| f1 | A transparent coating for photovoltaic modules | ● 91 | — |');
    expect(markdown).toContain(
      '| f3 | a piezoelectric vibrator \\| mounted on the frame (not selected: not searched) | ○ 40 | — |',
    );
    expect(markdown).toContain(
      '[CN112345678A](https://worldwide.espacenet.com/patent/search?q=pn%3DCN112345678A)',
    );
    expect(markdown).toMatch(/\| D1 \| .+ \| X\\\* \| 1 \| 82 \|/);
    expect(markdown).toContain(
      '| f3 | ○ 40 | — | not disclosed | Only partly \\<b\\>discloses\\</b\\> it. |',
    );
    // each feature's text once: afterwards only its id
    expect(markdown.split('A transparent coating for photovoltaic modules').length - 1).toBe(1);
    expect(markdown).toContain('| f1 | topic_search | coating | film | H01L 31/048 | yes |');
    expect(markdown).toContain('[novelty report.pdf](attachments/novelty%20report.pdf)');
  });

  it('keeps upstream text from opening headings or tables of its own', () => {
    const { markdown } = report();
    expect(markdown).toContain('\\# Not a heading');
    expect(markdown).not.toMatch(/^# Not a heading/m);
    expect(markdown).not.toMatch(/^\| not \| a table \|/m);
  });

  it('sums up features, references and the closest one in a line', () => {
    expect(report().summary).toBe(
      '3 features (2 selected), 2 references, closest CN112345678A (X, 82), not found: f3',
    );
  });

  it('still renders when the search found nothing', () => {
    const { markdown, summary } = reportOf(noveltyCheck, input, {
      outputs: { features: kept('ai35-4FeatureExtract', featuresAnswer) },
      selections: { features: ['f1'] },
    });
    expect(markdown).toContain('_No references found._');
    expect(markdown).toContain('_No document was downloaded._');
    expect(summary).toBe('3 features (1 selected), 0 references');
  });
});
