// A scheduled patent count run twice by the real bin (bin/opflow.js) against the built-in sandbox:
// with OPFLOW_SANDBOX_DRIFT the second run's "changes since the previous run" shows the count grown;
// with drift off it shows nothing changed.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { childEnv, killRunningOpflows, runOpflow } from '../../e2e/local/opflow-process';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'opflow-sandbox-drift-'));
});
afterAll(() => {
  killRunningOpflows();
  rmSync(dir, { recursive: true, force: true });
});

interface Changes {
  first: boolean;
  unchanged: boolean;
  counts: { name: string; before?: number; now: number; delta?: number }[];
}

/** Two runs of the schedule (trigger, then resume runs the job), in a fresh folder; their `changes`. */
async function twoRuns(name: string, drift: string | undefined): Promise<Changes[]> {
  const cwd = join(dir, name);
  mkdirSync(cwd, { recursive: true });
  writeFileSync(
    join(cwd, 'opflow.config.json'),
    JSON.stringify({
      schedules: [
        {
          name: 'counts',
          cron: '0 6 * * 1',
          workflow: 'patent-count',
          input: { query: 'TTL:(solid-state battery)' },
        },
      ],
    }),
  );
  const env = childEnv({
    OPFLOW_DB: join(cwd, 'opflow.db'),
    OPFLOW_OUT: join(cwd, 'out'),
    OPFLOW_SANDBOX_SPEED: '1000',
    ...(drift === undefined ? {} : { OPFLOW_SANDBOX_DRIFT: drift }),
  });
  const changes: Changes[] = [];
  for (let run = 0; run < 2; run++) {
    const triggered = await runOpflow(['schedules', 'trigger', 'counts'], { env, cwd });
    expect(triggered.code, triggered.stderr).toBe(0);
    const jobId = /job (\w+) queued/.exec(triggered.stdout)?.[1];
    expect(jobId, triggered.stdout).toBeDefined();
    const resumed = await runOpflow(['resume', jobId!], { env, cwd });
    expect(resumed.code, resumed.stderr).toBe(0);
    const result = JSON.parse(readFileSync(join(cwd, 'out', jobId!, 'result.json'), 'utf8'));
    changes.push(result.changes as Changes);
  }
  return changes;
}

describe("OPFLOW_SANDBOX_DRIFT and a schedule's changes since the previous run", () => {
  it('shows the count grown by a few with drift on', async () => {
    const [first, second] = await twoRuns('drift-on', '7');
    expect(first!.first).toBe(true);
    expect(second!.first).toBe(false);
    expect(second!.unchanged).toBe(false);
    const count = second!.counts[0]!;
    expect(count.before).toBe(first!.counts[0]!.now);
    expect(count.delta).toBeGreaterThanOrEqual(1);
    expect(count.delta).toBeLessThanOrEqual(5);
  }, 60_000);

  it('shows nothing changed with drift off', async () => {
    const [first, second] = await twoRuns('drift-off', 'off');
    expect(second!.first).toBe(false);
    expect(second!.unchanged).toBe(true);
    expect(second!.counts[0]!.now).toBe(first!.counts[0]!.now);
  }, 60_000);

  it('refuses a drift that is not a seed, naming the variable', async () => {
    const cwd = join(dir, 'bad');
    mkdirSync(cwd, { recursive: true });
    const env = childEnv({ OPFLOW_DB: join(cwd, 'opflow.db'), OPFLOW_SANDBOX_DRIFT: 'sometimes' });
    const answer = await runOpflow(['list'], { env, cwd });
    expect(answer.code).not.toBe(0);
    expect(answer.stderr).toContain("OPFLOW_SANDBOX_DRIFT: must be a whole-number seed or 'off'");
  });
});
