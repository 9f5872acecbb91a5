// Every command's --json output carries the whole answer, errors included with their
// reasons, through the real bin. Each row runs `opflow --json <args>`, parses standard output as
// JSON (one document) and checks the exit code and, for a failure, that the reason is in the JSON.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { childEnv, runOpflow, startOpflow } from './opflow-process';

interface Row {
  args: string[];
  exit: number;
  /** For a failure: what the JSON error's message must say. */
  reason?: RegExp;
  /** A check of the answer. */
  check?: (answer: unknown) => void;
  stdin?: string;
}

const rows: Row[] = [
  {
    args: ['workflows'],
    exit: 0,
    check: (a) => expect((a as { workflows: unknown[] }).workflows.length).toBeGreaterThanOrEqual(8),
  },
  {
    args: ['workflows', 'novelty-check'],
    exit: 0,
    check: (a) => expect(a).toMatchObject({ name: 'novelty-check' }),
  },
  { args: ['workflows', 'nope'], exit: 2, reason: /nope/ },
  {
    args: ['operations', 'ai35-1'],
    exit: 0,
    check: (a) => expect(a).toMatchObject({ operationId: 'ai35-1NoveltySearchSubmit' }),
  },
  { args: ['list'], exit: 0, check: (a) => expect(Array.isArray(a)).toBe(true) },
  { args: ['list', '--workflow', 'nope'], exit: 2, reason: /nope/ },
  { args: ['status', 'NOPE'], exit: 4, reason: /no job NOPE/ },
  { args: ['report', 'NOPE'], exit: 4, reason: /no job NOPE/ },
  { args: ['cancel', 'NOPE'], exit: 4, reason: /no job NOPE/ },
  { args: ['retry', 'NOPE'], exit: 4, reason: /no job NOPE/ },
  { args: ['resume', 'NOPE'], exit: 4, reason: /no job NOPE/ },
  { args: ['resume'], exit: 0, check: (a) => expect(a).toMatchObject({ jobs: [], exitCode: 0 }) },
  { args: ['batch'], exit: 0, check: (a) => expect(a).toMatchObject({ batches: [] }) },
  { args: ['schedules'], exit: 0, check: (a) => expect(a).toMatchObject({ schedules: [] }) },
  { args: ['callbacks'], exit: 2, reason: /subcommand/ },
  { args: ['run', '--nope', 'x'], exit: 2, reason: /unknown option '--nope'/ },
  { args: ['run', 'nope-workflow', 'x.md'], exit: 2, reason: /nope-workflow/ },
  // A refused input: the reason is in the JSON, not only on standard error.
  { args: ['run', 'find-solution', 'refused.json'], exit: 2, reason: /problem/ },
];

describe('--json on every command', () => {
  let dir: string;
  let env: NodeJS.ProcessEnv;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'opflow-e2e-json-'));
    writeFileSync(join(dir, 'refused.json'), JSON.stringify({ problem: '' }));
    env = childEnv({ OPFLOW_DB: join(dir, 'state', 'opflow.db'), OPFLOW_OUT: join(dir, 'out') });
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  for (const row of rows) {
    it(`opflow --json ${row.args.join(' ')}`, { timeout: 60_000 }, async () => {
      const result = await runOpflow(['--json', ...row.args], { env, cwd: dir, stdin: row.stdin });
      expect(result.code, result.stderr).toBe(row.exit);
      let answer: unknown;
      expect(() => {
        answer = JSON.parse(result.stdout);
      }, result.stdout).not.toThrow();
      if (row.reason) {
        const text = JSON.stringify(answer);
        expect(text).toMatch(row.reason);
      }
      row.check?.(answer);
      expect(result.stderr).not.toMatch(/^\s+at .+:\d+:\d+\)?$/m);
    });
  }

  it('opflow --json sandbox: one JSON line with where it listens, then serves until Ctrl-C', {
    timeout: 60_000,
  }, async () => {
    const child = startOpflow(['--json', 'sandbox', '--port', '0', '--speed', '50'], { env, cwd: dir });
    const first = await new Promise<string>((resolve, reject) => {
      let text = '';
      child.child.stdout?.on('data', (chunk: Buffer) => {
        text += chunk.toString('utf8');
        if (text.includes('\n')) resolve(text.slice(0, text.indexOf('\n')));
      });
      child.child.on('exit', () => reject(new Error(`exited before a line: ${child.stderrSoFar()}`)));
    });
    const answer = JSON.parse(first) as { url: string; apiKey: string; health: string; speed: number };
    expect(answer).toMatchObject({ url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/), speed: 50 });
    const health = await fetch(answer.health);
    expect(health.status).toBe(200);
    child.child.kill('SIGINT');
    const done = await child.done;
    expect(done.code, done.stderr).toBe(0);
  });
});
