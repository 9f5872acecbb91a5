/**
 * Starting the built-in sandbox for the local runtime: in-process, on a free port of 127.0.0.1,
 * following the runtime's clock, with its tasks sped up `speed` times for demos, and with a file
 * database its state kept in `sandbox-state.json` beside it, so a restarted `opflow run` or
 * `opflow resume` continues the same upstream tasks.
 */
import { dirname, join, resolve } from 'node:path';
import {
  defaultTaskDuration,
  defaultTaskDurations,
  SANDBOX_API_KEY,
  type Sandbox,
  type SandboxOptions,
  startSandbox,
  type TaskDuration,
} from '../../sandbox';

/** `sandbox-state.json` beside the database file: the built-in sandbox's tasks, links and ids. */
export function sandboxStatePath(dbPath: string): string {
  return join(dirname(resolve(dbPath)), 'sandbox-state.json');
}

/** The sandbox's well-known key (it opens nothing but the sandbox). */
export const sandboxApiKey = SANDBOX_API_KEY;

/** Sandbox options the runtime passes through (everything but what it decides itself). */
export type SandboxLaunchOptions = Omit<SandboxOptions, 'now'>;

export interface BuiltInSandbox {
  url: string;
  apiKey: string;
  /** The running sandbox itself (its ledger, its faults), for tests. */
  server: Sandbox;
  close(): Promise<void>;
}

/** Every default task duration divided by `speed`, unless the caller gave its own. */
export function scaledTaskDurations(speed: number): Record<string, TaskDuration> {
  const scaled: Record<string, TaskDuration> = {};
  for (const [operationId, duration] of Object.entries(defaultTaskDurations)) {
    if (duration) scaled[operationId] = scale(duration, speed);
  }
  return scaled;
}

function scale(duration: TaskDuration, speed: number): TaskDuration {
  return { meanMs: Math.round(duration.meanMs / speed), spreadMs: Math.round(duration.spreadMs / speed) };
}

/**
 * Starts the sandbox. With `stateFile`, it continues the file's tasks and, unless a port is given,
 * listens on the port it had (the links it handed out stay valid).
 */
export async function startBuiltInSandbox(
  options: SandboxLaunchOptions & { now: () => number; speed: number },
): Promise<BuiltInSandbox> {
  const { speed, ...sandboxOptions } = options;
  const server = await startSandbox({
    taskDurations: scaledTaskDurations(speed),
    defaultTaskDuration: scale(defaultTaskDuration, speed),
    ...sandboxOptions,
  });
  return {
    url: server.url,
    apiKey: SANDBOX_API_KEY,
    server,
    close: () => server.close(),
  };
}
