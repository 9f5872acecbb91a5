// What the SQLite job store does beyond the port contract: durability across processes and reopening,
// refusing broken writes, and the database file's settings.
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  type LocalDatabase,
  openLocalDatabase,
  SqliteJobStore,
  SqliteWorkQueue,
} from '../../../../shared/backends/local';
import { type Job, type Workflow, waitsForPoll } from '../../../../shared/engine';
import { noveltyCheck } from '../../../../shared/workflows';
import { contractJob } from '../../../contract/ports.contract';

describe('SqliteJobStore', () => {
  let dir: string;
  let dbPath: string;
  let db: LocalDatabase;
  let store: SqliteJobStore;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'opflow-store-'));
    dbPath = join(dir, 'nested', 'opflow.db');
    db = openLocalDatabase(dbPath);
    store = new SqliteJobStore(db);
  });
  afterEach(() => {
    if (db.open) db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('creates the folder and opens the file in WAL mode with a busy timeout', () => {
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.pragma('busy_timeout', { simple: true })).toBe(10_000);
    expect(db.pragma('synchronous', { simple: true })).toBe(1);
    expect(db.pragma('user_version', { simple: true })).toBe(1);
  });

  it("reads the budget filler's slim views along the due index: waiting jobs after the window, due ones counted", async () => {
    const T0 = 1_750_000_000_000;
    const waitingJob = (nextRunAt: number, overrides: Partial<Job> = {}) =>
      contractJob({
        status: 'WAITING',
        step: 'summary',
        version: 4,
        polls: 1,
        pollStartedAt: T0 - 2_000,
        lastPolledAt: T0 - 500,
        nextRunAt,
        ...overrides,
      });
    const later = waitingJob(T0 + 5_000.5);
    const sooner = waitingJob(T0 + 2_000, {
      lastError: { kind: 'server', message: 'x', retryable: true, step: 'summary', at: T0 - 100 },
      unsaved: { step: 'summary', decision: { type: 'poll' } },
      inFlightSince: T0 - 10,
      tokenAt: T0 + 2_000,
    });
    const beyond = waitingJob(T0 + 700_000);
    const queuedLater = contractJob({ status: 'QUEUED', nextRunAt: T0 + 3_000 });
    // Due within the window: counted per tenant unless holding a reserved token.
    const due = [
      contractJob({ nextRunAt: T0 - 50_000 }),
      contractJob({ nextRunAt: T0 + 500, tenant: 'other' }),
      waitingJob(T0 + 900, { tokenAt: T0 + 900 }),
      contractJob({ nextRunAt: T0 + 100 }),
    ];
    const finished = contractJob({ status: 'SUCCEEDED', nextRunAt: T0 });
    for (const job of [later, sooner, beyond, queuedLater, finished, ...due]) await store.create(job);

    const scan = await store.scanForFill({
      dueBy: T0 + 1_000,
      until: T0 + 600_000,
      limit: 10,
      countUpTo: 100,
    });
    expect(scan.dueByTenant).toEqual(
      new Map([
        ['default', 2],
        ['other', 1],
      ]),
    );
    expect(scan.waiting.map((view) => view.id)).toEqual([sooner.id, later.id]);
    const pick = (job: Job) => ({
      id: job.id,
      version: job.version,
      tenant: job.tenant,
      workflow: job.workflow,
      status: job.status,
      step: job.step,
      nextRunAt: job.nextRunAt,
      attempts: job.attempts,
      polls: job.polls,
      pollStartedAt: job.pollStartedAt,
      lastPolledAt: job.lastPolledAt,
      inFlightSince: job.inFlightSince,
      tokenAt: job.tokenAt,
      lastError: job.lastError ? { at: job.lastError.at } : undefined,
      unsaved: job.unsaved ? true : undefined,
    });
    expect(scan.waiting).toEqual([pick(sooner), pick(later)]);
    // Whether a job waits for a poll reads the same from the view as from the whole job.
    const novelty = noveltyCheck as Workflow;
    expect(waitsForPoll(novelty, scan.waiting[1]!)).toBe(waitsForPoll(novelty, later));
    expect(waitsForPoll(novelty, scan.waiting[1]!)).toBe(true);
    expect(waitsForPoll(novelty, scan.waiting[0]!)).toBe(false);
    const capped = await store.scanForFill({
      dueBy: T0 + 1_000,
      until: T0 + 600_000,
      limit: 1,
      countUpTo: 1,
    });
    expect(capped.waiting.map((view) => view.id)).toEqual([sooner.id]);
    expect([...capped.dueByTenant.values()].reduce((a, b) => a + b, 0)).toBe(1);
  });

  it('keeps jobs across closing and reopening the file', async () => {
    const job = contractJob({ label: 'kept' });
    await store.create(job);
    db.close();
    db = openLocalDatabase(dbPath);
    expect(await new SqliteJobStore(db).get(job.id)).toEqual(job);
  });

  it('lists as stranded only the due jobs no queued message names at their current version', async () => {
    const T0 = 1_750_000_000_000;
    const queue = new SqliteWorkQueue(db, { clock: { now: () => T0 } });
    const withMessage = contractJob({ nextRunAt: T0 - 1_000 });
    const withStaleMessage = contractJob({ nextRunAt: T0 - 2_000, version: 3 });
    const withoutMessage = contractJob({ nextRunAt: T0 - 3_000 });
    const notDue = contractJob({ nextRunAt: T0 + 1_000 });
    const finished = contractJob({ nextRunAt: T0 - 5_000, status: 'SUCCEEDED' });
    for (const job of [withMessage, withStaleMessage, withoutMessage, notDue, finished])
      await store.create(job);
    await queue.send({ jobId: withMessage.id, version: 1 }, 60_000);
    await queue.send({ jobId: withStaleMessage.id, version: 2 }, 0);
    const stranded = await store.listStranded(T0, 10);
    expect(stranded.map((job) => job.id)).toEqual([withoutMessage.id, withStaleMessage.id]);
  });

  it('refuses a second job with the same id', async () => {
    const job = contractJob();
    await store.create(job);
    await expect(store.create({ ...job, label: 'again' })).rejects.toThrow(
      `a job with id ${job.id} already exists`,
    );
  });

  it('refuses a commit that does not raise the version by exactly one', async () => {
    const job = contractJob();
    await store.create(job);
    await expect(store.commit({ ...job, version: 3 }, 1)).rejects.toThrow(/raise the version by one/);
    await expect(store.commit(job, 1)).rejects.toThrow(/raise the version by one/);
    expect(await store.get(job.id)).toEqual(job);
  });

  it('refuses a cursor it did not hand out', async () => {
    await expect(store.list({ cursor: "x' OR 1=1 --" })).rejects.toThrow(/cursor/);
  });

  it('lists newest first', async () => {
    const jobs = [contractJob(), contractJob(), contractJob()].sort((a, b) => a.id.localeCompare(b.id));
    for (const job of jobs) await store.create(job);
    expect((await store.list({})).jobs.map((job) => job.id)).toEqual(jobs.map((job) => job.id).reverse());
  });

  it('says so when a stored job is damaged', async () => {
    const job = contractJob();
    await store.create(job);
    db.prepare('UPDATE jobs SET body = ? WHERE id = ?').run('{"id":"x"}', job.id);
    await expect(store.get(job.id)).rejects.toThrow(/stored job is damaged/);
  });

  it('refuses a database written by a newer opflow', () => {
    db.pragma('user_version = 99');
    db.close();
    expect(() => openLocalDatabase(dbPath)).toThrow(/newer opflow \(schema 99/);
  });

  it('says which file it could not open', () => {
    const blocker = join(dir, 'file');
    writeFileSync(blocker, 'not a folder');
    expect(() => openLocalDatabase(join(blocker, 'opflow.db'))).toThrow();
    const garbage = join(dir, 'garbage.db');
    writeFileSync(garbage, 'this is not a database, just text long enough to have a header of sorts........');
    expect(() => openLocalDatabase(garbage)).toThrow(`cannot open the opflow database at ${garbage}`);
  });

  it('lets two processes commit to one file, exactly one winning each race', async () => {
    const job = contractJob();
    await store.create(job);
    // A second process races this one for the same version, 20 times over.
    const script = join(dir, 'racer.mjs');
    writeFileSync(
      script,
      `import Database from ${JSON.stringify(require.resolve('better-sqlite3'))};
       const db = new Database(process.argv[2]); db.pragma('busy_timeout = 10000');
       let wins = 0;
       for (let v = 1; v < 41; v++) {
         const row = db.prepare('SELECT version FROM jobs WHERE id = ?').get(process.argv[3]);
         const r = db.prepare("UPDATE jobs SET version = @v, body = json_set(body, '$.version', @v) WHERE id = @id AND version = @old").run({ v: row.version + 1, id: process.argv[3], old: row.version });
         wins += r.changes;
       }
       process.send(wins); db.close();`,
    );
    const child = fork(script, [dbPath, job.id]);
    const childWins = new Promise<number>((resolve, reject) => {
      child.on('message', (m) => resolve(Number(m)));
      child.on('exit', (code) => reject(new Error(`the racing process exited with ${code}`)));
    });
    let wins = 0;
    for (let i = 0; i < 40; i += 1) {
      const current = (await store.get(job.id))!;
      if (await store.commit({ ...current, version: current.version + 1 }, current.version)) wins += 1;
    }
    const total = wins + (await childWins);
    const final = await store.get(job.id);
    // Every successful write raised the version by one: no lost update.
    expect(final!.version).toBe(1 + total);
  });
});
