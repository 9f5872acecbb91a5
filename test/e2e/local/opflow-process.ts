/**
 * Runs the real `opflow` command (bin/opflow.js) as a child process, the way a user does, and
 * collects what it prints. Used by the local end-to-end tests.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
export const opflowBin = fileURLToPath(new URL('../../../bin/opflow.js', import.meta.url));

export interface OpflowResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface OpflowProcess {
  child: ChildProcess;
  /** Resolves when the process has exited. */
  done: Promise<OpflowResult>;
  /** Resolves once standard error has printed `count` lines that match `pattern`. */
  waitForLines(pattern: RegExp, count: number): Promise<void>;
  stderrSoFar(): string;
}

const running = new Set<ChildProcess>();

/** Kills (SIGKILL) every opflow this module started that is still running: a failed test leaves none. */
export function killRunningOpflows(): void {
  for (const child of running) child.kill('SIGKILL');
  running.clear();
}

/** Environment for a child: this process's, minus anything that would point it elsewhere. */
export function childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of Object.keys(env)) if (name.startsWith('OPFLOW_')) delete env[name];
  return { ...env, ...extra };
}

export function startOpflow(
  args: string[],
  options: { env: NodeJS.ProcessEnv; cwd: string; stdin?: string },
): OpflowProcess {
  const child = spawn(process.execPath, [opflowBin, ...args], {
    env: options.env,
    cwd: options.cwd,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  running.add(child);
  child.on('exit', () => running.delete(child));
  let stdout = '';
  let stderr = '';
  const watchers: { pattern: RegExp; count: number; resolve: () => void }[] = [];
  child.stdout?.on('data', (chunk: Buffer) => {
    stdout += chunk.toString('utf8');
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
    for (const watcher of [...watchers]) {
      const lines = stderr.split('\n').filter((line) => watcher.pattern.test(line));
      if (lines.length >= watcher.count) {
        watchers.splice(watchers.indexOf(watcher), 1);
        watcher.resolve();
      }
    }
  });
  child.stdin?.end(options.stdin ?? '');
  const done = new Promise<OpflowResult>((resolve) => {
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
  return {
    child,
    done,
    stderrSoFar: () => stderr,
    waitForLines: (pattern, count) =>
      new Promise<void>((resolve, reject) => {
        if (stderr.split('\n').filter((line) => pattern.test(line)).length >= count) return resolve();
        watchers.push({ pattern, count, resolve });
        void done.then((result) =>
          reject(
            new Error(
              `opflow exited (${result.code ?? result.signal}) before printing ${count} lines like ${pattern}:\n${result.stderr}`,
            ),
          ),
        );
      }),
  };
}

/** Runs `opflow <args>` to its end. */
export function runOpflow(
  args: string[],
  options: { env: NodeJS.ProcessEnv; cwd: string; stdin?: string },
): Promise<OpflowResult> {
  return startOpflow(args, options).done;
}
