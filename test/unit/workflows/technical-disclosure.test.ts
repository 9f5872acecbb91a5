import { describe, expect, it } from 'vitest';
import {
  disclosurePolls,
  technicalDisclosure,
} from '../../../shared/workflows/technical-disclosure/workflow';
import { contextFor, decideOf, inputProblems, kept, reportOf, requestOf, stepNamed } from './fixtures';

const IDEA = `# Heat pump dryer with condensate recovery

A domestic tumble dryer uses a CO2 heat pump. The condensate is collected and used to pre-cool the refrigerant.
This lowers energy use by 20 percent compared with resistive dryers.`;

/** ai32-1's answer, as the platform gives it (status as a string). */
const extraction = {
  status: '1',
  tech_problem: 'The invention aims to reduce the energy use of tumble dryers.',
  background: 'Resistive dryers waste heat.',
  mechanism: 'Heat pump technology field',
  outcome: 'Energy use falls by 20 percent.',
  embodiment: 'Embodiment 1:\nA CO2 heat pump.\n# Condensate pre-cools the refrigerant.',
  others: '',
  unidentified: '',
  application: ['Household appliances'],
  subject_improvement: ['heat pump', 'condensate'],
};

describe('technical-disclosure input', () => {
  it('defaults the template language to en', () => {
    expect(technicalDisclosure.input.parse({ text: 'An idea.' })).toEqual({
      text: 'An idea.',
      language: 'en',
    });
  });

  it('refuses an empty idea, an idea over 5000 words and an unknown language', () => {
    expect(inputProblems(technicalDisclosure, { text: '' })).toEqual([
      'text: text: the technical idea is empty',
    ]);
    expect(inputProblems(technicalDisclosure, { text: 'word '.repeat(5001) })).toEqual([
      'text: text: at most 5000 words',
    ]);
    expect(inputProblems(technicalDisclosure, { text: 'x', language: 'fr' })).toEqual([
      'language: language: must be "cn" or "en"',
    ]);
  });

  it('reads a Markdown idea with its heading as the title', () => {
    expect(technicalDisclosure.fromText?.(IDEA, 'dryer.md')).toEqual({
      text: IDEA,
      title: 'Heat pump dryer with condensate recovery',
    });
  });
});

describe('technical-disclosure steps', () => {
  it('extracts the key content: status "1" goes on, "0" fails', () => {
    const ctx = contextFor(technicalDisclosure, { text: IDEA });
    expect(requestOf(technicalDisclosure, 'extract', ctx)).toEqual({ tech_solution: IDEA });
    expect(decideOf(technicalDisclosure, 'extract', extraction, ctx)).toEqual({ type: 'next' });
    expect(decideOf(technicalDisclosure, 'extract', { ...extraction, status: 1 }, ctx)).toEqual({
      type: 'next',
    });
    expect(decideOf(technicalDisclosure, 'extract', { status: '0' }, ctx)).toMatchObject({
      type: 'fail',
      message: /could not extract/,
    });
    expect(decideOf(technicalDisclosure, 'extract', { status: '5' }, ctx)).toMatchObject({
      type: 'fail',
      message: /unknown status "5"/,
    });
  });

  it('generates from the extraction echoed back with the idea, and keeps the job id', () => {
    const ctx = contextFor(
      technicalDisclosure,
      { text: IDEA, language: 'cn' },
      { outputs: { extract: kept('ai32-1PatentDisclosureTechMeans', { ...extraction, background: null }) } },
    );
    const body = requestOf(technicalDisclosure, 'generate', ctx);
    expect(body).toEqual({
      language: 'cn',
      tech_solution: IDEA,
      mechanism: 'Heat pump technology field',
      tech_problem: extraction.tech_problem,
      outcome: extraction.outcome,
      embodiment: extraction.embodiment,
      application: ['Household appliances'],
      subject_improvement: ['heat pump', 'condensate'],
    });
    expect(decideOf(technicalDisclosure, 'generate', { job_id: 'j1', status: 1 }, ctx)).toEqual({
      type: 'next',
      context: { jobId: 'j1' },
    });
    expect(decideOf(technicalDisclosure, 'generate', { job_id: 'j1', status: '2' }, ctx)).toEqual({
      type: 'next',
      context: { jobId: 'j1' },
    });
    expect(decideOf(technicalDisclosure, 'generate', { job_id: 'j1', status: 3 }, ctx)).toMatchObject({
      type: 'fail',
    });
    expect(decideOf(technicalDisclosure, 'generate', { status: 1 }, ctx)).toMatchObject({
      type: 'fail',
      message: /without a job_id/,
    });
  });

  it('polls the download until job_status 2 comes with a link', () => {
    const ctx = contextFor(technicalDisclosure, { text: IDEA }, { context: { jobId: 'j1' } });
    expect(requestOf(technicalDisclosure, 'download-link', ctx)).toEqual({ job_id: 'j1' });
    expect(decideOf(technicalDisclosure, 'download-link', { job_status: 0 }, ctx)).toEqual({ type: 'poll' });
    expect(decideOf(technicalDisclosure, 'download-link', { job_status: 1 }, ctx)).toEqual({ type: 'poll' });
    expect(decideOf(technicalDisclosure, 'download-link', { job_status: 2 }, ctx)).toEqual({ type: 'poll' });
    expect(
      decideOf(
        technicalDisclosure,
        'download-link',
        { job_status: '2', download_url: 'https://f.test/d.docx' },
        ctx,
      ),
    ).toEqual({ type: 'next', context: { downloadUrl: 'https://f.test/d.docx' } });
    expect(decideOf(technicalDisclosure, 'download-link', { job_status: 3 }, ctx)).toMatchObject({
      type: 'fail',
      message: /job_status 3/,
    });
    expect(stepNamed(technicalDisclosure, 'download-link').poll).toBe(disclosurePolls.downloadLink);
  });

  it('downloads the document and goes back for a fresh link when it expired', () => {
    const fetch = stepNamed(technicalDisclosure, 'document');
    if (fetch.kind !== 'fetch') throw new Error('not a fetch step');
    expect(fetch.refreshFrom).toBe('download-link');
    expect(
      fetch.url(
        contextFor(technicalDisclosure, { text: IDEA }, { context: { downloadUrl: 'https://f.test/d' } }),
      ),
    ).toBe('https://f.test/d');
  });
});

describe('technical-disclosure report', () => {
  const report = () =>
    reportOf(
      technicalDisclosure,
      { text: IDEA, title: 'Heat pump dryer' },
      {
        outputs: { extract: kept('ai32-1PatentDisclosureTechMeans', extraction) },
        attachments: [
          {
            key: 'reports/01JTESTJOB0000000000000000/attachments/disclosure-1a2b.docx',
            fileName: 'disclosure-1a2b.docx',
            contentType: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
          },
        ],
      },
    );

  it('leads with the attached document, then the key content section by section', () => {
    const { title, markdown } = report();
    expect(title).toBe('Technical disclosure: Heat pump dryer');
    const documentAt = markdown.indexOf('[disclosure-1a2b.docx](attachments/disclosure-1a2b.docx)');
    const contentAt = markdown.indexOf('## Key content');
    expect(documentAt).toBeGreaterThan(0);
    expect(contentAt).toBeGreaterThan(documentAt);
    expect(markdown).toContain(
      '### Objectives of the invention\n\nThe invention aims to reduce the energy use of tumble dryers.',
    );
    expect(markdown).toContain('### Mechanism\n\nHeat pump technology field');
    expect(markdown).toContain(
      'Embodiment 1:\n\nA CO2 heat pump.  \n\\# Condensate pre-cools the refrigerant.',
    );
    expect(markdown).toContain('### Subjects of improvement\n\n- heat pump\n- condensate');
    expect(markdown).not.toContain('### Others');
  });

  it('sums up the document and the mechanism', () => {
    expect(report().summary).toBe('disclosure-1a2b.docx; mechanism: Heat pump technology field');
  });
});
