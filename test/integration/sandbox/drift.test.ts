/**
 * Drift: with a drift seed the sandbox's answers move between runs of the same request (a count
 * grows by a few, a novelty search gains or loses a document, an answer's wording changes); the first
 * run answers what a sandbox without drift answers, and the same seed and run number answer the same.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { patentCountFor } from '../../../shared/sandbox';
import { startTestSandbox, type TestSandbox } from './sandbox-harness';

const QUERY = 'TACD:(solid-state battery)';
const INPUT =
  'A battery cell with a solid ceramic electrolyte. A pressure plate keeps the lithium anode in contact with the electrolyte. The plate is sprung so the contact holds as the anode swells.';
const STEP_MS = 10 * 60_000;

const opened: TestSandbox[] = [];
const start = async (options: Parameters<typeof startTestSandbox>[0]) => {
  const harness = await startTestSandbox(options);
  opened.push(harness);
  return harness;
};
afterEach(async () => {
  await Promise.all(opened.splice(0).map((harness) => harness.close()));
});

const counts = async (harness: TestSandbox, runs: number, collapse_type = 'ALL') => {
  const answers: number[] = [];
  for (let run = 0; run < runs; run++) {
    const data = await harness.ok('p001', { query_text: QUERY, collapse_type });
    answers.push(data.total_search_result_count);
  }
  return answers;
};

async function noveltyDocuments(harness: TestSandbox): Promise<string[]> {
  const { task_id } = await harness.ok('ai35-1', { input: INPUT, lang: 'en' });
  harness.advance(STEP_MS);
  await harness.ok('ai35-3', { task_id });
  harness.advance(STEP_MS);
  await harness.ok('ai35-5', { task_id });
  harness.advance(STEP_MS);
  const { elements } = await harness.ok('ai35-6', { task_id });
  await harness.ok('ai35-7', { task_id, elements });
  harness.advance(STEP_MS);
  const { task_status, final_result } = await harness.ok('ai35-8', { task_id });
  expect(task_status).toBe('success');
  return final_result.map((doc: { patent_id: string }) => doc.patent_id);
}

describe('sandbox drift', () => {
  it('grows a patent count by 1 to 5 per run, from the undrifted count', async () => {
    const answers = await counts(await start({ seed: 1, drift: 7 }), 6);
    expect(answers[0]).toBe(patentCountFor(QUERY));
    for (let run = 1; run < answers.length; run++) {
      const growth = answers[run]! - answers[run - 1]!;
      expect(growth).toBeGreaterThanOrEqual(1);
      expect(growth).toBeLessThanOrEqual(5);
    }
    expect(answers[5]).toBe(patentCountFor(QUERY, 'ALL', { seed: 7, run: 5 }));
  });

  it('answers the same with the same seed and run number, and otherwise with another seed', async () => {
    const a = await counts(await start({ seed: 1, drift: 7 }), 8);
    const b = await counts(await start({ seed: 1, drift: 7 }), 8);
    const c = await counts(await start({ seed: 1, drift: 8 }), 8);
    expect(b).toEqual(a);
    expect(c[0]).toBe(a[0]);
    expect(c).not.toEqual(a);
  });

  it('changes nothing without drift', async () => {
    const answers = await counts(await start({ seed: 1 }), 4);
    expect(new Set(answers)).toEqual(new Set([patentCountFor(QUERY)]));
  });

  it('gains or loses one novelty document per run, keeping 5 to 8', async () => {
    const drifting = await start({ seed: 1, drift: 3 });
    const runs: string[][] = [];
    for (let run = 0; run < 4; run++) runs.push(await noveltyDocuments(drifting));
    expect(runs[0]).toEqual(await noveltyDocuments(await start({ seed: 1 })));
    for (let run = 1; run < runs.length; run++) {
      const before = new Set(runs[run - 1]);
      const now = new Set(runs[run]);
      const added = [...now].filter((id) => !before.has(id));
      const removed = [...before].filter((id) => !now.has(id));
      expect(added.length + removed.length).toBe(1);
      expect(now.size).toBeGreaterThanOrEqual(5);
      expect(now.size).toBeLessThanOrEqual(8);
    }
  });

  it("moves a chat answer's wording between runs", async () => {
    const harness = await start({ seed: 1, drift: 5 });
    const ask = async () =>
      (await harness.ok('ai07', { prompt: 'How do solid-state batteries fail?', stream: false })).output
        .content;
    const first = await ask();
    const second = await ask();
    expect(second).not.toBe(first);
    const undrifted = await start({ seed: 1 });
    expect(
      (await undrifted.ok('ai07', { prompt: 'How do solid-state batteries fail?', stream: false })).output
        .content,
    ).toBe(first);
  });

  it('keeps the run numbers beside the state file (hashed), so the next sandbox goes on', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'opflow-drift-'));
    try {
      const stateFile = join(dir, 'sandbox-state.json');
      const first = await start({ seed: 1, drift: 7, stateFile });
      const before = await counts(first, 2);
      await first.close();
      opened.splice(opened.indexOf(first), 1);
      rmSync(stateFile, { force: true });
      const driftFile = join(dir, 'sandbox-state.drift.json');
      expect(existsSync(driftFile)).toBe(true);
      expect(readFileSync(driftFile, 'utf8')).not.toContain('battery');
      const after = await counts(await start({ seed: 1, drift: 7, stateFile }), 1);
      expect(after[0]).toBe(patentCountFor(QUERY, 'ALL', { seed: 7, run: 2 }));
      expect(after[0]).toBeGreaterThan(before[1]!);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses a drift seed that is not a whole number', async () => {
    await expect(start({ drift: 1.5 })).rejects.toThrow(/drift/);
  });
});
