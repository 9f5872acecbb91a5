/**
 * One build shared by every process that asks for it: the first process to find no usable build
 * takes a lock file (created atomically, `open(..., 'wx')`), builds into a folder of its own and
 * renames it into place, then records it in `current.json` (also renamed into place, so a reader
 * sees the old record or the new one, never half of one). Processes that ask meanwhile wait for the
 * lock to go and take that build. A lock whose holder has died (its pid is gone) or that is older
 * than `staleLockMs` is taken over. A build is reused while `fresh(record)` says so (the caller
 * compares the inputs the build read with the files as they are now).
 *
 * The aws e2e files each run in a process of their own (vitest's forks pool) and all need the same
 * Lambda bundles: with this, one of them builds and the others reuse (scripts/lambda/bundle-functions.ts).
 */
import { randomUUID } from 'node:crypto';
import {
  link,
  mkdir,
  open,
  readdir,
  readFile,
  rename,
  rm,
  stat,
  unlink,
  utimes,
  writeFile,
} from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';

export interface BuildOnceOptions<R> {
  /** The folder of this kind of build (one per build key): holds the lock, the record and the builds. */
  home: string;
  /** Builds into `dir` (an empty folder that exists) and returns what to record about the build. */
  build(dir: string): Promise<R>;
  /** Whether a recorded build can still be used (nothing it was built from has changed). */
  fresh(record: R): Promise<boolean>;
  /** A lock older than this is taken over even when its holder still runs (default 10 minutes). */
  staleLockMs?: number;
  /** How often a waiting process looks again (default 250 ms). */
  pollMs?: number;
  /** Replaced builds are deleted this long after they were replaced (default one day). */
  keepReplacedMs?: number;
}

export interface BuildOnceResult<R> {
  /** The build's folder (never changed once recorded; do not write into it). */
  dir: string;
  record: R;
  /** True when this call built it; false when it reused another call's build. */
  built: boolean;
}

interface Current<R> {
  build: string;
  record: R;
}

interface LockHolder {
  pid: number;
  host: string;
  at: number;
  token: string;
}

/**
 * The real time: the aws e2e fakes `Date` (vitest fake timers, a simulated clock from January 2026)
 * in the processes that call this, and a lock's age or a build's must not follow that clock.
 */
const realNow = () => performance.timeOrigin + performance.now();

const LOCK = 'build.lock';
const CURRENT = 'current.json';
const PARTIAL = '.partial';

export async function buildOnce<R>(options: BuildOnceOptions<R>): Promise<BuildOnceResult<R>> {
  const { home } = options;
  const staleLockMs = options.staleLockMs ?? 10 * 60_000;
  const pollMs = options.pollMs ?? 250;
  await mkdir(home, { recursive: true });
  for (;;) {
    const reusable = await usable(options);
    if (reusable) return reusable;
    const token = await takeLock(home, staleLockMs);
    if (token === undefined) {
      await new Promise((resolve) => setTimeout(resolve, pollMs));
      continue;
    }
    try {
      // Another process may have recorded a build between our look and our lock.
      const recorded = await usable(options);
      if (recorded) return recorded;
      return await buildAndRecord(options, staleLockMs);
    } finally {
      await releaseLock(home, token);
    }
  }
}

async function readCurrent<R>(home: string): Promise<Current<R> | undefined> {
  try {
    return JSON.parse(await readFile(join(home, CURRENT), 'utf8')) as Current<R>;
  } catch {
    return undefined;
  }
}

async function usable<R>(options: BuildOnceOptions<R>): Promise<BuildOnceResult<R> | undefined> {
  const current = await readCurrent<R>(options.home);
  if (!current || !(await options.fresh(current.record))) return undefined;
  return { dir: join(options.home, current.build), record: current.record, built: false };
}

async function buildAndRecord<R>(
  options: BuildOnceOptions<R>,
  staleLockMs: number,
): Promise<BuildOnceResult<R>> {
  const { home } = options;
  const previous = await readCurrent<R>(home);
  const build = randomUUID();
  const partial = join(home, `${build}${PARTIAL}`);
  const dir = join(home, build);
  await mkdir(partial);
  let record: R;
  try {
    record = await options.build(partial);
    await rename(partial, dir);
  } catch (error) {
    await rm(partial, { recursive: true, force: true });
    throw error;
  }
  const next = join(home, `current.${build}.json`);
  await writeFile(next, JSON.stringify({ build, record } satisfies Current<R>));
  await rename(next, join(home, CURRENT));
  // A replaced build may still be read by a process that took it before: it is kept a while,
  // counted from now (its folder's time is its replacement's).
  if (previous) {
    const now = realNow() / 1000;
    await utimes(join(home, previous.build), now, now).catch(() => {});
  }
  await removeOld(home, build, options.keepReplacedMs ?? 24 * 3600_000, staleLockMs);
  return { dir, record, built: true };
}

async function removeOld(
  home: string,
  keep: string,
  keepReplacedMs: number,
  staleLockMs: number,
): Promise<void> {
  const now = realNow();
  for (const entry of await readdir(home, { withFileTypes: true })) {
    if (!entry.isDirectory() || entry.name === keep) continue;
    const at = await stat(join(home, entry.name)).catch(() => undefined);
    if (!at) continue;
    // A partial folder is a dead builder's (the lock holder is this process).
    const limit = entry.name.endsWith(PARTIAL) ? staleLockMs : keepReplacedMs;
    if (now - at.mtimeMs > limit) await rm(join(home, entry.name), { recursive: true, force: true });
  }
}

/** Creates the lock (or takes over a stale one); the lock's token, or undefined when another holds it. */
async function takeLock(home: string, staleLockMs: number): Promise<string | undefined> {
  const path = join(home, LOCK);
  const holder: LockHolder = { pid: process.pid, host: hostname(), at: realNow(), token: randomUUID() };
  try {
    const file = await open(path, 'wx');
    try {
      await file.writeFile(JSON.stringify(holder));
    } finally {
      await file.close();
    }
    return holder.token;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  const seen = await readFile(path, 'utf8').catch(() => undefined);
  if (seen === undefined) return undefined; // released meanwhile: look again
  if (!(await isStale(path, seen, staleLockMs))) return undefined;
  // Take the stale lock away (renamed, so that two processes cannot both remove it), then check
  // that what was renamed is the lock judged stale: if a new holder's lock was renamed instead,
  // it is put back (link fails when yet another lock exists, which then stands).
  const aside = join(home, `${LOCK}.${holder.token}`);
  try {
    await rename(path, aside);
  } catch {
    return undefined;
  }
  const taken = await readFile(aside, 'utf8').catch(() => undefined);
  if (taken !== seen) await link(aside, path).catch(() => {});
  await unlink(aside).catch(() => {});
  return undefined; // look again: the lock is free now (or held by a live process)
}

async function isStale(path: string, content: string, staleLockMs: number): Promise<boolean> {
  let holder: LockHolder | undefined;
  try {
    holder = JSON.parse(content) as LockHolder;
  } catch {
    holder = undefined;
  }
  if (!holder || typeof holder.pid !== 'number') {
    // Created but not yet written (or written by something else): stale only when old.
    const at = await stat(path).catch(() => undefined);
    return at !== undefined && realNow() - at.mtimeMs > staleLockMs;
  }
  if (realNow() - holder.at > staleLockMs) return true;
  if (holder.host !== hostname()) return false;
  return !alive(holder.pid);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function releaseLock(home: string, token: string): Promise<void> {
  const path = join(home, LOCK);
  // Only our own lock: after a takeover (we were judged stale) the lock is another's.
  const content = await readFile(path, 'utf8').catch(() => undefined);
  if (content === undefined) return;
  try {
    if ((JSON.parse(content) as LockHolder).token !== token) return;
  } catch {
    return;
  }
  await unlink(path).catch(() => {});
}
