/**
 * The file a sandbox keeps its durable state in, as bytes: read it, replace it atomically, move a
 * bad one aside, and hold a lock so two live sandboxes never write the same file.
 *
 * A write goes to `<file>.tmp`, is flushed to disk (fsync), then renamed over the file, so a process
 * killed at any moment (kill -9 included) leaves either the old state or the new one, never a mix.
 * A temporary file a killed write left behind is simply removed at the next start.
 */
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { dirname, resolve } from 'node:path';
import * as z from 'zod';

/** A state file another live sandbox holds. */
export class StateFileInUseError extends Error {
  constructor(
    readonly path: string,
    readonly pid: number,
  ) {
    super(
      `the sandbox state file ${path} is in use by process ${pid} (another sandbox is running on it; stop it or use another file)`,
    );
    this.name = 'StateFileInUseError';
  }
}

const lockSchema = z.strictObject({ pid: z.number().int().positive(), holder: z.string().min(1) });

/** State files locked by sandboxes of this process, so a stale lock with a reused pid is told apart. */
const lockedHere = new Set<string>();

export class StateFile {
  readonly path: string;
  private readonly temporaryPath: string;
  private readonly lockPath: string;
  private readonly holder = randomBytes(8).toString('hex');
  private locked = false;

  constructor(path: string) {
    this.path = resolve(path);
    this.temporaryPath = `${this.path}.tmp`;
    this.lockPath = `${this.path}.lock`;
  }

  /**
   * Take the file for this sandbox: creates its folder, refuses (StateFileInUseError) when a live
   * process holds it, takes over a lock a dead one left, and removes a half-written temporary file.
   */
  lock(): void {
    mkdirSync(dirname(this.path), { recursive: true });
    const mine = `${JSON.stringify({ pid: process.pid, holder: this.holder })}\n`;
    try {
      writeFileSync(this.lockPath, mine, { flag: 'wx' });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const other = this.readLock();
      if (other && processIsAlive(other.pid) && (other.pid !== process.pid || lockedHere.has(this.path))) {
        throw new StateFileInUseError(this.path, other.pid);
      }
      // Left by a process that is gone (or unreadable): take it over.
      writeFileSync(this.lockPath, mine);
    }
    this.locked = true;
    lockedHere.add(this.path);
    rmSync(this.temporaryPath, { force: true });
  }

  /** Give the file up (the lock is removed only if it is still this sandbox's). */
  unlock(): void {
    if (!this.locked) return;
    this.locked = false;
    lockedHere.delete(this.path);
    if (this.readLock()?.holder === this.holder) rmSync(this.lockPath, { force: true });
  }

  /** The file's text, or undefined when there is no file. */
  read(): string | undefined {
    try {
      return readFileSync(this.path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
  }

  /** Replace the file's content atomically; returns once the new content is on disk. */
  write(text: string): void {
    const bytes = Buffer.from(text, 'utf8');
    const fd = openSync(this.temporaryPath, 'w');
    try {
      for (let offset = 0; offset < bytes.length; ) offset += writeSync(fd, bytes, offset);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(this.temporaryPath, this.path);
    syncFolder(dirname(this.path));
  }

  /** Delete the file (nothing happens when there is none). Hold the lock. */
  remove(): void {
    rmSync(this.path, { force: true });
  }

  /** Rename the file to `<file>.unreadable-<time>` (never over another) and return that path. */
  moveAside(now: Date = new Date()): string {
    const stamp = now.toISOString().replace(/[:.]/g, '-');
    let target = `${this.path}.unreadable-${stamp}`;
    for (let n = 2; existsSync(target); n++) target = `${this.path}.unreadable-${stamp}-${n}`;
    renameSync(this.path, target);
    return target;
  }

  private readLock(): z.infer<typeof lockSchema> | undefined {
    try {
      const parsed = lockSchema.safeParse(JSON.parse(readFileSync(this.lockPath, 'utf8')));
      return parsed.success ? parsed.data : undefined;
    } catch {
      return undefined;
    }
  }
}

/** Make a rename in the folder durable too (power loss); not every platform can, which is fine. */
function syncFolder(folder: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(folder, 'r');
    fsyncSync(fd);
  } catch {
    // Windows cannot open a folder for fsync.
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

function processIsAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'ESRCH';
  }
  // A killed process nobody has reaped yet (a zombie) still answers signal 0; Linux tells.
  if (process.platform !== 'linux') return true;
  try {
    return !/^\d+ \(.*\) Z/s.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'ENOENT';
  }
}

/**
 * Delete a state file no caller needs any more (say, no job will call its tasks again), under its
 * lock: throws StateFileInUseError when a live sandbox holds it; does nothing when there is no file.
 */
export function discardStateFile(path: string): void {
  const file = new StateFile(path);
  file.lock();
  try {
    file.remove();
  } finally {
    file.unlock();
  }
}
