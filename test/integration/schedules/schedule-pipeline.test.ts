// A schedule on the whole local runtime (SQLite, report folder, built-in sandbox) with time skipped:
// its slot fires, the job runs to its report, and firing the slot again makes no second job.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { SqliteScheduleStateStore } from '../../../shared/backends/local/sqlite-schedule-state-store';
import { parseOpflowConfig } from '../../../shared/config/opflow-config';
import { loadLocalConfig } from '../../../shared/runtime/local/config';
import { createLocalPipeline, type LocalPipeline } from '../../../shared/runtime/local/pipeline';
import { ManualClock, skippingTime } from '../../../shared/runtime/time';
import { tickSchedules } from '../../../shared/schedules/scheduler';
import { workflows } from '../../../shared/workflows';

let pipeline: LocalPipeline | undefined;
let dir: string | undefined;
afterEach(async () => {
  await pipeline?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

it('a schedule fires with time skipped and its job and report appear', { timeout: 120_000 }, async () => {
  dir = mkdtempSync(join(tmpdir(), 'opflow-schedule-pipeline-'));
  const clock = new ManualClock(Date.parse('2026-01-05T05:00:00Z'));
  pipeline = await createLocalPipeline({
    config: loadLocalConfig(
      { dbPath: join(dir, 'opflow.db'), outDir: join(dir, 'out'), sandboxSpeed: 1 },
      {},
    ),
    workflows,
    env: {},
    time: skippingTime(clock),
    random: () => 0.5,
    announce: () => undefined,
    sandbox: { streamChunkDelayMs: 0 },
  });
  const { schedules } = parseOpflowConfig(
    {
      schedules: [
        {
          name: 'morning',
          cron: '0 6 * * *',
          workflow: 'patent-count',
          input: { query: 'TTL:(solid-state battery)' },
        },
      ],
    },
    'opflow.config.json',
    new Set(workflows.keys()),
  );
  const states = new SqliteScheduleStateStore(pipeline.local.db);
  await tickSchedules(pipeline.deps, states, schedules);
  clock.set(Date.parse('2026-01-05T06:00:00Z'));
  const outcomes = await tickSchedules(pipeline.deps, states, schedules);
  expect(outcomes).toEqual([
    expect.objectContaining({ schedule: 'morning', outcome: 'fired', created: true }),
  ]);
  const jobId = (outcomes[0] as { jobId: string }).jobId;
  pipeline.start();
  const [done] = await pipeline.waitForJobs([jobId]);
  expect(done?.status).toBe('SUCCEEDED');
  expect(existsSync(join(dir, 'out', jobId, 'report.md'))).toBe(true);
  // Another process firing the same slot again: nothing new.
  const again = await tickSchedules(
    pipeline.deps,
    new SqliteScheduleStateStore(pipeline.local.db),
    schedules,
  );
  expect(again).toEqual([]);
  expect((await pipeline.deps.store.list({})).jobs).toHaveLength(1);
});
