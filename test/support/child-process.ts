/**
 * One child process run to its end, its output kept: what the tests that spawn a script or the real
 * bin/opflow.js and read what it printed share (the build-once test's competing processes, the
 * document bombs' opflow run, the shared DynamoDB Local's killed starter).
 */
import { type ChildProcessByStdio, type SpawnOptions, spawn } from 'node:child_process';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';

/** The repository's root: the working folder a TypeScript script run by `tsScriptArgs` needs. */
export const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

export type RunningChild = ChildProcessByStdio<null, Readable, Readable>;

export interface ChildRun {
  /** The child's pid (a process gone once the run ends). */
  pid: number;
  /** The exit code (null when a signal ended it). */
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  elapsedMs: number;
  /** Whether `timeoutMs` passed and the child was killed (SIGKILL). */
  timedOut: boolean;
}

export interface RunChildOptions extends Omit<SpawnOptions, 'stdio'> {
  /** Kill the child (SIGKILL) after this long; the run then ends with `timedOut`. */
  timeoutMs?: number;
  /** Called once the child is spawned (e.g. to sample its memory or kill it); may return a cleanup. */
  onStart?: (child: RunningChild) => (() => void) | undefined;
}

/** Runs `command` to its end (stdin closed, stdout and stderr kept) and says how it ended. */
export function runChild(
  command: string,
  args: readonly string[],
  options: RunChildOptions = {},
): Promise<ChildRun> {
  const { timeoutMs, onStart, ...spawnOptions } = options;
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const child = spawn(command, args, { ...spawnOptions, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    let timedOut = false;
    const killer =
      timeoutMs === undefined
        ? undefined
        : setTimeout(() => {
            timedOut = true;
            child.kill('SIGKILL');
          }, timeoutMs);
    const cleanup = onStart?.(child);
    const finish = () => {
      if (killer) clearTimeout(killer);
      cleanup?.();
    };
    child.on('error', (error) => {
      finish();
      reject(error);
    });
    child.on('close', (code, signal) => {
      finish();
      resolve({
        pid: child.pid ?? -1,
        code,
        signal,
        stdout,
        stderr,
        elapsedMs: Date.now() - started,
        timedOut,
      });
    });
  });
}

/**
 * The arguments that have Node run `script` (an ES module in TypeScript, its imports relative to
 * the repository's root: run it with `cwd: repoRoot`) with `args` as `process.argv.slice(-args.length)`.
 */
export function tsScriptArgs(script: string, ...args: string[]): string[] {
  return ['--import', 'tsx', '--input-type=module', '-e', script, ...args];
}

/** The last line a child printed on stdout, parsed as JSON (what the scripts of these tests answer). */
export function lastJsonLine<T>(run: ChildRun): T {
  if (run.code !== 0) throw new Error(`exit ${run.code ?? run.signal}: ${run.stderr}`);
  return JSON.parse(run.stdout.trim().split('\n').at(-1) ?? '') as T;
}
