// Two deliveries of one job version meeting one billed read, on the local backend's real SQLite job
// store: the read (a count, a poll of a task) is claimed on the version read before it is sent, so
// only one delivery calls the upstream and the job is billed once. Before the claim, both called and
// the loser's cost was added to the finished job (a schedule run's units went from 1 to 2).
import { afterEach, describe, expect, it } from 'vitest';
import { openLocalDatabase } from '../../../shared/backends/local/database';
import { SqliteJobStore } from '../../../shared/backends/local/sqlite-job-store';
import {
  inFlightAllowanceMs,
  type Job,
  runStep,
  submitJob,
  sweep,
  type Workflow,
} from '../../../shared/engine';
import type { JobStore, WorkMessage } from '../../../shared/engine/ports';
import { patentCount } from '../../../shared/workflows/patent-count/workflow';
import { drive } from '../../support/memory-ports';
import { demo, happyScript, harness } from '../../unit/engine/fixtures';

const open: { close(): void }[] = [];
afterEach(() => {
  for (const db of open.splice(0)) db.close();
});

function sqliteStore(): SqliteJobStore {
  const db = openLocalDatabase(':memory:');
  open.push(db);
  return new SqliteJobStore(db);
}

/** Both deliveries read the job before either goes on: the first two reads of `jobId` wait for each other. */
function meetOnRead(store: JobStore, jobId: string): void {
  const get = store.get.bind(store);
  let waiting: (() => void) | undefined;
  let met = 0;
  store.get = async (id: string) => {
    const job = await get(id);
    if (id !== jobId || met >= 2) return job;
    met++;
    if (met === 1) await new Promise<void>((resolve) => (waiting = resolve));
    else waiting?.();
    return job;
  };
}

/** Runs one message twice at once, both deliveries holding the same job version. */
async function deliverTwice(deps: Parameters<typeof runStep>[0], store: JobStore, message: WorkMessage) {
  meetOnRead(store, message.jobId);
  return Promise.all([runStep(deps, message), runStep(deps, message)]);
}

describe('a billed read met by two deliveries of one job version (SQLite job store)', () => {
  it('a count is sent once and the finished job is billed once', async () => {
    const store = sqliteStore();
    const h = harness(() => ({ total_search_result_count: 42 }), {
      store,
      workflows: new Map([[patentCount.name, patentCount as Workflow]]),
    });
    const { job } = await submitJob(h.deps, { workflow: 'patent-count', input: { query: 'battery' } });
    const reports = await deliverTwice(h.deps, store, h.queue.takeNext()!.message);

    expect(reports.map((report) => report.outcome).sort()).toEqual(['committed', 'conflict']);
    expect(h.client.calls.map((call) => call.operationId)).toEqual(['p001PatentQuerySearchCount']);
    const done = (await store.get(job.id))!;
    expect(done.status).toBe('SUCCEEDED');
    expect(done.usage).toMatchObject({ calls: 1, billedUnits: 1, duplicateCreates: 0 });
    // No crash: no repeated read.
    expect(done.usage.duplicateReads).toBeUndefined();
    expect(done.intents).toEqual({});
  });

  it("a task's poll is sent once, and the job goes on from the one answer", async () => {
    const store = sqliteStore();
    const h = harness(happyScript(2), { store, workflows: new Map([[demo.name, demo]]) });
    const { job } = await submitJob(h.deps, {
      workflow: 'demo',
      input: { issue: 'reduce battery swelling' },
    });
    await runStep(h.deps, h.queue.takeNext()!.message); // the create
    h.clock.advance(60_000);
    const poll = h.queue.takeNext()!.message;
    const reports = await deliverTwice(h.deps, store, poll);

    expect(reports.map((report) => report.outcome).sort()).toEqual(['committed', 'conflict']);
    const polls = () => h.client.calls.filter((call) => call.operationId === 'ai33-2Step2V3').length;
    expect(polls()).toBe(1);
    const after = (await store.get(job.id))!;
    expect(after.polls).toBe(1);
    expect(after.inFlightSince).toBeUndefined();
    expect(after.usage.billedUnits).toBe(2);

    await drive(h.deps, h.queue, h.clock);
    const done = (await store.get(job.id))!;
    expect(done.status).toBe('SUCCEEDED');
    // Three polls in all (two RUNNING answers, then the options), each sent and billed once.
    expect(polls()).toBe(3);
    // Every upstream call the job made is counted once (the scripted upstream bills 1 unit a call).
    const sent = h.client.calls.length;
    expect(done.usage).toMatchObject({ calls: sent, billedUnits: sent, duplicateCreates: 0 });
    expect(done.usage.duplicateReads).toBeUndefined();
    expect(done.intents).toEqual({ create: 1, submit: 1 });
  });

  it('a worker that dies after claiming a count loses nothing: the claim lapses and the job runs again', async () => {
    const store = sqliteStore();
    const h = harness(() => ({ total_search_result_count: 42 }), {
      store,
      workflows: new Map([[patentCount.name, patentCount as Workflow]]),
    });
    const { job } = await submitJob(h.deps, { workflow: 'patent-count', input: { query: 'battery' } });
    const commit = store.commit.bind(store);
    let commits = 0;
    store.commit = async (next: Job, expected: number) => {
      if (++commits === 2) throw new Error('worker died before committing');
      return commit(next, expected);
    };
    await expect(runStep(h.deps, h.queue.takeNext()!.message)).rejects.toThrow(/worker died/);
    store.commit = commit;
    const claimed = (await store.get(job.id))!;
    expect(claimed.inFlightSince).toBeDefined();
    expect(claimed.intents).toEqual({});

    // Within the allowance the claim holds; past it the sweeper sends the job again.
    h.clock.advance(inFlightAllowanceMs - 1_000);
    expect((await sweep(h.deps, { graceMs: 0 })).requeued).toBe(0);
    h.clock.advance(2_000);
    expect((await sweep(h.deps, { graceMs: 0 })).requeued).toBe(1);
    await drive(h.deps, h.queue, h.clock);
    const done = (await store.get(job.id))!;
    expect(done.status).toBe('SUCCEEDED');
    // The dead worker's count was sent (and billed upstream) but its units never recorded: the job
    // holds the second's, and counts the second as the one paid repeat of a read.
    expect(h.client.calls).toHaveLength(2);
    expect(done.usage).toMatchObject({ calls: 1, billedUnits: 1, duplicateCreates: 0, duplicateReads: 1 });
  });
});
