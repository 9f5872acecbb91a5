/**
 * The local backend's one database file: jobs and queue messages live together in SQLite (WAL mode),
 * so a job's commit and its next message survive a crash together and several `opflow` processes on
 * one machine (a run, a `resume --select` from another terminal) can share it safely.
 */
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import Database from 'better-sqlite3';

export type LocalDatabase = Database.Database;

/** The schema version this code writes; older files are migrated forward on open. */
const schemaVersion = 1;

const migrations: Record<number, string> = {
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
};

export interface OpenDatabaseOptions {
  /** How long a write waits for another process's lock before failing. Default: ten seconds. */
  busyTimeoutMs?: number | undefined;
}

/**
 * Opens (creating it and its folder if needed) the database at `path`, or an in-memory one for
 * `':memory:'`. WAL mode, `synchronous=NORMAL` (a committed write survives a process crash; only a
 * power loss may lose the last moments), a busy timeout, and the schema migrated to the latest.
 */
export function openLocalDatabase(path: string, options: OpenDatabaseOptions = {}): LocalDatabase {
  const inMemory = path === ':memory:';
  if (!inMemory) mkdirSync(dirname(resolve(path)), { recursive: true });
  const db = new Database(inMemory ? ':memory:' : resolve(path));
  try {
    db.pragma(`busy_timeout = ${Math.max(0, Math.floor(options.busyTimeoutMs ?? 10_000))}`);
    if (!inMemory) db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.pragma('foreign_keys = ON');
    migrate(db);
    return db;
  } catch (error) {
    db.close();
    throw new Error(`cannot open the opflow database at ${path}: ${(error as Error).message}`, {
      cause: error,
    });
  }
}

function migrate(db: LocalDatabase): void {
  // IMMEDIATE: two processes opening a new file at once must not both create the tables.
  db.transaction(() => {
    const current = db.pragma('user_version', { simple: true }) as number;
    if (current > schemaVersion) {
      throw new Error(
        `the database was written by a newer opflow (schema ${current}, this one knows ${schemaVersion})`,
      );
    }
    for (let version = current + 1; version <= schemaVersion; version += 1) {
      const sql = migrations[version];
      if (sql === undefined) throw new Error(`no migration to schema version ${version}`);
      db.exec(sql);
      db.pragma(`user_version = ${version}`);
    }
  }).immediate();
}
