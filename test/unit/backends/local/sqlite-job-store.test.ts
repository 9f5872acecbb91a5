// What the SQLite job store does beyond the port contract: durability across processes and reopening,
// refusing broken writes, and the database file's settings.
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  type LocalDatabase,
  openLocalDatabase,
  SqliteJobStore,
  SqliteWorkQueue,
} from '../../../../shared/backends/local';
import { migrations } from '../../../../shared/backends/local/database';
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
    expect(db.pragma('user_version', { simple: true })).toBe(5);
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

  it('reads only the polls scheduled later than a bound after their start, per step, soonest first', async () => {
    const T0 = 1_750_000_000_000;
    const poll = (step: string, startedAgo: number, dueIn: number, overrides: Partial<Job> = {}) =>
      contractJob({
        status: 'WAITING',
        step,
        version: 3,
        pollStartedAt: T0 - startedAgo,
        nextRunAt: T0 + dueIn,
        ...overrides,
      });
    const lateSummary = poll('summary', 1_000, 14_000.5); // 15,000.5 ms after its start
    const lateSooner = poll('summary', 0, 9_000); // 9 s
    const onTime = poll('summary', 1_000, 2_000); // 3 s: under the bound
    const lateFeatures = poll('features', 0, 20_000);
    const otherStep = poll('search-elements', 0, 30_000); // no bound given for its step
    const notPolling = poll('confirm-summary', 0, 30_000, { pollStartedAt: undefined });
    const withinWindow = poll('summary', 10_000, 500); // due within the window: not listed
    const queued = contractJob({ nextRunAt: T0 - 10 });
    for (const job of [
      lateSummary,
      lateSooner,
      onTime,
      lateFeatures,
      otherStep,
      notPolling,
      withinWindow,
      queued,
    ])
      await store.create(job);
    const later = [
      { workflow: 'novelty-check', step: 'summary', laterThanMs: 5_000 },
      { workflow: 'novelty-check', step: 'features', laterThanMs: 19_999 },
      { workflow: 'novelty-check', step: 'confirm-summary', laterThanMs: 0 },
    ];
    const query = { dueBy: T0 + 1_000, until: T0 + 600_000, limit: 10, countUpTo: 0, later };
    const scan = await store.scanForFill(query);
    expect(scan.waiting.map((view) => view.id)).toEqual([lateSooner.id, lateSummary.id, lateFeatures.id]);
    expect(scan.waiting[1]?.nextRunAt).toBe(T0 + 14_000.5);
    expect(scan.dueByTenant).toEqual(new Map());
    expect((await store.scanForFill({ ...query, limit: 2 })).waiting.map((view) => view.id)).toEqual([
      lateSooner.id,
      lateSummary.id,
    ]);
    // A poll re-aimed (committed) under the bound leaves the list.
    expect(await store.commit({ ...lateSummary, version: 4, nextRunAt: T0 + 2_000 }, 3)).toBe(true);
    expect((await store.scanForFill(query)).waiting.map((view) => view.id)).toEqual([
      lateSooner.id,
      lateFeatures.id,
    ]);
    const counts = await store.countForFill({ dueBy: T0 + 1_000, countUpTo: 10 });
    expect(counts.dueByTenant).toEqual(new Map([['default', 2]]));
    expect(counts.waiting.map((group) => [group.step, group.count]).sort()).toEqual([
      ['confirm-summary', 1],
      ['features', 1],
      ['search-elements', 1],
      ['summary', 4],
    ]);
  });

  it('counts the unfinished work at every write, and lists the oldest new jobs only when asked', async () => {
    const T0 = 1_750_000_000_000;
    const q1 = contractJob({ nextRunAt: T0 });
    const q2 = contractJob({ nextRunAt: T0 + 10, tokenAt: T0 + 10 });
    const w1 = contractJob({ status: 'WAITING', step: 'summary', version: 3, pollStartedAt: T0 });
    const other = contractJob({ tenant: 'other', status: 'RUNNING', step: 'features' });
    const done = contractJob({ status: 'SUCCEEDED' });
    for (const job of [q1, q2, w1, other, done]) await store.create(job);
    const counted = async () =>
      Object.fromEntries(
        (await store.scanWork({ queuedLimit: 0 })).groups.map((group) => [
          `${group.tenant}/${group.status}/${group.workflow}/${group.step}`,
          group.count,
        ]),
      );
    // What a recount of the stored jobs says (every unfinished job, read whole).
    const recount = async () => {
      const all = (await store.list({ limit: 1000 })).jobs;
      const groups: Record<string, number> = {};
      for (const job of all.filter((j) => ['QUEUED', 'RUNNING', 'WAITING'].includes(j.status))) {
        const key = `${job.tenant}/${job.status}/${job.workflow}/${job.step}`;
        groups[key] = (groups[key] ?? 0) + 1;
      }
      return groups;
    };
    expect(await counted()).toEqual({
      'default/QUEUED/novelty-check/submit': 2,
      'default/WAITING/novelty-check/summary': 1,
      'other/RUNNING/novelty-check/features': 1,
    });
    // A commit that moves a job on, one that finishes it, one that changes nothing counted.
    expect(await store.commit({ ...q1, version: 2, status: 'WAITING', step: 'summary' }, 1)).toBe(true);
    expect(await store.commit({ ...w1, version: 4, status: 'SUCCEEDED' }, 3)).toBe(true);
    expect(await store.commit({ ...other, version: 2, polls: 3 }, 1)).toBe(true);
    // A lost race changes nothing.
    expect(await store.commit({ ...q2, version: 6, status: 'FAILED' }, 5)).toBe(false);
    expect(await counted()).toEqual({
      'default/QUEUED/novelty-check/submit': 1,
      'default/WAITING/novelty-check/summary': 1,
      'other/RUNNING/novelty-check/features': 1,
    });
    expect(await counted()).toEqual(await recount());
    // Another process writes the file directly: the triggers count in its transaction too.
    db.prepare("UPDATE jobs SET status = 'CANCELLED', next_run_at = NULL WHERE id = ?").run(other.id);
    db.prepare('DELETE FROM jobs WHERE id = ?').run(q1.id);
    expect(await counted()).toEqual({ 'default/QUEUED/novelty-check/submit': 1 });
    // The oldest new jobs, with their reserved tokens, only when asked for.
    expect((await store.scanWork({ queuedLimit: 0 })).queued).toEqual([]);
    expect((await store.scanWork({ queuedLimit: 5 })).queued).toEqual([
      { id: q2.id, version: 1, tenant: 'default', nextRunAt: T0 + 10, tokenAt: T0 + 10 },
    ]);
  });

  it('migrates a schema-1 file: the filler reads its columns, the work is counted, nothing is lost', async () => {
    db.close();
    rmSync(dbPath);
    const T0 = 1_750_000_000_000;
    const polling = contractJob({
      status: 'WAITING',
      step: 'summary',
      version: 4,
      polls: 1,
      pollStartedAt: T0 - 2_000,
      lastPolledAt: T0 - 500,
      nextRunAt: T0 + 5_000.5,
      lastError: { kind: 'server', message: 'x', retryable: true, step: 'summary', at: T0 - 100 },
    });
    const queued = contractJob({ nextRunAt: T0 - 1_000, tokenAt: T0 + 200 });
    const finished = contractJob({ status: 'SUCCEEDED', nextRunAt: T0 });
    // The file as schema 1 left it (database.ts, migration 1): the job as JSON beside a few columns.
    const old = new Database(dbPath);
    old.exec(migrations[1]!);
    const insert = old.prepare(
      `INSERT INTO jobs (id, tenant, status, version, next_run_at, batch_id, idempotency_key, created_at, updated_at, body)
       VALUES (?, ?, ?, ?, ?, NULL, NULL, ?, ?, ?)`,
    );
    for (const job of [polling, queued, finished]) {
      const schedulable = job.status !== 'SUCCEEDED';
      insert.run(
        job.id,
        job.tenant,
        job.status,
        job.version,
        schedulable ? Math.floor(job.nextRunAt) : null,
        job.createdAt,
        job.updatedAt,
        JSON.stringify(job),
      );
    }
    old.pragma('user_version = 1');
    old.close();

    db = openLocalDatabase(dbPath);
    expect(db.pragma('user_version', { simple: true })).toBe(5);
    store = new SqliteJobStore(db);
    for (const job of [polling, queued, finished]) expect(await store.get(job.id)).toEqual(job);
    const scan = await store.scanForFill({
      dueBy: T0 + 1_000,
      until: T0 + 600_000,
      limit: 10,
      countUpTo: 10,
    });
    expect(scan.waiting).toEqual([
      {
        id: polling.id,
        version: 4,
        tenant: 'default',
        workflow: 'novelty-check',
        status: 'WAITING',
        step: 'summary',
        nextRunAt: T0 + 5_000.5,
        attempts: 0,
        polls: 1,
        pollStartedAt: T0 - 2_000,
        lastPolledAt: T0 - 500,
        inFlightSince: undefined,
        tokenAt: undefined,
        lastError: { at: T0 - 100 },
        unsaved: undefined,
      },
    ]);
    // The queued job holds a reserved token: not counted against the budget's room.
    expect(scan.dueByTenant).toEqual(new Map());
    const work = await store.scanWork({ queuedLimit: 10 });
    expect(work.groups.map((group) => [group.status, group.step, group.count]).sort()).toEqual([
      ['QUEUED', 'submit', 1],
      ['WAITING', 'summary', 1],
    ]);
    expect(work.queued).toEqual([
      { id: queued.id, version: 1, tenant: 'default', nextRunAt: T0 - 1_000, tokenAt: T0 + 200 },
    ]);
    // Commits after the migration keep the counts.
    expect(await store.commit({ ...polling, version: 5, status: 'SUCCEEDED' }, 4)).toBe(true);
    expect((await store.scanWork({ queuedLimit: 0 })).groups.map((group) => group.step)).toEqual(['submit']);
    // Opening it again migrates nothing twice.
    db.close();
    db = openLocalDatabase(dbPath);
    expect(db.pragma('user_version', { simple: true })).toBe(5);
  });

  it("keeps the filler's columns and counts true under a writer of schema 1 still running beside it", async () => {
    const T0 = 1_750_000_000_000;
    const moving = contractJob({ nextRunAt: T0 - 10 });
    await store.create(moving);
    // The statements of an opflow of schema 1 (its columns only), on a connection of its own.
    const old = new Database(dbPath);
    const v1Columns = (job: Job) => ({
      id: job.id,
      tenant: job.tenant,
      status: job.status,
      version: job.version,
      next_run_at: job.status === 'SUCCEEDED' ? null : Math.floor(job.nextRunAt),
      batch_id: null,
      idempotency_key: null,
      created_at: job.createdAt,
      updated_at: job.updatedAt,
      body: JSON.stringify(job),
    });
    const polling = contractJob({
      status: 'WAITING',
      step: 'summary',
      version: 3,
      pollStartedAt: T0 - 1_000,
      nextRunAt: T0 + 20_000,
    });
    old
      .prepare(
        `INSERT INTO jobs (id, tenant, status, version, next_run_at, batch_id, idempotency_key, created_at, updated_at, body)
         VALUES (@id, @tenant, @status, @version, @next_run_at, @batch_id, @idempotency_key, @created_at, @updated_at, @body)`,
      )
      .run(v1Columns(polling));
    // It moves a job on: QUEUED at submit to WAITING at features, polling since T0.
    const moved: Job = {
      ...moving,
      version: 2,
      status: 'WAITING',
      step: 'features',
      pollStartedAt: T0,
      nextRunAt: T0 + 30_000.5,
    };
    old
      .prepare(
        `UPDATE jobs SET tenant = @tenant, status = @status, version = @version, next_run_at = @next_run_at,
           batch_id = @batch_id, idempotency_key = @idempotency_key, updated_at = @updated_at, body = @body
         WHERE id = @id AND version = 1`,
      )
      .run(v1Columns(moved));
    old.close();
    expect(
      (await store.scanWork({ queuedLimit: 0 })).groups.map((g) => [g.status, g.step, g.count]).sort(),
    ).toEqual([
      ['WAITING', 'features', 1],
      ['WAITING', 'summary', 1],
    ]);
    const scan = await store.scanForFill({
      dueBy: T0 + 1_000,
      until: T0 + 600_000,
      limit: 10,
      countUpTo: 10,
    });
    expect(scan.waiting.map((view) => [view.id, view.step, view.nextRunAt, view.pollStartedAt])).toEqual([
      [polling.id, 'summary', T0 + 20_000, T0 - 1_000],
      [moving.id, 'features', T0 + 30_000.5, T0],
    ]);
    const later = [{ workflow: 'novelty-check', step: 'features', laterThanMs: 25_000 }];
    expect(
      (
        await store.scanForFill({
          ...{ dueBy: T0 + 1_000, until: T0 + 600_000, limit: 10, countUpTo: 0 },
          later,
        })
      ).waiting.map((v) => v.id),
    ).toEqual([moving.id]);
    // And this code's own commits go on from there.
    expect(await store.commit({ ...moved, version: 3, status: 'SUCCEEDED' }, 2)).toBe(true);
    expect((await store.scanWork({ queuedLimit: 0 })).groups.map((g) => g.step)).toEqual(['summary']);
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
