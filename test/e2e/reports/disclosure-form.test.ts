/**
 * A disclosure form's front matter stays with the job, never upstream. Through the real bin:
 * `opflow run` of Markdown forms (`**Label:** value` lines, YAML front matter) against an upstream
 * of the test's own that records every request, and `opflow ingest` of a .docx form with a
 * label/value table (and `opflow run` of that .docx and of a PDF), on the same upstream and on the
 * built-in sandbox: no docket id, inventor name,
 * business unit or date reaches the upstream, the technical text arrives as plain text, and the
 * docket id is in the job's label, its report, result.json, summary.csv and the download's folder names.
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { Document, Packer, Paragraph, Table, TableCell, TableRow } from 'docx';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RecordedBin, startRecordedBin } from '../../support/recorded-bin';

const labelledForm = `# Invention Disclosure Form

**Docket:** IDF-2026-0777
**Title:** Self-heating battery pack for cold-weather drones
**Inventor(s):** Jane Quillfeather, Rupert Zanzibar
**Business unit:** Aerial Robotics
**Submission date:** 2026-03-02
**Priority date:** 14 February 2026
Confidentiality: internal only

## Technical description

A drone battery pack heats its **lithium cells** with a *thin-film heater* driven from the pack
itself until the cells reach 10 °C, then lets the [flight controller](https://example.com/fc) draw
full current. A \`PTC\` element limits the heater's temperature.
`;

const yamlForm = `---
docket: IDF-2026-0778
inventors:
  - name: Octavia Brindlewood
  - Percival Oakhurst
business_unit: Marine Sensors
filing date: 2026-01-20
---
A buoy measures wave height with an inertial sensor and sends a summary every ten minutes over a
low-power radio; a solar cell and a supercapacitor keep it running through winter.
`;

/**
 * Names and fields that must never leave opflow. (The priority date, else the filing date, does:
 * mapped on purpose by default, it is the search's end.)
 */
const secrets = [
  'IDF-2026-0777',
  'IDF-2026-0778',
  'IDF-2026-0779',
  'Quillfeather',
  'Zanzibar',
  'Brindlewood',
  'Oakhurst',
  'Thistlewaite',
  'Aerial Robotics',
  'Marine Sensors',
  'Ground Vehicles',
  'internal only',
  '2026-03-02',
  'Business unit',
  'Inventor',
];

describe('disclosure front matter is kept out of what is sent upstream', () => {
  let world: RecordedBin;
  const sent = () => world.upstream.requests.map((request) => `${request.path}\n${request.body}`).join('\n');

  beforeAll(async () => {
    world = await startRecordedBin('form', 'sk-test-form-upstream-51c2', 300);
    mkdirSync(join(world.dir, 'forms'));
    writeFileSync(join(world.dir, 'forms', 'heated-pack.md'), labelledForm);
    writeFileSync(join(world.dir, 'forms', 'buoy.md'), yamlForm);
    const docx = await Packer.toBuffer(
      new Document({
        sections: [
          {
            children: [
              new Paragraph('Invention disclosure'),
              new Table({
                rows: [
                  ['Docket No.', 'IDF-2026-0779'],
                  ['Inventors', 'Hortense Thistlewaite'],
                  ['Business Unit', 'Ground Vehicles'],
                  ['Priority date', '2026-02-01'],
                ].map(
                  ([label, value]) =>
                    new TableRow({
                      children: [
                        new TableCell({ children: [new Paragraph(label!)] }),
                        new TableCell({ children: [new Paragraph(value!)] }),
                      ],
                    }),
                ),
              }),
              new Paragraph(
                'A rover wheel has a spring steel rim and an airless tread that stiffens under load.',
              ),
            ],
          },
        ],
      }),
    );
    mkdirSync(join(world.dir, 'docx'));
    writeFileSync(join(world.dir, 'docx', 'rover-wheel.docx'), docx);
  });
  afterAll(async () => {
    await world?.close();
  });

  it('sends only the technical text (plain) of Markdown forms, and keeps their fields with the job', async () => {
    const run = await world.opflow('run', 'novelty-check', 'forms', '--json');
    expect(run.code, run.stderr).toBe(0);
    const jobs: { id: string; label: string; status: string }[] = JSON.parse(run.stdout).jobs;
    expect(jobs.map((job) => [job.label, job.status]).sort()).toEqual([
      ['IDF-2026-0777 · heated-pack.md', 'SUCCEEDED'],
      ['IDF-2026-0778 · buoy.md', 'SUCCEEDED'],
    ]);
    const body = sent();
    for (const secret of secrets) expect(body, secret).not.toContain(secret);
    // The technical text arrived, without its Markdown marks; the form's title went as the title.
    const submits = world.upstream.requests.filter((request) => request.body.includes('thin-film heater'));
    expect(submits.length).toBeGreaterThan(0);
    expect(submits[0]!.body).toContain('heats its lithium cells with a thin-film heater');
    expect(submits[0]!.body).not.toMatch(/\*\*|\]\(https/);
    expect(body).toContain('Self-heating battery pack for cold-weather drones');
    // The priority date, mapped on purpose, bounds the search (pbd_end), and nothing else of the form.
    expect(submits[0]!.body).toContain('"pbd_end":"2026-02-14"');

    const pack = jobs.find((job) => job.label.includes('0777'))!;
    const markdown = readFileSync(world.out(pack.id, 'report.md'), 'utf8');
    expect(markdown.split('\n').slice(0, 4).join('\n')).toMatch(
      /\*\*Docket:\*\* IDF-2026-0777 · \*\*Title:\*\* Self-heating battery pack for cold-weather drones · \*\*Inventors:\*\* Jane Quillfeather, Rupert Zanzibar · \*\*Business unit:\*\* Aerial Robotics · \*\*Priority date:\*\* 2026-02-14 · \*\*Submitted:\*\* 2026-03-02 · \*\*Confidentiality:\*\* internal only/,
    );
    const result = JSON.parse(readFileSync(world.out(pack.id, 'result.json'), 'utf8'));
    expect(result.disclosure).toMatchObject({
      docket: 'IDF-2026-0777',
      inventors: ['Jane Quillfeather', 'Rupert Zanzibar'],
      priorityDate: '2026-02-14',
    });
    expect(JSON.stringify(result.input)).not.toContain('Quillfeather');
    const buoy = jobs.find((job) => job.label.includes('0778'))!;
    const status = JSON.parse((await world.opflow('status', buoy.id, '--json')).stdout);
    expect(status.metadata).toEqual({
      docket: 'IDF-2026-0778',
      inventors: ['Octavia Brindlewood', 'Percival Oakhurst'],
      businessUnit: 'Marine Sensors',
      filingDate: '2026-01-20',
    });
  }, 240_000);

  it('reads a .docx form table at ingest: fields kept, docket in summary.csv and the download folder', async () => {
    const before = world.upstream.requests.length;
    const run = await world.opflow('ingest', 'docx', '--workflow', 'novelty-check', '--batch', 'wheels');
    expect(run.code, run.stderr).toBe(0);
    expect(world.upstream.requests.length).toBeGreaterThan(before);
    const body = sent();
    for (const secret of secrets) expect(body, secret).not.toContain(secret);
    expect(body).toContain('spring steel rim');
    const rows: Record<string, string>[] = parse(
      readFileSync(world.out('batches', 'wheels', 'summary.csv'), 'utf8'),
      {
        columns: true,
      },
    );
    expect(rows).toMatchObject([{ id: 'rover-wheel.docx', docket: 'IDF-2026-0779', status: 'SUCCEEDED' }]);
    expect(rows[0]!.title).toBe('IDF-2026-0779 · rover-wheel.docx');
    const download = await world.opflow('batch', 'wheels', '--download', 'wheels-download');
    expect(download.code, download.stderr).toBe(0);
    const folders = readdirSync(join(world.dir, 'wheels-download', 'reports'));
    expect(folders).toEqual([expect.stringMatching(/^IDF-2026-0779_[0-9A-Z]{26}$/)]);
    const index = readFileSync(join(world.dir, 'wheels-download', 'index.html'), 'utf8');
    expect(index).toContain(`href="reports/${folders[0]}/report.html"`);
    expect(index).toContain('<td>IDF-2026-0779</td>');
  }, 240_000);

  it('does the same on the built-in sandbox (the form is read before any upstream is chosen)', async () => {
    const run = await world.sandbox('ingest', 'docx', '--workflow', 'novelty-check', '--batch', 'wheels-sb');
    expect(run.code, run.stderr).toBe(0);
    const rows: Record<string, string>[] = parse(
      readFileSync(world.out('batches', 'wheels-sb', 'summary.csv'), 'utf8'),
      {
        columns: true,
      },
    );
    expect(rows).toMatchObject([{ docket: 'IDF-2026-0779', upstream: 'sandbox (simulated data)' }]);
    const result = JSON.parse(readFileSync(world.out(rows[0]!.job_id!, 'result.json'), 'utf8'));
    expect(result.disclosure.inventors).toEqual(['Hortense Thistlewaite']);
    expect(result.input.text).not.toMatch(/Thistlewaite|IDF-2026-0779|Ground Vehicles/);
  }, 240_000);

  it('opflow run reads the same .docx form, and a PDF, as opflow ingest does', async () => {
    const pdf = await PDFDocument.create();
    const font = await pdf.embedFont(StandardFonts.Helvetica);
    pdf.addPage().drawText('A kite sail whose battens fold along a hinge line when the wind gusts.', {
      x: 40,
      y: 700,
      size: 11,
      font,
    });
    writeFileSync(join(world.dir, 'kite.pdf'), await pdf.save());
    const before = world.upstream.requests.length;
    const run = await world.opflow(
      'run',
      'novelty-check',
      'docx/rover-wheel.docx',
      'kite.pdf',
      '--json',
      '--fresh',
    );
    expect(run.code, run.stderr).toBe(0);
    const jobs: { id: string; label: string; status: string }[] = JSON.parse(run.stdout).jobs;
    expect(jobs.map((job) => [job.label, job.status])).toEqual([
      ['IDF-2026-0779 · rover-wheel.docx', 'SUCCEEDED'],
      ['kite.pdf', 'SUCCEEDED'],
    ]);
    const body = world.upstream.requests
      .slice(before)
      .map((request) => request.body)
      .join('\n');
    for (const secret of secrets) expect(body, secret).not.toContain(secret);
    expect(body).toContain('spring steel rim');
    expect(body).toContain('battens fold along a hinge line');
    const status = JSON.parse((await world.opflow('status', jobs[0]!.id, '--json')).stdout);
    expect(status.metadata).toMatchObject({ docket: 'IDF-2026-0779', inventors: ['Hortense Thistlewaite'] });
  }, 240_000);
});
