// Opening the local database: a file at the latest schema opens without the write lock (a reader of
// a busy file is not made a writer), a file behind is migrated once, and the read-only open reads
// without writing anything, refusing a file it would have to upgrade with what to do.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  DatabaseSchemaMismatch,
  migrations,
  openLocalDatabase,
  openLocalDatabaseToRead,
} from '../../../../shared/backends/local/database';

let dir: string;
let path: string;
const latest = Math.max(...Object.keys(migrations).map(Number));

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'opflow-database-'));
  path = join(dir, 'state', 'opflow.db');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** A file written by an older opflow: the migrations up to `version` only. */
const fileAtSchema = (version: number) => {
  openLocalDatabase(path).close();
  rmSync(path);
  rmSync(`${path}-wal`, { force: true });
  rmSync(`${path}-shm`, { force: true });
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  for (let at = 1; at <= version; at += 1) {
    db.exec(migrations[at] ?? '');
    db.pragma(`user_version = ${at}`);
  }
  db.close();
};

/** Another process's connection in the middle of a write transaction. */
const writerHoldingTheLock = () => {
  const writer = new Database(path);
  writer.exec('BEGIN IMMEDIATE');
  writer.exec("UPDATE jobs SET status = status WHERE id = 'none'");
  return writer;
};

describe('openLocalDatabase', () => {
  it('creates the file and its folder at the latest schema, in WAL mode', () => {
    const db = openLocalDatabase(path);
    expect(db.pragma('user_version', { simple: true })).toBe(latest);
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    db.close();
  });

  it('opens a file at the latest schema while another process holds the write lock, waiting for nothing', () => {
    openLocalDatabase(path).close();
    const writer = writerHoldingTheLock();
    try {
      const db = openLocalDatabase(path, { busyTimeoutMs: 0 });
      expect(db.prepare('SELECT count(*) AS n FROM jobs').get()).toEqual({ n: 0 });
      db.close();
    } finally {
      writer.close();
    }
  });

  it('migrates a file written by an older opflow, taking the lock then', () => {
    fileAtSchema(latest - 1);
    const writer = writerHoldingTheLock();
    expect(() => openLocalDatabase(path, { busyTimeoutMs: 0 })).toThrow(
      `cannot open the opflow database at ${path}: database is locked`,
    );
    writer.close();
    const db = openLocalDatabase(path);
    expect(db.pragma('user_version', { simple: true })).toBe(latest);
    db.close();
  });
});

describe('openLocalDatabaseToRead', () => {
  it('reads while another process holds the write lock, and writes nothing', () => {
    openLocalDatabase(path).close();
    const writer = writerHoldingTheLock();
    try {
      const db = openLocalDatabaseToRead(path, { busyTimeoutMs: 0 });
      expect(db.prepare('SELECT count(*) AS n FROM jobs').get()).toEqual({ n: 0 });
      expect(() => db.exec('CREATE TABLE IF NOT EXISTS other (x)')).toThrow(/readonly/);
      db.close();
    } finally {
      writer.close();
    }
  });

  it('refuses a file behind this opflow, saying how to upgrade it, and leaves it as it was', () => {
    fileAtSchema(latest - 1);
    const refusal = (() => {
      try {
        openLocalDatabaseToRead(path);
      } catch (error) {
        return error;
      }
    })();
    expect(refusal).toBeInstanceOf(DatabaseSchemaMismatch);
    expect((refusal as DatabaseSchemaMismatch).found).toBe(latest - 1);
    expect((refusal as Error).message).toBe(
      `the opflow database at ${path} is at schema ${latest - 1}, this opflow reads schema ${latest}: run any opflow command (opflow list) to upgrade it`,
    );
    const raw = new Database(path, { readonly: true });
    expect(raw.pragma('user_version', { simple: true })).toBe(latest - 1);
    raw.close();
  });

  it('refuses a file written by a newer opflow, and a missing one', () => {
    openLocalDatabase(path).close();
    const raw = new Database(path);
    raw.pragma(`user_version = ${latest + 1}`);
    raw.close();
    expect(() => openLocalDatabaseToRead(path)).toThrow(`newer opflow (schema ${latest + 1}`);
    const missing = join(dir, 'none', 'opflow.db');
    expect(() => openLocalDatabaseToRead(missing)).toThrow();
    expect(existsSync(missing)).toBe(false);
  });
});
