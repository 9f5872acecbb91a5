/**
 * Starting the built-in sandbox for the local runtime: in-process, on a free port of 127.0.0.1,
 * following the runtime's clock, with its tasks sped up `speed` times for demos.
 */
import {
  defaultTaskDuration,
  defaultTaskDurations,
  SANDBOX_API_KEY,
  type Sandbox,
  type SandboxOptions,
  startSandbox,
  type TaskDuration,
} from '../sandbox';

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

export async function startBuiltInSandbox(
  options: SandboxLaunchOptions & { now: () => number; speed: number },
): Promise<BuiltInSandbox> {
  const { speed, ...sandboxOptions } = options;
  const server = await startSandbox({
    port: 0,
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
