/**
 * A novelty check's Word report end to end: `opflow run novelty-check` through the real bin, then
 * report.docx from the job's folder read by mammoth (the `docx` package wrote it), checked against
 * the job's result.json: title, conclusion, the features × references table cell by cell (each
 * feature's text, each reference's mark and score) and the references table's publication numbers.
 * Once on the built-in sandbox (the Word file says so) and once with a key against an upstream of
 * the test's own that records what it receives (no sandbox mark), on the same database.
 */
import { copyFileSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectNoveltyWordReport } from '../../support/deliverable-readers';
import { type RecordedBin, startRecordedBin } from '../../support/recorded-bin';
import { REAL_PROCESS_TIMEOUT_MS } from '../../support/timeouts';
import { repoRoot } from './opflow-process';

const disclosure = 'hot-swap-battery-inspection-drone.md';

describe('a novelty check’s report.docx, read by another reader', {
  timeout: REAL_PROCESS_TIMEOUT_MS,
}, () => {
  let world: RecordedBin;
  beforeAll(async () => {
    world = await startRecordedBin('novelty-docx', 'sk-test-docx-upstream-51c2', 300);
    mkdirSync(join(world.dir, 'inputs'));
    copyFileSync(
      join(repoRoot, 'examples', 'disclosures', disclosure),
      join(world.dir, 'inputs', disclosure),
    );
  });
  afterAll(async () => {
    await world?.close();
  });

  /** Runs the check with `run`; the job's result.json and the Word report checked against it. */
  async function checkedReport(run: RecordedBin['opflow']) {
    const ran = await run('run', 'novelty-check', join('inputs', disclosure), '--fresh', '--json');
    expect(ran.code, ran.stderr).toBe(0);
    const job = JSON.parse(ran.stdout).jobs[0] as { id: string; status: string };
    expect(job.status).toBe('SUCCEEDED');
    const result = JSON.parse(readFileSync(world.out(job.id, 'result.json'), 'utf8'));
    const word = await expectNoveltyWordReport(readFileSync(world.out(job.id, 'report.docx')), result);
    // The references table: one row per cited reference (D1...), with its publication number.
    const references = word.tables.find(
      (table) => table[0]?.[0] === 'Ref' && table[0]?.[1] === 'Publication',
    );
    expect(references, 'the references table').toBeDefined();
    const cited = result.steps['agent-result'].final_result as { pn?: string; patent_id?: string }[];
    expect(references!.slice(1).map((row) => row[0])).toEqual(cited.map((_, index) => `D${index + 1}`));
    for (const [index, reference] of cited.entries())
      expect(references![index + 1]?.[1]).toBe(reference.pn ?? reference.patent_id);
    return { job, result, word };
  }

  it('on the built-in sandbox: the Word report says so and holds the claim chart the data gives', async () => {
    const { result, word } = await checkedReport(world.sandbox);
    expect(result.job.upstream).toEqual({ kind: 'sandbox' });
    // The notice opens the document, before the conclusion.
    expect(word.text.indexOf('Sandbox data: not real publications.')).toBeLessThan(
      word.text.indexOf('Conclusion'),
    );
  });

  it('with a key against an upstream of its own: the same reading, no sandbox mark', async () => {
    const before = world.upstream.requests.length;
    const { result, word } = await checkedReport(world.opflow);
    expect(world.upstream.requests.length).toBeGreaterThan(before);
    expect(result.job.upstream).toMatchObject({ kind: 'platform', baseUrl: world.upstream.url });
    expect(word.html).not.toMatch(/sandbox/i);
  });
});
