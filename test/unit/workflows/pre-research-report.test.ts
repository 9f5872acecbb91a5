import { describe, expect, it } from 'vitest';
import { preResearchReport } from '../../../shared/workflows/pre-research-report/workflow';
import { contextFor, decideOf, inputProblems, kept, reportOf, requestOf, stepNamed } from './fixtures';

const QUESTION = 'How can the energy density of lithium-ion batteries be raised?';

const proposed = {
  report_id: '67bfdb99-fd1c-4a7e-819e-2218f976378c',
  analysis_directory: [
    {
      key: 'TECH_RESEARCH_TECHNICAL_BACKGROUND',
      name: 'Energy density: background and goals',
      source_type: 'model',
    },
    { key: 'TECH_RESEARCH_MARKET_ANALYSIS', name: 'Battery market demand', source_type: 'model' },
    { key: 'TECH_RESEARCH_HEAD_PLAYER_ANALYSIS', name: 'Leading players', source_type: 'model' },
    { key: 'TECH_RESEARCH_CUSTOM_MODULE_1', name: 'Density and safety', source_type: 'customize' },
  ],
};

const finished = {
  report_status: 'SUCCEED',
  report_url: 'https://files.test/pre-research.html',
  head_player_analysis: {
    players: [
      {
        display_name: 'Halvorsen Energy Systems AS',
        country_name: 'Norway',
        entity_type: 'Company',
        patent_count: 312,
      },
      {
        display_name: 'Kestrel <Photonics> Inc.',
        country_name: 'United States',
        entity_type: 'Company',
        patent_count: '87',
      },
    ],
  },
  key_patent_interpretation: {
    patents: [{ pn: 'CN112345678A', title: 'Silicon-carbon anode', score: 93 }],
  },
};

describe('pre-research-report input', () => {
  it('takes a question, and optionally chapters by key (prefix optional), names only for custom modules', () => {
    expect(
      preResearchReport.input.parse({
        question: QUESTION,
        directory: [{ key: 'market_analysis' }, { key: 'TECH_RESEARCH_CUSTOM_MODULE_1', name: 'Cost' }],
      }),
    ).toEqual({
      question: QUESTION,
      directory: [
        { key: 'TECH_RESEARCH_MARKET_ANALYSIS' },
        { key: 'TECH_RESEARCH_CUSTOM_MODULE_1', name: 'Cost' },
      ],
    });
  });

  it('says what is wrong with a directory', () => {
    expect(
      inputProblems(preResearchReport, { question: QUESTION, directory: [{ key: 'MARKETING' }] })[0],
    ).toMatch(/directory\.0\.key: key: one of TECHNICAL_BACKGROUND, MARKET_ANALYSIS/);
    expect(
      inputProblems(preResearchReport, {
        question: QUESTION,
        directory: [{ key: 'MARKET_ANALYSIS', name: 'Mine' }],
      }),
    ).toEqual([
      'directory.0.name: only CUSTOM_MODULE_1 and CUSTOM_MODULE_2 may be renamed, not MARKET_ANALYSIS',
    ]);
    expect(inputProblems(preResearchReport, { question: QUESTION, directory: [] })).toEqual([
      'directory: directory: list at least one chapter, or leave the directory out',
    ]);
    expect(
      inputProblems(preResearchReport, {
        question: QUESTION,
        directory: [{ key: 'IDEA_SUMMARY' }, { key: 'idea summary' }],
      }),
    ).toEqual(['directory: directory: a chapter is listed twice']);
  });
});

describe('pre-research-report steps', () => {
  it('from a question: lets the platform choose the chapters and goes straight to the report', () => {
    const ctx = contextFor(preResearchReport, { question: QUESTION });
    expect(requestOf(preResearchReport, 'create', ctx)).toEqual({
      technical_issues: QUESTION,
      auto_directory: true,
    });
    expect(decideOf(preResearchReport, 'create', proposed, ctx)).toEqual({
      type: 'next',
      step: 'report',
      context: { reportId: proposed.report_id },
    });
    expect(decideOf(preResearchReport, 'create', {}, ctx)).toMatchObject({
      type: 'fail',
      message: /report_id/,
    });
  });

  it('with a directory: creates without chapters, then supplies them named as proposed', () => {
    const input = {
      question: QUESTION,
      directory: [
        { key: 'HEAD_PLAYER_ANALYSIS' },
        { key: 'CUSTOM_MODULE_1', name: 'Cost of density' },
        { key: 'CUSTOM_MODULE_2', name: 'Uses' },
      ],
    };
    const ctx = contextFor(preResearchReport, input);
    expect(requestOf(preResearchReport, 'create', ctx)).toEqual({
      technical_issues: QUESTION,
      auto_directory: false,
    });
    expect(decideOf(preResearchReport, 'create', proposed, ctx)).toMatchObject({
      type: 'next',
      step: 'custom-directory',
    });
    const next = contextFor(preResearchReport, input, {
      context: { reportId: proposed.report_id },
      outputs: { create: kept('ai34-1QuickSearchReportCreation', proposed) },
    });
    expect(requestOf(preResearchReport, 'custom-directory', next)).toEqual({
      report_id: proposed.report_id,
      technical_issues: QUESTION,
      analysis_directory: [
        { key: 'TECH_RESEARCH_HEAD_PLAYER_ANALYSIS', name: 'Leading players', source_type: 'model' },
        { key: 'TECH_RESEARCH_CUSTOM_MODULE_1', name: 'Cost of density', source_type: 'customize' },
        { key: 'TECH_RESEARCH_CUSTOM_MODULE_2', name: 'Uses', source_type: 'customize' },
      ],
    });
  });

  it('polls report_status until the report link is there, then keeps a copy of the report', () => {
    const ctx = contextFor(preResearchReport, { question: QUESTION }, { context: { reportId: 'r1' } });
    expect(requestOf(preResearchReport, 'report', ctx)).toEqual({ report_id: 'r1' });
    expect(decideOf(preResearchReport, 'report', { report_status: 'RUNNING' }, ctx)).toEqual({
      type: 'poll',
    });
    expect(decideOf(preResearchReport, 'report', finished, ctx)).toEqual({
      type: 'next',
      context: { reportUrl: finished.report_url },
    });
    expect(decideOf(preResearchReport, 'report', { report_status: 'FAILED' }, ctx)).toMatchObject({
      type: 'fail',
    });
    expect(stepNamed(preResearchReport, 'report').poll?.firstDelayMs).toBeGreaterThanOrEqual(120_000);
    const fetch = stepNamed(preResearchReport, 'report-document');
    expect(fetch.kind === 'fetch' && fetch.refreshFrom).toBe('report');
  });
});

describe('pre-research-report report', () => {
  it('leads with the key players and key patents, then links the kept report', () => {
    const { title, markdown, summary } = reportOf(
      preResearchReport,
      { question: QUESTION },
      {
        outputs: {
          create: kept('ai34-1QuickSearchReportCreation', proposed),
          report: kept('ai34-3QuickSearchReportQuery', finished),
        },
        attachments: [
          {
            key: 'reports/01JTESTJOB0000000000000000/attachments/pre-research-67bfdb99.html',
            fileName: 'pre-research-67bfdb99.html',
            contentType: 'text/html',
          },
        ],
      },
    );
    expect(title).toBe(`Pre-research report: ${QUESTION}`);
    expect(markdown).toContain('| Player | Country | Type | Patents |');
    expect(markdown).toContain('| Halvorsen Energy Systems AS | Norway | Company | 312 |');
    expect(markdown).toContain('| Kestrel \\<Photonics\\> Inc. | United States | Company | 87 |');
    expect(markdown).toContain('| Publication | Title | Score |');
    expect(markdown).toContain('| CN112345678A | Silicon-carbon anode | 93 |');
    expect(markdown).toContain('[pre-research-67bfdb99.html](attachments/pre-research-67bfdb99.html)');
    expect(markdown).toContain('| Density and safety | CUSTOM_MODULE_1 | customize |');
    expect(markdown.indexOf('## Key players')).toBeLessThan(markdown.indexOf('## Report document'));
    expect(summary).toBe('2 key players, 1 key patent, report pre-research-67bfdb99.html');
  });

  it('outlines analyses that hold no list of records', () => {
    const { markdown } = reportOf(
      preResearchReport,
      { question: QUESTION },
      {
        outputs: {
          report: kept('ai34-3QuickSearchReportQuery', {
            ...finished,
            head_player_analysis: { summary: 'Three firms lead.', market_share: { top3: '61%' } },
          }),
        },
      },
    );
    expect(markdown).toContain('- **Summary**: Three firms lead.\n- **Market share**\n  - **Top3**: 61%');
  });
});
