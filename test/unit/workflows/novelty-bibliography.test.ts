/**
 * The novelty check's bibliographic step (p011): the query it sends, the sandbox's deterministic
 * records, and what the report shows with them, without some of them, and without any (not asked
 * for, or the step failed and why).
 */
import { describe, expect, it } from 'vitest';
import { skippedStepsKey } from '../../../shared/engine';
import { requestSchemas } from '../../../shared/openplatform/schemas/requests';
import { responseDataSchemas } from '../../../shared/openplatform/schemas/responses';
import {
  bibliographyRecord,
  createBibliographyOperations,
} from '../../../shared/sandbox/operations/bibliography';
import type { OperationContext } from '../../../shared/sandbox/operations/contract';
import { bibliographyQuery, noveltyCheck } from '../../../shared/workflows/novelty-check/workflow';
import { kept, reportOf } from './fixtures';

const input = { text: 'A transparent coating for photovoltaic modules with a vibrator on the frame.' };
const features = {
  status: 2,
  data: [
    { feature_text: 'A transparent coating', selected: true },
    { feature_text: 'a vibrator on the frame', selected: true },
  ],
};
const reference = (patentId: string, score: number) => ({
  patent_id: patentId,
  document: `Comparison text of ${patentId}`,
  public_score: score,
  comparative_literature_type: 'X',
  features: [{ tech_feature: 'A transparent coating', type: 'public', score: 90, claim_num: 1 }],
});
const agent = {
  task_status: 'success',
  final_result: [reference('CN112345678A', 0.9), reference('US2019012345A1', 0.7)],
};

const record = (pn: string) => ({
  pn,
  patent_id: `id-${pn}`,
  bibliographic_data: {
    invention_title: [
      { lang: 'CN', text: '自清洁涂层' },
      { lang: 'EN', text: `Self-cleaning coating ${pn}` },
    ],
    parties: { assignees: [{ name: 'Kestrel Photonics Inc.' }, { name: 'Halvorsen Energy Systems AS' }] },
    application_reference: { apno: 'CN201810000000.1', date: 20180301 },
    publication_reference: { country: 'CN', doc_number: '112345678', kind: 'A', date: 20190615 },
    priority_claims: [{ date: 20170902 }],
  },
});

const report = (outputs: Record<string, unknown>, context: Record<string, unknown> = {}, extra = {}) =>
  reportOf(
    noveltyCheck,
    { ...input, ...extra },
    {
      outputs: {
        features: kept('ai35-4FeatureExtract', features),
        'agent-result': kept('ai35-8NoveltySearchAgentResult', agent),
        ...outputs,
      },
      selections: { features: ['f1', 'f2'] },
      context,
    },
  ).markdown;

describe('the p011 query', () => {
  it('names publication numbers as patent_number, each once, and anything else as patent_id', () => {
    expect(bibliographyQuery(agent.final_result)).toEqual({ patent_number: 'CN112345678A,US2019012345A1' });
    expect(
      bibliographyQuery([
        { patent_id: 'CN112345678A' },
        { patent_id: '718ead9c-4f3c' },
        { patent_id: 'CN112345678A' },
      ]),
    ).toEqual({ patent_id: 'CN112345678A,718ead9c-4f3c' });
    const many = Array.from({ length: 130 }, (_, index) => ({ patent_id: `CN${100000000 + index}A` }));
    const query = bibliographyQuery(many);
    expect(query.patent_number?.split(',')).toHaveLength(100);
    expect(() => requestSchemas.p011BasicPatentDataSimpleBibliography.parse(query)).not.toThrow();
    expect(requestSchemas.p011BasicPatentDataSimpleBibliography.safeParse({}).success).toBe(false);
  });
});

describe('the sandbox’s p011', () => {
  const context = { seed: 7 } as OperationContext;
  const p011 = createBibliographyOperations().p011BasicPatentDataSimpleBibliography;

  it('answers the same record for the same number, dated consistently, valid for the client', () => {
    const answer = p011({ patent_number: 'US2019012345A1,CN112345678A,not-a-number' }, context);
    expect(answer.kind).toBe('json');
    const data = (answer as { data: ReturnType<typeof bibliographyRecord>[] }).data;
    // An unknown number is left out, as the platform leaves out what it does not find.
    expect(data.map((item) => item.pn)).toEqual(['US2019012345A1', 'CN112345678A']);
    expect(data[0]).toEqual(bibliographyRecord(7, 'US2019012345A1', 'number'));
    expect(bibliographyRecord(8, 'US2019012345A1', 'number')).not.toEqual(data[0]);
    expect(responseDataSchemas.p011BasicPatentDataSimpleBibliography.parse(data)).toHaveLength(2);
    for (const item of data) {
      const biblio = item.bibliographic_data!;
      const dates = [
        biblio.priority_claims![0]!.date!,
        biblio.application_reference!.date!,
        biblio.publication_reference!.date!,
      ];
      for (const date of dates) {
        const text = String(date);
        const parsed = new Date(`${text.slice(0, 4)}-${text.slice(4, 6)}-${text.slice(6)}T00:00:00Z`);
        expect(Number.isNaN(parsed.getTime()), text).toBe(false);
        expect(parsed.toISOString().slice(0, 10).replace(/-/g, ''), text).toBe(text);
      }
      expect([...dates].sort()).toEqual(dates);
    }
    // A number's year is its publication year.
    expect(String(data[0]!.bibliographic_data!.publication_reference!.date).slice(0, 4)).toBe('2019');
  });

  it('answers by patent_id with the id asked for', () => {
    const answer = p011({ patent_id: '718ead9c-4f3c-4674-8f5a-24e126827269' }, context) as {
      data: { patent_id: string; pn: string }[];
    };
    expect(answer.data).toHaveLength(1);
    expect(answer.data[0]!.patent_id).toBe('718ead9c-4f3c-4674-8f5a-24e126827269');
    expect(answer.data[0]!.pn).toMatch(/^[A-Z]{2}\d+[A-Z]\d?$/);
  });
});

describe('the report’s references with bibliographic data', () => {
  it('shows number and link, the English title, assignees and dates, and says which reference has no record', () => {
    const markdown = report({
      bibliography: kept('p011BasicPatentDataSimpleBibliography', [record('CN112345678A')]),
    });
    expect(markdown).toContain(
      '| D1 | [CN112345678A](https://worldwide.espacenet.com/patent/search?q=pn%3DCN112345678A) | Self-cleaning coating CN112345678A | Kestrel Photonics Inc.; Halvorsen Energy Systems AS | 2019-06-15 | 2018-03-01 | — | — | X |',
    );
    expect(markdown).toContain('### D1 · CN112345678A · Self-cleaning coating CN112345678A');
    expect(markdown).toMatch(/priority 2017-09-02 · category X/);
    // D2 has no record: its id and the comparison text, and a line that says so.
    expect(markdown).toMatch(
      /\| D2 \| \[US2019012345A1\]\([^)]+\) \| Comparison text of US2019012345A1 \| — \| — \| — \| — \| — \|/,
    );
    expect(markdown).toContain('The platform has no bibliographic record of D2 (US2019012345A1)');
  });

  it('says the data is missing and why when the step failed', () => {
    const markdown = report(
      {},
      {
        [skippedStepsKey]: {
          bibliography: { kind: 'forbidden', message: 'no permission for group Patent Basic Data', at: 1 },
        },
      },
    );
    expect(markdown).toContain(
      '**Bibliographic data is missing:** the bibliographic call (p011) failed: no permission for group Patent Basic Data. So the table shows the platform’s patent ids, and its comparison text in place of titles; the rest of the check is complete.',
    );
  });

  it('says it was not asked for with "bibliography": false', () => {
    expect(report({}, {}, { bibliography: false })).toContain(
      'Bibliographic data was not asked for (`bibliography: false`)',
    );
  });
});

describe('the report’s references with legal status and family (p041, p014)', () => {
  const statuses = kept('p041BasicPatentDataSimpleLegalStatus', [
    { pn: 'CN112345678A', patent_id: 'id-CN112345678A', simple_legal_status: ['Active'] },
    { pn: 'US2019012345A1', patent_id: 'id-US2019012345A1', simple_legal_status: ['Inactive'] },
  ]);
  const families = kept('p014BasicPatentDataPatentFamily', [
    {
      pn: 'CN112345678A',
      patent_id: 'id-CN112345678A',
      patent_family: {
        simple_family: [
          { country: 'CN', doc_number: '112345678', kind: 'A' },
          { country: 'US', doc_number: '11234567', kind: 'B2' },
          { country: 'EP', doc_number: '3456789', kind: 'A1' },
        ],
      },
    },
  ]);

  it('shows each reference’s status and family in the table and its detail, and says whose family is not known', () => {
    const markdown = report({ 'legal-status': statuses, family: families });
    expect(markdown).toMatch(/\| D1 \| \[CN112345678A\][^\n]*\| Active \| 3 members: CN, US, EP \| X \|/);
    expect(markdown).toMatch(/\| D2 \| \[US2019012345A1\][^\n]*\| Inactive \| — \| X \|/);
    expect(markdown).toMatch(/legal status Active · family of 3 members: CN, US, EP · category X/);
    expect(markdown).not.toContain('Legal status was not');
    expect(markdown).not.toContain('Family data was not');
  });

  it('states the gap when a call failed, and when the data was not asked for', () => {
    const failed = report(
      { 'legal-status': statuses },
      {
        [skippedStepsKey]: {
          family: { kind: 'forbidden', message: 'no permission for group Patent Basic Data', at: 1 },
        },
      },
    );
    expect(failed).toContain(
      '**Family data is missing:** the patent-family (p014) call failed: no permission for group Patent Basic Data. The rest of the search is complete.',
    );
    expect(failed).toMatch(/\| Active \| — \| X \|/);
    expect(report({}, {}, { legalData: false })).toContain(
      'Legal status was not asked for (`legalData: false`).',
    );
  });

  it('puts them in the batch’s detail rows', () => {
    const findings = noveltyCheck.findings!({
      steps: {
        features: kept('ai35-4FeatureExtract', features),
        'agent-result': kept('ai35-8NoveltySearchAgentResult', agent),
        'legal-status': statuses,
        family: families,
      },
      input: { ...input, lang: 'en' },
      selections: { features: ['f1', 'f2'] },
    } as Parameters<NonNullable<typeof noveltyCheck.findings>>[0]);
    expect(findings.detail?.map((row) => [row['Legal status'], row['Family']])).toEqual([
      ['Active', '3 members: CN, US, EP'],
      ['Inactive', ''],
    ]);
  });
});
