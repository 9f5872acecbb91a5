// The local runtime wired for real (SQLite file, report folder, built-in sandbox on a free port) with
// time skipped: a novelty check that takes the sandbox minutes finishes in milliseconds, and a job
// stranded by a crash (committed, never sent) is rescued by the sweeper.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { submitJob } from '../../../../shared/engine/job-commands';
import { loadLocalConfig } from '../../../../shared/runtime/local/config';
import { createLocalPipeline, type LocalPipeline } from '../../../../shared/runtime/local/pipeline';
import { sandboxRecordPath } from '../../../../shared/runtime/local/sandbox-record';
import { ManualClock, skippingTime } from '../../../../shared/runtime/time';
import { workflows } from '../../../../shared/workflows';
import { contractJob } from '../../../contract/ports.contract';

const T0 = Date.UTC(2026, 0, 5, 9);
const hinge =
  '# Two-stage folding hinge\nA hinge that folds twice: a cam locks the first fold while springs return the second.';

describe('createLocalPipeline (skipping time, built-in sandbox)', () => {
  let dir: string;
  let clock: ManualClock;
  let pipeline: LocalPipeline | undefined;
  const announced: string[] = [];

  const open = async (overrides: Record<string, string> = {}) => {
    pipeline = await createLocalPipeline({
      config: loadLocalConfig(
        { dbPath: join(dir, 'state', 'opflow.db'), outDir: join(dir, 'out'), sandboxSpeed: 1, ...overrides },
        {},
      ),
      workflows,
      env: {},
      time: skippingTime(clock),
      random: () => 0.5,
      announce: (line) => announced.push(line),
      sandbox: { streamChunkDelayMs: 0 },
    });
    return pipeline;
  };

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'opflow-pipeline-'));
    clock = new ManualClock(T0);
    announced.length = 0;
  });
  afterEach(async () => {
    await pipeline?.close();
    pipeline = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  it('runs a novelty check to its report with the platform-like durations skipped', async () => {
    const p = await open();
    expect(announced).toEqual([
      expect.stringMatching(
        /^opflow: no OPFLOW_API_KEY or OPFLOW_BASE_URL set, so using the built-in sandbox at http:\/\/127\.0\.0\.1:\d+ \(simulated data, 1x speed\)$/,
      ),
    ]);
    const input = workflows.get('novelty-check')!.fromText!(hinge, 'hinge.md');
    const { job } = await submitJob(p.deps, { workflow: 'novelty-check', input, label: 'hinge.md' });
    const statuses: string[] = [];
    p.onJobChange((changed) => statuses.push(changed.status));
    p.start();
    const [done] = await p.waitForJobs([job.id]);
    expect(done?.status).toBe('SUCCEEDED');
    // The agent search alone takes the sandbox minutes of its clock.
    expect(clock.now() - T0).toBeGreaterThan(3 * 60_000);
    expect(statuses).toContain('WAITING');
    const markdown = readFileSync(join(dir, 'out', job.id, 'report.md'), 'utf8');
    expect(markdown).toContain('Two-stage folding hinge');
    expect(existsSync(join(dir, 'out', job.id, 'report.html'))).toBe(true);
    // Only steps and polls called the sandbox: no call was repeated for nothing.
    const ledger = p.sandbox!.server.ledger;
    expect(ledger.duplicateCreates()).toBe(0);
    expect(ledger.entries({ operationId: 'ai35-1' })).toHaveLength(1);
  });

  it('re-sends a job that was committed but never sent (a crash between the two)', async () => {
    const p = await open();
    const input = workflows.get('novelty-check')!.fromText!(hinge, 'hinge.md');
    const stranded = contractJob({
      input: { inline: { ...(input as object), lang: 'en' } },
      nextRunAt: T0 - 1_000,
      createdAt: T0 - 1_000,
      updatedAt: T0 - 1_000,
      deadlineAt: T0 + 86_400_000,
    });
    await p.local.store.create(stranded);
    expect(p.local.queue.size()).toBe(0);
    p.start();
    const [done] = await p.waitForJobs([stranded.id]);
    expect(done?.status).toBe('SUCCEEDED');
  });

  it('leaves a job waiting for a selection alone until answered, holding no worker', async () => {
    const p = await open();
    const input = workflows.get('novelty-check')!.fromText!(hinge, 'hinge.md');
    const { job } = await submitJob(p.deps, {
      workflow: 'novelty-check',
      input,
      selection: { mode: 'manual' },
    });
    p.start();
    const [parked] = await p.waitForJobs([job.id]);
    expect(parked?.status).toBe('AWAITING_INPUT');
    for (let i = 0; i < 1_000 && p.pool.active > 0; i += 1)
      await new Promise((resolve) => setImmediate(resolve));
    expect(p.pool.active).toBe(0);
    // Nothing will wake it: messages sent before a newer version (the scheduler's probes and pulled
    // polls leave their earlier message in the queue, dropped when it comes due) are all stale.
    const waiting = p.local.db
      .prepare<[string], { version: number }>('SELECT version FROM messages WHERE job_id = ?')
      .all(job.id);
    expect(waiting.filter((message) => message.version >= parked!.version)).toEqual([]);
  });

  it('does not offer a sandbox on a skipped clock to other processes', async () => {
    // Its clock is not the wall clock other processes would use with it.
    await open();
    expect(existsSync(sandboxRecordPath(join(dir, 'state', 'opflow.db')))).toBe(false);
  });

  it('opens for records only without a sandbox or a client', async () => {
    pipeline = await createLocalPipeline({
      config: loadLocalConfig({ dbPath: join(dir, 'state', 'opflow.db'), outDir: join(dir, 'out') }, {}),
      workflows,
      env: {},
      recordsOnly: true,
      announce: (line) => announced.push(line),
    });
    expect(pipeline.sandbox).toBeUndefined();
    expect(announced).toEqual([]);
    expect(() => pipeline!.start()).toThrow(/job records only/);
    await expect(pipeline.deps.client.call('ai35-2TechSolutionGet', { task_id: 'x' })).rejects.toThrow(
      /no upstream calls/,
    );
  });
});
