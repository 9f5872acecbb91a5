/**
 * A job's cap of billed units, through the real bin against a sandbox on its own port:
 * `opflow run --max-units` stops a novelty check before its next step once its calls were billed
 * that much (FAILED, kind `cost-cap`, the figures in the message, no further call); `opflow retry`
 * refuses to go on without a higher cap, and with one goes on from the step it stopped at (no call
 * made twice). The job API shows the cap and the kind.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scaledTaskDurations } from '../../../shared/runtime/local/sandbox-launch';
import { type Sandbox, startSandbox } from '../../../shared/sandbox';
import { workflows } from '../../../shared/workflows';

const novelty = workflows.get('novelty-check')!;
const operationOf = (stepName: string) => {
  const step = novelty.steps.find((candidate) => candidate.name === stepName)!;
  return step.kind === 'fetch' ? 'download' : step.operation;
};

import { childEnv, killRunningOpflows, runOpflow } from './opflow-process';

const speed = 300;
const KEY = 'sk-opflow-cost-cap-0000000000000';

interface JobJson {
  id: string;
  status: string;
  step: string;
  maxUnits?: number;
  usage: { billedUnits: number; calls: number };
  lastError?: { kind: string; message: string };
}

describe('a job’s cost cap (--max-units)', () => {
  let sandbox: Sandbox;
  let dir: string;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'opflow-e2e-cost-cap-'));
    sandbox = await startSandbox({
      port: 0,
      keys: [{ key: KEY }],
      taskDurations: scaledTaskDurations(speed),
      defaultTaskDuration: { meanMs: 10_000 / speed, spreadMs: 5_000 / speed },
    });
    env = childEnv({
      OPFLOW_BASE_URL: sandbox.url,
      OPFLOW_API_KEY: KEY,
      OPFLOW_SANDBOX_SPEED: String(speed),
      OPFLOW_DB: join(dir, 'jobs.db'),
      OPFLOW_OUT: join(dir, 'out'),
    });
  });
  afterAll(async () => {
    killRunningOpflows();
    await sandbox?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const calls = (from: number) => sandbox.ledger.entries().slice(from);
  const status = async (id: string) => {
    const shown = await runOpflow(['status', id, '--json'], { env, cwd: dir });
    expect(shown.code, shown.stderr).toBe(0);
    const parsed = JSON.parse(shown.stdout) as { job?: JobJson } & JobJson;
    return parsed.job ?? parsed;
  };

  it('stops the job before its next step once the cap is reached; a retry goes on only with a higher cap', async () => {
    // The sandbox bills the submit (ai35-1) 5 units and each other call 1 or more: a cap of 8 is
    // reached long before the agent search (ai35-7, 30 units).
    const cap = 8;
    const file = join(dir, 'input.json');
    writeFileSync(file, JSON.stringify(novelty.example));
    const before = sandbox.ledger.entries().length;
    const run = await runOpflow(['run', 'novelty-check', file, '--max-units', String(cap), '--json'], {
      env,
      cwd: dir,
    });
    const [listed] = (JSON.parse(run.stdout) as { jobs: { id: string; status: string }[] }).jobs;
    expect(listed!.status, run.stderr).toBe('FAILED');
    const job = await status(listed!.id);
    expect(job.lastError?.kind).toBe('cost-cap');
    expect(job.usage.billedUnits).toBeGreaterThanOrEqual(cap);
    expect(job.lastError?.message).toBe(
      `cost cap reached: the job was billed ${job.usage.billedUnits} units, its maxUnits is ${cap}; it stopped before step "${job.step}" (retry it with a higher --max-units to go on from there)`,
    );
    // What the sandbox billed is what the job counted; the step it stopped before made no call.
    const first = calls(before);
    expect(first.reduce((sum, call) => sum + call.billedUnits, 0)).toBe(job.usage.billedUnits);
    expect(first.map((call) => call.operationId)).not.toContain(operationOf(job.step));
    expect(first.map((call) => call.operationId)).not.toContain('ai35-7NoveltySearchAgentSearch');

    // The same cap, or one below what it was billed: refused, with what to do.
    const refused = await runOpflow(['retry', job.id, '--max-units', String(cap)], { env, cwd: dir });
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain(
      `job ${job.id} cannot be retried: it was billed ${job.usage.billedUnits} units and its cap is ${cap}; retry it with a higher --max-units`,
    );
    const bad = await runOpflow(['retry', job.id, '--max-units', 'lots'], { env, cwd: dir });
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('--max-units must be a whole number from 1');

    // A higher cap: on from the step it stopped at; nothing before it is called again.
    const again = sandbox.ledger.entries().length;
    const retried = await runOpflow(['retry', job.id, '--max-units', '1000', '--json'], { env, cwd: dir });
    expect(retried.code, retried.stderr).toBe(0);
    const done = await status(job.id);
    expect(done.status).toBe('SUCCEEDED');
    expect(done.maxUnits).toBe(1000);
    const second = calls(again).map((call) => call.operationId);
    expect(second[0]).toBe(operationOf(job.step));
    expect(second).not.toContain('ai35-1NoveltySearchSubmit');
    expect(second).toContain('ai35-7NoveltySearchAgentSearch');
  }, 180_000);

  it('refuses a bad --max-units before starting anything', async () => {
    const file = join(dir, 'bad.json');
    writeFileSync(file, JSON.stringify({ query: 'battery' }));
    const before = sandbox.ledger.entries().length;
    const run = await runOpflow(['run', 'patent-count', file, '--max-units', '0'], { env, cwd: dir });
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain('--max-units must be a whole number from 1 to 1000000000000, not "0"');
    expect(calls(before)).toHaveLength(0);
  }, 60_000);
});
