// A live paid call's job never runs beside it, whatever process looks,
// through the real bin: a second `opflow resume` started while a slow create is in flight, and a
// stream that lasts many in-flight allowances while another process sweeps the same database.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scaledTaskDurations } from '../../../shared/runtime/local/sandbox-launch';
import { type Sandbox, startSandbox } from '../../../shared/sandbox';
import { jobsInDatabase } from '../../support/job-snapshots';
import { childEnv, killRunningOpflows, repoRoot, startOpflow } from './opflow-process';

const speed = 40;

describe('a second opflow process on the same database', () => {
  let dir: string;
  let sandbox: Sandbox;

  const jobsOf = jobsInDatabase;
  const waitFor = async (check: () => Promise<boolean>, what: string) => {
    for (let i = 0; i < 6_000; i++) {
      if (await check()) return;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    throw new Error(`timed out waiting for ${what}`);
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'opflow-e2e-inflight-'));
    sandbox = await startSandbox({
      port: 0,
      taskDurations: scaledTaskDurations(speed),
      defaultTaskDuration: { meanMs: 10_000 / speed, spreadMs: 5_000 / speed },
      // The create that starts a novelty check takes 4 s to answer: long enough for a second
      // process to start, sweep and look at its job while it is in flight.
      faults: [{ kind: 'latency', operation: 'ai35-1', minMs: 4_000, maxMs: 4_000 }],
      // A chat answer streams for many seconds (well over three 2 s allowances).
      streamChunkDelayMs: 600,
    });
  });
  afterAll(async () => {
    killRunningOpflows();
    await sandbox.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('leaves a create in flight alone: `opflow resume` started during it calls nothing twice', async () => {
    const db = join(dir, 'create', 'opflow.db');
    const env = childEnv({
      OPFLOW_BASE_URL: sandbox.url,
      OPFLOW_SANDBOX_SPEED: String(speed),
      OPFLOW_DB: db,
      OPFLOW_OUT: join(dir, 'create-out'),
    });
    const input = join(repoRoot, 'examples', 'disclosures', 'smart-insulin-pen-cap.txt');
    const run = startOpflow(['run', 'novelty-check', input], { env, cwd: dir });
    await waitFor(async () => {
      const jobs = await jobsOf(db).catch(() => []);
      return jobs.some((job) => job.inFlightSince !== undefined);
    }, 'the first create to be in flight');

    // The failure this guards against: a second process's first sweep looks ahead by the in-flight allowance and
    // re-sent this job; its runner then ran the create again beside the live one.
    const resume = startOpflow(['resume'], { env, cwd: dir });
    const [ran, resumed] = await Promise.all([run.done, resume.done]);
    expect(ran.code, ran.stderr).toBe(0);
    expect(resumed.code, resumed.stderr).toBe(0);

    const [job] = await jobsOf(db);
    expect(job?.status).toBe('SUCCEEDED');
    expect(job?.usage.duplicateCreates).toBe(0);
    const creates = sandbox.ledger
      .entries()
      .filter((entry) => entry.operationId === 'ai35-1NoveltySearchSubmit');
    expect(creates.map((entry) => entry.outcome)).toEqual(['ok']);
    expect(sandbox.ledger.duplicateCreates()).toBe(0);
  }, 180_000);

  it('keeps a stream many allowances long guarded by its heartbeat while another process sweeps', async () => {
    const db = join(dir, 'stream', 'opflow.db');
    const env = childEnv({
      OPFLOW_BASE_URL: sandbox.url,
      OPFLOW_SANDBOX_SPEED: String(speed),
      OPFLOW_DB: db,
      OPFLOW_OUT: join(dir, 'stream-out'),
      // Shortened so the test need not stream for minutes: the stream outlasts it several times.
      OPFLOW_IN_FLIGHT_ALLOWANCE_MS: '2000',
    });
    const question = join(dir, 'question.txt');
    writeFileSync(
      question,
      'Which coating chemistries keep solar panels clean without water, and which patents cover them?\n',
    );
    const before = sandbox.ledger.entries().length;
    const startedAt = Date.now();
    const run = startOpflow(['run', 'llm-chat', question], { env, cwd: dir });
    await waitFor(async () => {
      const jobs = await jobsOf(db).catch(() => []);
      return jobs.some((job) => job.inFlightSince !== undefined);
    }, 'the stream to start');
    // Another process on the database, sweeping while the stream runs.
    const resume = startOpflow(['resume'], { env, cwd: dir });
    const [ran, resumed] = await Promise.all([run.done, resume.done]);
    const tookMs = Date.now() - startedAt;
    expect(ran.code, ran.stderr).toBe(0);
    expect(resumed.code, resumed.stderr).toBe(0);

    const [job] = await jobsOf(db);
    expect(job?.status).toBe('SUCCEEDED');
    expect(job?.usage.duplicateCreates).toBe(0);
    const streams = sandbox.ledger
      .entries()
      .slice(before)
      .filter((entry) => entry.operationId.startsWith('ai50'));
    expect(streams).toHaveLength(1);
    expect(job?.usage.billedUnits).toBe(streams[0]?.billedUnits);
    // The stream lasted several allowances, so without the heartbeat the job would have been re-run.
    expect(tookMs).toBeGreaterThan(3 * 2_000);
  }, 180_000);
});
