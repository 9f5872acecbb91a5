// Items of a batch that failed on their deadline: `opflow status` says what helps (a retry or the
// batch's redrive with --deadline), and `opflow batch <id> --redrive --deadline 10m` makes them
// succeed, as the same jobs (their first run kept). Through the real bin/opflow.js.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { childEnv, runOpflow } from './opflow-process';

const dir = mkdtempSync(join(tmpdir(), 'opflow-redrive-deadline-'));
writeFileSync(
  join(dir, 'm.jsonl'),
  `${JSON.stringify({ id: 'a', text: 'A hinge that folds twice and locks.' })}\n${JSON.stringify({ id: 'b', text: 'A lamp that dims itself at dusk.' })}\n`,
);
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const env = () => childEnv({ OPFLOW_DB: join(dir, 'opflow.db'), OPFLOW_OUT: join(dir, 'out') });
const opflow = (...args: string[]) => runOpflow(args, { env: env(), cwd: dir });

interface JobJson {
  id: string;
  status: string;
  runs?: unknown[];
}

describe('redrive of items failed on their deadline', () => {
  it('--redrive --deadline runs them again with a new deadline', async () => {
    const ingest = await opflow(
      'ingest',
      'm.jsonl',
      '--workflow',
      'technical-disclosure',
      '--deadline',
      '2s',
      '--batch',
      'dl',
    );
    expect(ingest.code, ingest.stderr).toBe(1);
    const listed = JSON.parse((await opflow('list', '--batch', 'dl', '--json')).stdout) as JobJson[];
    expect(listed.map((job) => job.status)).toEqual(['FAILED', 'FAILED']);
    const status = await opflow('status', listed[0]!.id);
    expect(status.stdout).toContain('kind deadline');
    expect(status.stdout).toContain('opflow batch dl --redrive --deadline');
    expect(status.stdout).not.toContain('a retry would not help');

    const misuse = await opflow('batch', 'dl', '--deadline', '10m');
    expect(misuse.code).toBe(2);
    expect(misuse.stderr).toContain('--deadline goes with --redrive');

    const redrive = await opflow('batch', 'dl', '--redrive', '--deadline', '10m', '--json');
    expect(redrive.code, redrive.stderr).toBe(0);
    expect(JSON.parse(redrive.stdout)).toMatchObject({
      status: 'FINISHED',
      totals: { succeeded: 2, failed: 0 },
    });
    for (const { id } of listed) {
      const job = JSON.parse((await opflow('status', id, '--json')).stdout) as JobJson;
      expect(job.status).toBe('SUCCEEDED');
      expect(job.runs).toHaveLength(1);
    }
  }, 120_000);
});
