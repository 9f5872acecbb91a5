/**
 * Sharing one built-in sandbox between `opflow` commands. Only one process at a time may hold the
 * sandbox's state file (sandbox-state.json, which lets a restarted command continue the same
 * tasks), so the process that starts the built-in sandbox writes `sandbox.json` beside the
 * database, and a command started while that process lives (e.g. `opflow resume <jobId> --select
 * ...` in another terminal) uses the same live sandbox instead of starting its own.
 */
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import * as z from 'zod';

const sandboxRecordSchema = z.strictObject({
  url: z.url(),
  pid: z.number().int().positive(),
  speed: z.number().min(1),
  startedAt: z.number(),
});

export type SandboxRecord = z.infer<typeof sandboxRecordSchema>;

/** `sandbox.json` beside the database file. */
export function sandboxRecordPath(dbPath: string): string {
  return join(dirname(resolve(dbPath)), 'sandbox.json');
}

/** Says that this process hosts the built-in sandbox for this database. */
export function writeSandboxRecord(path: string, record: SandboxRecord): void {
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(record)}\n`);
  renameSync(temporary, path);
}

/** Removes the record if it is still this process's. */
export function removeSandboxRecord(path: string): void {
  const record = readSandboxRecord(path);
  if (record?.pid === process.pid) rmSync(path, { force: true });
}

function readSandboxRecord(path: string): SandboxRecord | undefined {
  try {
    const parsed = sandboxRecordSchema.safeParse(JSON.parse(readFileSync(path, 'utf8')));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The built-in sandbox of another live opflow process of this database, if there is one and it
 * answers its health check within a second.
 */
export async function findLiveSandbox(path: string): Promise<SandboxRecord | undefined> {
  const record = readSandboxRecord(path);
  if (!record || record.pid === process.pid || !processIsAlive(record.pid)) return undefined;
  try {
    const response = await fetch(`${record.url}/__sandbox/health`, { signal: AbortSignal.timeout(1_000) });
    await response.body?.cancel();
    return response.ok ? record : undefined;
  } catch {
    return undefined;
  }
}

function processIsAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}
