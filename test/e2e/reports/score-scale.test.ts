/**
 * One score scale in the novelty report, through the real bin against the built-in sandbox: every
 * score is 0–100 (the cells' similarity and the references' public score, which the platform gives
 * as 0–1), summary.csv's closest_score too, and where the platform's count of features matched
 * differs from opflow's, both are shown with why.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workflows } from '../../../shared/workflows';

const workflowExamples = Object.fromEntries(
  [...workflows].map(([name, workflow]) => [name, workflow.example]),
);

import { childEnv, killRunningOpflows, runOpflow } from '../local/opflow-process';

describe('one score scale in the novelty report', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'opflow-e2e-scale-'));
  });
  afterAll(() => {
    killRunningOpflows();
    rmSync(dir, { recursive: true, force: true });
  });

  it('shows every score on 0–100 and both counts of features matched where they differ', async () => {
    const env = childEnv({
      OPFLOW_SANDBOX_SPEED: '300',
      OPFLOW_DB: join(dir, 'jobs.db'),
      OPFLOW_OUT: join(dir, 'out'),
    });
    writeFileSync(
      join(dir, 'm.jsonl'),
      `${JSON.stringify({ id: 'a', ...workflowExamples['novelty-check'] })}\n`,
    );
    const run = await runOpflow(['ingest', 'm.jsonl', '--workflow', 'novelty-check', '--batch', 'scale'], {
      env,
      cwd: dir,
    });
    expect(run.code, run.stderr).toBe(0);
    const [row] = parse(readFileSync(join(dir, 'out', 'batches', 'scale', 'summary.csv'), 'utf8'), {
      columns: true,
    }) as Record<string, string>[];
    expect(Number(row!.closest_score)).toBeGreaterThan(1);
    expect(Number(row!.closest_score)).toBeLessThanOrEqual(100);
    const markdown = readFileSync(join(dir, 'out', row!.job_id!, 'report.md'), 'utf8');
    const references = markdown.split('## References')[1]!.split('\n## ')[0]!;
    expect(references).toContain('| Score (0–100) |');
    const scores = [...references.matchAll(/^\| D\d+ \|.*\| ([\d.]+) \|$/gm)].map((match) =>
      Number(match[1]),
    );
    expect(scores.length).toBeGreaterThan(0);
    for (const value of scores) expect(value > 1 && value <= 100, String(value)).toBe(true);
    for (const match of markdown.matchAll(/public score ([\d.]+) of 100/g))
      expect(Number(match[1])).toBeGreaterThan(1);
    const disclosedRow = markdown.split('\n').find((line) => line.includes('| Features disclosed |'))!;
    if (/platform: \d+/.test(disclosedRow))
      expect(markdown).toMatch(
        /opflow counts only ● \(disclosed\); "platform" is the platform’s own count \(feature_match_num/,
      );
    expect(disclosedRow).toMatch(/\d+\/\d+/);
  }, 180_000);
});
