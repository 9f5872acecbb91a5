/**
 * An FTO search through the real bin against an upstream of the test's own that records every
 * request: the form's front matter (docket, inventors, business unit, dates) never reaches it; the
 * technical text goes as plain text; the markets and legal statuses go as ai66-1's `country` and
 * `legal_status`, including markets a form states when the config maps that label on purpose.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RecordedBin, startRecordedBin } from '../../support/recorded-bin';

const form = `# Invention Disclosure Form

**Docket:** FTO-2026-0412
**Inventor(s):** Mirabel Ashcombe, Tobias Fennimore
**Business unit:** Consumer Drones
**Priority date:** 2026-02-14
**Target markets:** US, EP

## Product description

A drone battery latch with a **spring-loaded pawl** that engages a notch in the battery housing.
A release lever disengages the pawl with one hand, and a hall sensor tells the flight controller
when the latch is closed.
`;

const secrets = [
  'FTO-2026-0412',
  'Ashcombe',
  'Fennimore',
  'Consumer Drones',
  '2026-02-14',
  '20260214',
  'Inventor',
  'Business unit',
  'Target markets',
];

describe('fto: what leaves opflow', () => {
  let world: RecordedBin;
  const submits = () => world.requestsTo('/ai/fto/submit');

  beforeAll(async () => {
    world = await startRecordedBin('fto', 'sk-test-fto-upstream-9d1e');
    mkdirSync(join(world.dir, 'forms'));
    writeFileSync(join(world.dir, 'forms', 'latch.md'), form);
  });
  afterAll(async () => {
    await world?.close();
  });

  it('sends the plain technical text, the markets and the legal statuses, and no front-matter field', async () => {
    writeFileSync(
      join(world.dir, 'opflow.config.json'),
      JSON.stringify({
        disclosureForm: { labels: { 'Target markets': 'markets' }, inputs: { markets: 'markets' } },
      }),
    );
    const run = await world.opflow('run', 'fto', 'forms', '--json');
    expect(run.code, run.stderr).toBe(0);
    const jobs: { label: string; status: string }[] = JSON.parse(run.stdout).jobs;
    expect(jobs.map((job) => [job.label, job.status])).toEqual([['FTO-2026-0412 · latch.md', 'SUCCEEDED']]);

    const everything = world.upstream.requests
      .map((request) => `${request.path}\n${request.body}`)
      .join('\n');
    for (const secret of secrets) expect(everything, secret).not.toContain(secret);
    expect(submits()).toHaveLength(1);
    const body = JSON.parse(submits()[0]!.body);
    expect(body.input).toContain('A drone battery latch with a spring-loaded pawl that engages a notch');
    expect(body.input).not.toMatch(/\*\*/);
    expect(body.country).toEqual(['US', 'EP']);
    expect(body.legal_status).toEqual([1, 2]);
    // The calls of the whole workflow reached the upstream, in order.
    const paths = [...new Set(world.upstream.requests.map((request) => request.path.split('?')[0]))];
    expect(paths).toEqual([
      '/ai/fto/submit',
      '/ai/fto/feature/extract',
      '/ai/fto/feature/confirm',
      '/ai/fto/search/agent',
      '/ai/fto/search/agent/result',
      '/basic-patent-data/simple-legal-status',
      '/basic-patent-data/patent-family',
      '/ai/fto/report/create',
      '/ai/fto/report/get',
    ]);
  }, 120_000);

  it('keeps the markets back too when the config does not map them', async () => {
    rmSync(join(world.dir, 'opflow.config.json'));
    const before = submits().length;
    const run = await world.opflow('run', 'fto', 'forms', '--json', '--fresh');
    expect(run.code, run.stderr).toBe(0);
    const body = JSON.parse(submits()[before]!.body);
    expect(body.country).toBeUndefined();
    expect(JSON.stringify(body)).not.toContain('Target markets');
  }, 120_000);
});
