/**
 * An FTO search with patents named for comparison (`comparePatents`), through the real bin against
 * an upstream of the test's own that records every request (a sandbox behind it): each number is
 * sent to ai66-8 once, after the features are confirmed and before the report; ai66-6 receives them
 * as `user_added` patents beside the ones chosen; the report's patents table and claim charts show
 * them as named for comparison. A bad number is refused before any call, with the field and why.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RecordedBin, startRecordedBin } from '../../support/recorded-bin';

const product = {
  text: 'A drone battery latch with a spring-loaded pawl that engages a notch in the battery housing. A release lever disengages the pawl with one hand, and a hall sensor tells the flight controller when the latch is closed.',
  title: 'Drone battery latch',
  markets: ['US', 'EP'],
};
const named = ['CN118289111A', 'US11234567B2'];

describe('fto: patents named for comparison (ai66-8)', () => {
  let world: RecordedBin;
  const paths = () => world.upstream.requests.map((request) => request.path.split('?')[0]!);

  beforeAll(async () => {
    world = await startRecordedBin('fto-compare', 'sk-test-fto-compare-4b2c');
  });
  afterAll(async () => {
    await world?.close();
  });

  it('compares each named patent once before the report, and shows it in the claim charts', async () => {
    const file = join(world.dir, 'latch.json');
    writeFileSync(file, JSON.stringify({ ...product, comparePatents: `${named[0]}, ${named[1]}` }));
    const run = await world.opflow('run', 'fto', file, '--json');
    expect(run.code, run.stderr).toBe(0);
    const [job] = JSON.parse(run.stdout).jobs as { id: string; status: string }[];
    expect(job!.status).toBe('SUCCEEDED');

    const comparisons = world.requestsTo('/ai/fto/feature/comparison');
    expect(comparisons.map((request) => JSON.parse(request.body).pn)).toEqual(named);
    const order = paths();
    expect(order.indexOf('/ai/fto/feature/comparison')).toBeGreaterThan(
      order.indexOf('/ai/fto/feature/confirm'),
    );
    expect(order.lastIndexOf('/ai/fto/feature/comparison')).toBeLessThan(
      order.indexOf('/ai/fto/report/create'),
    );

    const [create] = world.requestsTo('/ai/fto/report/create');
    const patents = JSON.parse(create!.body).final_res as { patent_id: string; user_added?: boolean }[];
    expect(patents.filter((patent) => patent.user_added).map((patent) => patent.patent_id)).toEqual(named);
    expect(patents.length).toBeLessThanOrEqual(5);
    // The legal status is asked for the named patents too.
    const [status] = world.requestsTo('/basic-patent-data/simple-legal-status');
    for (const number of named) expect(decodeURIComponent(status!.path)).toContain(number);

    const folder = join(world.dir, 'out', job!.id);
    const markdown = readFileSync(join(folder, 'report.md'), 'utf8');
    const charts = markdown.slice(markdown.indexOf('## Claim charts'));
    for (const number of named) {
      expect(charts).toMatch(new RegExp(`### P\\d+ · ${number}`));
      const row = markdown.split('\n').find((line) => line.startsWith('| P') && line.includes(number));
      expect(row, number).toMatch(/\(named; from the scores\)/);
    }
    expect(charts).toContain('named for comparison (not found by the search)');
    expect(markdown).toMatch(/of them named for comparison\)/);
    const result = JSON.parse(readFileSync(join(folder, 'result.json'), 'utf8'));
    expect(Object.keys(result.steps)).toEqual(
      expect.arrayContaining(['compare-patent-1', 'compare-patent-2']),
    );
    expect(result.steps['compare-patent-3']).toBeUndefined();
  }, 120_000);

  it('refuses a number that is not a publication number, naming the field, before any call', async () => {
    const before = world.upstream.requests.length;
    const file = join(world.dir, 'bad.json');
    writeFileSync(file, JSON.stringify({ ...product, comparePatents: ['CN118289111A', 'latch patent'] }));
    const run = await world.opflow('run', 'fto', file, '--json', '--fresh');
    expect(run.code).not.toBe(0);
    expect(run.stderr + run.stdout).toMatch(/comparePatents: each is a publication number/);
    expect(world.upstream.requests.length).toBe(before);
  }, 120_000);
});
