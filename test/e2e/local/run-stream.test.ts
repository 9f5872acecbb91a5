// `opflow run llm-chat --stream` through the real bin against the built-in sandbox: the answer comes
// on standard output piece by piece while the job runs (the sandbox streams a frame every 20 ms),
// then the usual summary; `--json` keeps standard output for JSON and refuses --stream; a run with
// standard output piped and no --stream prints no answer.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { childEnv, killRunningOpflows, runOpflow, startOpflow } from './opflow-process';

describe('opflow run --stream (built-in sandbox)', () => {
  let dir: string;
  let env: NodeJS.ProcessEnv;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'opflow-e2e-stream-'));
    env = childEnv({});
    writeFileSync(join(dir, 'question.txt'), 'What limits solid-state battery separators?');
  });
  afterAll(() => {
    killRunningOpflows();
    rmSync(dir, { recursive: true, force: true });
  });

  it('prints the answer as it arrives, then the summary', async () => {
    const run = startOpflow(['run', 'llm-chat', 'question.txt', '--stream', '--fresh'], { env, cwd: dir });
    const arrivals: { at: number; text: string }[] = [];
    run.child.stdout?.on('data', (chunk: Buffer) =>
      arrivals.push({ at: Date.now(), text: chunk.toString() }),
    );
    const result = await run.done;
    expect(result.code, result.stderr).toBe(0);
    const summaryAt = arrivals.findIndex((arrival) => arrival.text.includes('1 job: 1 succeeded'));
    expect(summaryAt).toBeGreaterThan(1);
    const streamed = arrivals.slice(0, summaryAt);
    // Piece by piece over time, not at once at the end.
    expect(streamed.length).toBeGreaterThan(2);
    expect(streamed.at(-1)!.at - streamed[0]!.at).toBeGreaterThan(200);
    const text = streamed.map((arrival) => arrival.text).join('');
    const jobId = /opflow-out\/([0-9A-Z]+)\/report\.html/.exec(result.stdout)?.[1];
    const answer = JSON.parse(
      readFileSync(join(dir, 'opflow-out', jobId!, 'steps', 'answer-ai50.json'), 'utf8'),
    );
    // The answer's closing line break may reach the pipe with the summary, in one chunk.
    expect(text.replace(/\n$/, '')).toBe(answer.text);
    expect(result.stdout.startsWith(`${answer.text}\n`)).toBe(true);
  }, 60_000);

  it('keeps --json for JSON, and prints no answer when standard output is not a terminal', async () => {
    const refused = await runOpflow(['run', 'llm-chat', 'question.txt', '--stream', '--json'], {
      env,
      cwd: dir,
    });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(
      '--stream prints the answer as text; --json keeps standard output for JSON',
    );
    const piped = await runOpflow(['run', 'llm-chat', 'question.txt', '--fresh', '--json'], {
      env,
      cwd: dir,
    });
    expect(piped.code, piped.stderr).toBe(0);
    expect(JSON.parse(piped.stdout).jobs[0].status).toBe('SUCCEEDED');
    const plain = await runOpflow(['run', 'llm-chat', 'question.txt', '--fresh'], { env, cwd: dir });
    expect(plain.stdout.startsWith('1 job: 1 succeeded')).toBe(true);
    const other = await runOpflow(['run', 'patent-count', 'question.txt', '--stream'], { env, cwd: dir });
    expect(other.stderr).toContain(
      '--stream: patent-count streams no answer (llm-chat and encyclopedia-qa do)',
    );
  }, 90_000);
});
