/**
 * A local database read as another process is working on it (the e2e tests watch a real opflow this
 * way, every few milliseconds): opened read-only, never migrated, so the watcher takes no write lock
 * from the process it watches, and creates no file it has not created yet.
 */
import { existsSync } from 'node:fs';
import {
  DatabaseSchemaMismatch,
  type LocalDatabase,
  openLocalDatabaseToRead,
  SqliteJobStore,
} from '../../shared/backends/local';
import type { Job } from '../../shared/engine/job-record';
import { listAll } from '../../shared/runtime/job-queries';

/**
 * What `read` finds in the database at `path`, or `empty` while the file is not there or is still
 * being created (schema 0: the opflow creating it has not written its tables yet).
 */
export async function readDatabase<T>(
  path: string,
  read: (db: LocalDatabase) => T | Promise<T>,
  empty: T,
): Promise<T> {
  if (!existsSync(path)) return empty;
  let db: LocalDatabase;
  try {
    db = openLocalDatabaseToRead(path);
  } catch (error) {
    if (error instanceof DatabaseSchemaMismatch && error.found === 0) return empty;
    throw error;
  }
  try {
    return await read(db);
  } finally {
    db.close();
  }
}

/** Every job in the database at `path`; none while the file is not there or is being created. */
export function jobsInDatabase(path: string): Promise<Job[]> {
  return readDatabase(path, (db) => listAll(new SqliteJobStore(db), {}), []);
}
