/**
 * The places a local command writes to, checked before anything else happens (before any paid
 * call): the database file (`--db` / `OPFLOW_DB`) and the report folder (`--out` / `OPFLOW_OUT`).
 * A folder given as the database, a file given as the report folder, a path under a regular file,
 * or a place this user cannot write is named with its flag or variable and what to do instead,
 * rather than surfacing later as "unable to open database file", EEXIST, or a job failed after the
 * upstream was paid.
 */
import { accessSync, constants, mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { pseudoFileSystemOf } from '../../files/bounded-read';
import { ConfigError } from '../config-error';

/** Where a setting came from, for messages: its flag, its variable, or its default. */
export interface PlaceSource {
  /** e.g. `--db`, `OPFLOW_DB`, or `the default database (.opflow/opflow.db)`. */
  name: string;
  fromFlag: boolean;
}

/** The nearest part of `path` that exists (the path itself, or a parent), with its stat. */
function nearestExisting(path: string): { path: string; stat: import('node:fs').Stats } | undefined {
  let current = resolve(path);
  for (;;) {
    try {
      return { path: current, stat: statSync(current) };
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOTDIR') {
        // A parent is a file: keep climbing to name it.
      } else if (code !== 'ENOENT') throw error;
    }
    const parent = dirname(current);
    if (parent === current) return undefined;
    current = parent;
  }
}

function fail(source: PlaceSource, message: string): never {
  throw new ConfigError(`${source.name}: ${message}`, source.fromFlag);
}

/** Makes the folder (and its parents) and proves a file can be written in it. */
function proveWritableFolder(folder: string, source: PlaceSource, what: string): void {
  try {
    mkdirSync(folder, { recursive: true });
    const probe = join(folder, `.opflow-write-check-${process.pid}`);
    writeFileSync(probe, '');
    rmSync(probe, { force: true });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'error';
    fail(source, `cannot write ${what} in ${folder} (${code}); choose a folder you can write to`);
  }
}

/** Checks the database path: a file (or none yet) in a folder this process can write. */
export function checkDatabasePlace(dbPath: string, source: PlaceSource): void {
  if (dbPath === ':memory:') return;
  const path = resolve(dbPath);
  const found = nearestExisting(path);
  // /proc and /sys files claim to be regular files: refused by where they are, before SQLite opens one.
  const pseudo = found ? pseudoFileSystemOf(found.path) : undefined;
  if (pseudo) fail(source, `${path} is on ${pseudo}, not on a disk; choose a database file on a disk`);
  if (found?.path === path) {
    if (found.stat.isDirectory()) {
      fail(source, `${path} is a folder; name the database file, e.g. ${join(path, 'opflow.db')}`);
    }
    if (!found.stat.isFile()) fail(source, `${path} is not a regular file (a FIFO, a device or a socket)`);
    try {
      accessSync(path, constants.R_OK | constants.W_OK);
    } catch {
      fail(source, `${path} cannot be read and written by this user`);
    }
  } else if (found && !found.stat.isDirectory()) {
    fail(source, `${found.path} is a file, so ${path} cannot be made under it; choose another path`);
  }
  // SQLite writes its journal beside the file: the folder must take new files.
  proveWritableFolder(dirname(path), source, 'the database');
}

/** Checks the report folder: a folder (or none yet) this process can write. */
export function checkOutputPlace(outDir: string, source: PlaceSource): void {
  const path = resolve(outDir);
  const found = nearestExisting(path);
  if (found?.path === path && !found.stat.isDirectory()) {
    fail(source, `${path} is a file, not a folder; name a folder for the reports`);
  }
  if (found && found.path !== path && !found.stat.isDirectory()) {
    fail(source, `${found.path} is a file, so the folder ${path} cannot be made under it`);
  }
  proveWritableFolder(path, source, 'reports');
}
