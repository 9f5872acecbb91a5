/**
 * The local backend's one database file: jobs and queue messages live together in SQLite (WAL mode),
 * so a job's commit and its next message survive a crash together and several `opflow` processes on
 * one machine (a run, a `resume --select` from another terminal) can share it safely.
 */
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { errorMessage } from '../../errors/error-message';

export type LocalDatabase = Database.Database;

/** The schema version this code writes; older files are migrated forward on open. */
const schemaVersion = 5;

/**
 * Schema 4's refill of the filler's columns from the job's body, run by the triggers after an insert
 * and after an update that left `fill_version` behind (the same statement for both). Part of
 * migration 4: never change it (a later schema adds a migration of its own).
 */
const refillFromBody = `UPDATE jobs SET
        workflow = json_extract(new.body, '$.workflow'),
        step = json_extract(new.body, '$.step'),
        run_at = CASE WHEN new.next_run_at IS NULL THEN NULL ELSE json_extract(new.body, '$.nextRunAt') END,
        attempts = json_extract(new.body, '$.attempts'),
        polls = json_extract(new.body, '$.polls'),
        poll_started_at = json_extract(new.body, '$.pollStartedAt'),
        last_polled_at = json_extract(new.body, '$.lastPolledAt'),
        in_flight_since = json_extract(new.body, '$.inFlightSince'),
        token_at = json_extract(new.body, '$.tokenAt'),
        error_at = json_extract(new.body, '$.lastError.at'),
        unsaved = json_type(new.body, '$.unsaved') IS NOT NULL,
        fill_version = new.version
      WHERE id = new.id;`;

/** Each schema version's migration from the one before (tests build old files from them). */
export const migrations: Readonly<Record<number, string>> = {
  1: `
    CREATE TABLE jobs (
      id TEXT PRIMARY KEY,
      tenant TEXT NOT NULL,
      status TEXT NOT NULL,
      version INTEGER NOT NULL,
      -- Only while the job is not terminal (see schedulableStatuses): a sparse due index.
      next_run_at INTEGER,
      batch_id TEXT,
      idempotency_key TEXT,
      created_at INTEGER NOT NULL,
      updated_at INTEGER NOT NULL,
      body TEXT NOT NULL
    ) STRICT;
    CREATE INDEX jobs_by_status ON jobs (status, id);
    CREATE INDEX jobs_due ON jobs (next_run_at, id) WHERE next_run_at IS NOT NULL;
    CREATE INDEX jobs_by_batch ON jobs (batch_id, id) WHERE batch_id IS NOT NULL;
    CREATE INDEX jobs_by_tenant ON jobs (tenant, id);
    CREATE UNIQUE INDEX jobs_idempotency ON jobs (tenant, idempotency_key) WHERE idempotency_key IS NOT NULL;

    CREATE TABLE messages (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      job_id TEXT NOT NULL,
      version INTEGER NOT NULL,
      visible_at INTEGER NOT NULL,
      receive_count INTEGER NOT NULL DEFAULT 0,
      -- Who holds the lease (host/pid/nonce), so a restart can take back leases of a dead process at once.
      lease_owner TEXT,
      sent_at INTEGER NOT NULL
    ) STRICT;
    CREATE INDEX messages_visible ON messages (visible_at, id);
    CREATE INDEX messages_by_job ON messages (job_id, version);
  `,
  // The scheduler's own columns and indexes (for a backlog of thousands): the fields the budget
  // filler decides on, out of the JSON body and into covering indexes, so its rounds read index
  // entries along the due time instead of parsing every job; and the unfinished work counted by
  // triggers at each commit, so the scheduler's count reads a few rows whatever the backlog.
  2: `
    ALTER TABLE jobs ADD COLUMN workflow TEXT;
    ALTER TABLE jobs ADD COLUMN step TEXT;
    -- nextRunAt exactly (next_run_at is rounded down to whole milliseconds), while schedulable.
    ALTER TABLE jobs ADD COLUMN run_at REAL;
    ALTER TABLE jobs ADD COLUMN attempts INTEGER;
    ALTER TABLE jobs ADD COLUMN polls INTEGER;
    ALTER TABLE jobs ADD COLUMN poll_started_at REAL;
    ALTER TABLE jobs ADD COLUMN last_polled_at REAL;
    ALTER TABLE jobs ADD COLUMN in_flight_since REAL;
    ALTER TABLE jobs ADD COLUMN token_at REAL;
    ALTER TABLE jobs ADD COLUMN error_at REAL;
    ALTER TABLE jobs ADD COLUMN unsaved INTEGER;
    UPDATE jobs SET
      workflow = json_extract(body, '$.workflow'),
      step = json_extract(body, '$.step'),
      run_at = CASE WHEN next_run_at IS NULL THEN NULL ELSE json_extract(body, '$.nextRunAt') END,
      attempts = json_extract(body, '$.attempts'),
      polls = json_extract(body, '$.polls'),
      poll_started_at = json_extract(body, '$.pollStartedAt'),
      last_polled_at = json_extract(body, '$.lastPolledAt'),
      in_flight_since = json_extract(body, '$.inFlightSince'),
      token_at = json_extract(body, '$.tokenAt'),
      error_at = json_extract(body, '$.lastError.at'),
      unsaved = json_type(body, '$.unsaved') IS NOT NULL;
    -- Jobs due, with what the filler's count of the budget's demand needs (no row read).
    CREATE INDEX jobs_due_fill ON jobs (next_run_at, id, tenant, token_at) WHERE next_run_at IS NOT NULL;
    -- WAITING jobs by due time, with every field the filler plans on (no row read).
    CREATE INDEX jobs_waiting_fill ON jobs (next_run_at, id, tenant, version, workflow, step, run_at,
      attempts, polls, poll_started_at, last_polled_at, in_flight_since, token_at, error_at, unsaved)
      WHERE status = 'WAITING';
    -- Jobs not started yet, oldest first (ids sort by creation time).
    CREATE INDEX jobs_queued_fill ON jobs (id, version, tenant, next_run_at, token_at) WHERE status = 'QUEUED';

    -- Unfinished jobs counted by tenant, status, workflow and step, kept by the triggers below in the
    -- transaction of every write (any process). '' stands for a field missing from a damaged body.
    CREATE TABLE job_work (
      tenant TEXT NOT NULL,
      status TEXT NOT NULL,
      workflow TEXT NOT NULL,
      step TEXT NOT NULL,
      n INTEGER NOT NULL,
      PRIMARY KEY (tenant, status, workflow, step)
    ) STRICT, WITHOUT ROWID;
    INSERT INTO job_work (tenant, status, workflow, step, n)
      SELECT tenant, status, COALESCE(workflow, ''), COALESCE(step, ''), COUNT(*) FROM jobs
      WHERE status IN ('QUEUED', 'RUNNING', 'WAITING')
      GROUP BY tenant, status, COALESCE(workflow, ''), COALESCE(step, '');
    CREATE TRIGGER jobs_work_insert AFTER INSERT ON jobs
      WHEN new.status IN ('QUEUED', 'RUNNING', 'WAITING')
    BEGIN
      INSERT INTO job_work (tenant, status, workflow, step, n)
        VALUES (new.tenant, new.status, COALESCE(new.workflow, ''), COALESCE(new.step, ''), 1)
        ON CONFLICT (tenant, status, workflow, step) DO UPDATE SET n = n + 1;
    END;
    CREATE TRIGGER jobs_work_update AFTER UPDATE ON jobs
      WHEN old.status IS NOT new.status OR old.tenant IS NOT new.tenant
        OR old.workflow IS NOT new.workflow OR old.step IS NOT new.step
    BEGIN
      UPDATE job_work SET n = n - 1
        WHERE old.status IN ('QUEUED', 'RUNNING', 'WAITING') AND tenant = old.tenant AND status = old.status
          AND workflow = COALESCE(old.workflow, '') AND step = COALESCE(old.step, '');
      DELETE FROM job_work
        WHERE n <= 0 AND tenant = old.tenant AND status = old.status
          AND workflow = COALESCE(old.workflow, '') AND step = COALESCE(old.step, '');
      INSERT INTO job_work (tenant, status, workflow, step, n)
        SELECT new.tenant, new.status, COALESCE(new.workflow, ''), COALESCE(new.step, ''), 1
        WHERE new.status IN ('QUEUED', 'RUNNING', 'WAITING')
        ON CONFLICT (tenant, status, workflow, step) DO UPDATE SET n = n + 1;
    END;
    CREATE TRIGGER jobs_work_delete AFTER DELETE ON jobs
      WHEN old.status IN ('QUEUED', 'RUNNING', 'WAITING')
    BEGIN
      UPDATE job_work SET n = n - 1
        WHERE tenant = old.tenant AND status = old.status
          AND workflow = COALESCE(old.workflow, '') AND step = COALESCE(old.step, '');
      DELETE FROM job_work
        WHERE n <= 0 AND tenant = old.tenant AND status = old.status
          AND workflow = COALESCE(old.workflow, '') AND step = COALESCE(old.step, '');
    END;
  `,
  // A filler round with the budget full reads only the polls a re-aim can move: those scheduled
  // later after their task's start than the learned aim (plus a margin), per workflow step.
  3: `
    CREATE INDEX jobs_poll_lateness ON jobs (workflow, step, (run_at - poll_started_at), next_run_at, id,
      tenant, version, run_at, attempts, polls, poll_started_at, last_polled_at, in_flight_since, token_at,
      error_at, unsaved)
      WHERE status = 'WAITING' AND poll_started_at IS NOT NULL;
  `,
  // An opflow of schema 1 that opened the file before another process migrated it keeps writing
  // (its statements name only the old columns): its writes leave the filler's columns empty or as
  // they were. `fill_version` says which version of the job the columns were written from (this
  // code writes it with them); when a write leaves it behind, a trigger fills them from the body,
  // and that update moves the job's count in job_work from the group its stale columns named to its
  // own. SQLite runs the triggers of one write in an order of its own, so the counts now change by
  // upserts both ways (a decrement may come before its increment) and groups at 0 are dropped.
  4: `
    ALTER TABLE jobs ADD COLUMN fill_version INTEGER;
    UPDATE jobs SET fill_version = version;
    DROP TRIGGER jobs_work_insert;
    DROP TRIGGER jobs_work_update;
    DROP TRIGGER jobs_work_delete;
    CREATE TRIGGER jobs_work_insert AFTER INSERT ON jobs WHEN new.status IN ('QUEUED', 'RUNNING', 'WAITING')
    BEGIN
      INSERT INTO job_work (tenant, status, workflow, step, n)
        SELECT new.tenant, new.status, COALESCE(new.workflow, ''), COALESCE(new.step, ''), 1
        WHERE new.status IN ('QUEUED', 'RUNNING', 'WAITING')
        ON CONFLICT (tenant, status, workflow, step) DO UPDATE SET n = n + 1;
      DELETE FROM job_work WHERE n = 0;
    END;
    CREATE TRIGGER jobs_work_update AFTER UPDATE ON jobs
      WHEN old.status IS NOT new.status OR old.tenant IS NOT new.tenant
        OR old.workflow IS NOT new.workflow OR old.step IS NOT new.step
    BEGIN
      INSERT INTO job_work (tenant, status, workflow, step, n)
        SELECT old.tenant, old.status, COALESCE(old.workflow, ''), COALESCE(old.step, ''), -1
        WHERE old.status IN ('QUEUED', 'RUNNING', 'WAITING')
        ON CONFLICT (tenant, status, workflow, step) DO UPDATE SET n = n - 1;
      INSERT INTO job_work (tenant, status, workflow, step, n)
        SELECT new.tenant, new.status, COALESCE(new.workflow, ''), COALESCE(new.step, ''), 1
        WHERE new.status IN ('QUEUED', 'RUNNING', 'WAITING')
        ON CONFLICT (tenant, status, workflow, step) DO UPDATE SET n = n + 1;
      DELETE FROM job_work WHERE n = 0;
    END;
    CREATE TRIGGER jobs_work_delete AFTER DELETE ON jobs WHEN old.status IN ('QUEUED', 'RUNNING', 'WAITING')
    BEGIN
      INSERT INTO job_work (tenant, status, workflow, step, n)
        SELECT old.tenant, old.status, COALESCE(old.workflow, ''), COALESCE(old.step, ''), -1
        WHERE old.status IN ('QUEUED', 'RUNNING', 'WAITING')
        ON CONFLICT (tenant, status, workflow, step) DO UPDATE SET n = n - 1;
      DELETE FROM job_work WHERE n = 0;
    END;
    CREATE TRIGGER jobs_fill_refresh_insert AFTER INSERT ON jobs WHEN new.fill_version IS NOT new.version
    BEGIN
      ${refillFromBody}
    END;
    CREATE TRIGGER jobs_fill_refresh_update AFTER UPDATE ON jobs WHEN new.fill_version IS NOT new.version
    BEGIN
      ${refillFromBody}
    END;
  `,
  // Writes cost less: jobs_due_fill serves every read of jobs_due (same order, more columns), so
  // jobs_due goes; the oldest new jobs (read only near the end of a key's work) come from
  // jobs_by_status and their rows, so jobs_queued_fill goes (every new job wrote it); the count
  // triggers drop only the groups they touched (a key lookup, not a scan of job_work).
  5: `
    DROP INDEX jobs_due;
    DROP INDEX jobs_queued_fill;
    DROP TRIGGER jobs_work_insert;
    DROP TRIGGER jobs_work_update;
    DROP TRIGGER jobs_work_delete;
    CREATE TRIGGER jobs_work_insert AFTER INSERT ON jobs WHEN new.status IN ('QUEUED', 'RUNNING', 'WAITING')
    BEGIN
      INSERT INTO job_work (tenant, status, workflow, step, n)
        SELECT new.tenant, new.status, COALESCE(new.workflow, ''), COALESCE(new.step, ''), 1
        WHERE new.status IN ('QUEUED', 'RUNNING', 'WAITING')
        ON CONFLICT (tenant, status, workflow, step) DO UPDATE SET n = n + 1;
      DELETE FROM job_work WHERE n = 0 AND tenant = new.tenant AND status = new.status AND workflow = COALESCE(new.workflow, '') AND step = COALESCE(new.step, '');
    END;
    CREATE TRIGGER jobs_work_update AFTER UPDATE ON jobs
      WHEN old.status IS NOT new.status OR old.tenant IS NOT new.tenant
        OR old.workflow IS NOT new.workflow OR old.step IS NOT new.step
    BEGIN
      INSERT INTO job_work (tenant, status, workflow, step, n)
        SELECT old.tenant, old.status, COALESCE(old.workflow, ''), COALESCE(old.step, ''), -1
        WHERE old.status IN ('QUEUED', 'RUNNING', 'WAITING')
        ON CONFLICT (tenant, status, workflow, step) DO UPDATE SET n = n - 1;
      DELETE FROM job_work WHERE n = 0 AND tenant = old.tenant AND status = old.status AND workflow = COALESCE(old.workflow, '') AND step = COALESCE(old.step, '');
      INSERT INTO job_work (tenant, status, workflow, step, n)
        SELECT new.tenant, new.status, COALESCE(new.workflow, ''), COALESCE(new.step, ''), 1
        WHERE new.status IN ('QUEUED', 'RUNNING', 'WAITING')
        ON CONFLICT (tenant, status, workflow, step) DO UPDATE SET n = n + 1;
      DELETE FROM job_work WHERE n = 0 AND tenant = new.tenant AND status = new.status AND workflow = COALESCE(new.workflow, '') AND step = COALESCE(new.step, '');
    END;
    CREATE TRIGGER jobs_work_delete AFTER DELETE ON jobs WHEN old.status IN ('QUEUED', 'RUNNING', 'WAITING')
    BEGIN
      INSERT INTO job_work (tenant, status, workflow, step, n)
        SELECT old.tenant, old.status, COALESCE(old.workflow, ''), COALESCE(old.step, ''), -1
        WHERE old.status IN ('QUEUED', 'RUNNING', 'WAITING')
        ON CONFLICT (tenant, status, workflow, step) DO UPDATE SET n = n - 1;
      DELETE FROM job_work WHERE n = 0 AND tenant = old.tenant AND status = old.status AND workflow = COALESCE(old.workflow, '') AND step = COALESCE(old.step, '');
    END;
  `,
};

export interface OpenDatabaseOptions {
  /** How long a write waits for another process's lock before failing. Default: ten seconds. */
  busyTimeoutMs?: number | undefined;
}

/** A database this opflow cannot read as it is: written by a newer opflow, or not upgraded yet. */
export class DatabaseSchemaMismatch extends Error {
  override readonly name = 'DatabaseSchemaMismatch';
  constructor(
    readonly path: string,
    /** The file's schema version (0: created, no table written yet). */
    readonly found: number,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Opens (creating it and its folder if needed) the database at `path`, or an in-memory one for
 * `':memory:'`. WAL mode, `synchronous=NORMAL` (a committed write survives a process crash; only a
 * power loss may lose the last moments), a busy timeout, and the schema migrated to the latest.
 *
 * A file already in WAL mode at the latest schema is only read while opening: the journal mode and
 * the schema version are checked first, and the write lock a migration needs is taken only when the
 * file is behind. (Taking it at every open made each reader of a busy file a writer.)
 */
export function openLocalDatabase(path: string, options: OpenDatabaseOptions = {}): LocalDatabase {
  const inMemory = path === ':memory:';
  if (!inMemory) mkdirSync(dirname(resolve(path)), { recursive: true });
  const db = new Database(inMemory ? ':memory:' : resolve(path));
  try {
    db.pragma(`busy_timeout = ${busyTimeoutOf(options)}`);
    // Setting WAL again is a no-op, but a file still in rollback mode would need an exclusive lock.
    if (!inMemory && db.pragma('journal_mode', { simple: true }) !== 'wal') db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.pragma('foreign_keys = ON');
    if (versionOf(db) !== schemaVersion) migrate(db);
    return db;
  } catch (error) {
    db.close();
    throw new Error(`cannot open the opflow database at ${path}: ${errorMessage(error)}`, {
      cause: error,
    });
  }
}

/**
 * Opens the existing database at `path` to read only (a status, a test's snapshot): nothing is
 * written, not even a migration. A file behind this opflow's schema is refused with
 * {@link DatabaseSchemaMismatch} ("run any opflow command to upgrade it"), as is one written by a
 * newer opflow; a missing file is refused too.
 */
export function openLocalDatabaseToRead(path: string, options: OpenDatabaseOptions = {}): LocalDatabase {
  const db = new Database(resolve(path), { readonly: true, fileMustExist: true });
  try {
    db.pragma(`busy_timeout = ${busyTimeoutOf(options)}`);
    const found = versionOf(db);
    if (found > schemaVersion) throw newerSchema(path, found);
    if (found < schemaVersion)
      throw new DatabaseSchemaMismatch(
        path,
        found,
        `the opflow database at ${path} is at schema ${found}, this opflow reads schema ${schemaVersion}: run any opflow command (opflow list) to upgrade it`,
      );
    return db;
  } catch (error) {
    db.close();
    throw error;
  }
}

function busyTimeoutOf(options: OpenDatabaseOptions): number {
  return Math.max(0, Math.floor(options.busyTimeoutMs ?? 10_000));
}

function versionOf(db: LocalDatabase): number {
  return db.pragma('user_version', { simple: true }) as number;
}

function newerSchema(path: string, found: number): DatabaseSchemaMismatch {
  return new DatabaseSchemaMismatch(
    path,
    found,
    `the database was written by a newer opflow (schema ${found}, this one knows ${schemaVersion})`,
  );
}

function migrate(db: LocalDatabase): void {
  // IMMEDIATE: two processes opening a file that is behind at once must not both migrate it; the
  // version is read again under the lock (the other may have done it meanwhile).
  db.transaction(() => {
    const current = versionOf(db);
    if (current > schemaVersion) throw newerSchema(db.name, current);
    for (let version = current + 1; version <= schemaVersion; version += 1) {
      const sql = migrations[version];
      if (sql === undefined) throw new Error(`no migration to schema version ${version}`);
      db.exec(sql);
      db.pragma(`user_version = ${version}`);
    }
  }).immediate();
}
