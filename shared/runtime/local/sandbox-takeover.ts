/**
 * Surviving the death of the process whose built-in sandbox this one uses. A command started while
 * another `opflow` process of the database hosts the built-in sandbox (`opflow resume <id> --select`
 * in a second terminal) calls that sandbox; when its host dies, the sandbox goes with it. Every call
 * then fails with "could not connect" (nothing was sent), and without this the jobs would fail for
 * good after their attempts.
 *
 * The client here wraps the real one: on a call refused before anything was sent, it takes the
 * sandbox over (starts the built-in sandbox on the same state file, which restores the dead host's
 * tasks and listens on the port it had), or switches to the sandbox a third process took over
 * meanwhile, and makes the call once more. Taking over happens once at a time; a host that is still
 * alive but not answering is waited for (the call's error goes back to the engine, which retries).
 */
import { OpenPlatformError } from '../../openplatform/errors';
import type { OpenPlatformClient } from '../../openplatform/types';
import { StateFileInUseError } from '../../sandbox';
import type { BuiltInSandbox } from './sandbox-launch';
import { findLiveSandbox, type SandboxRecord, writeSandboxRecord } from './sandbox-record';

export interface SandboxTakeoverOptions {
  /** The live sandbox found at start (another process's). */
  initial: SandboxRecord;
  /** `sandbox.json` beside the database. */
  recordPath: string;
  /** Makes a client for a sandbox URL. */
  makeClient: (baseUrl: string) => OpenPlatformClient;
  /** Starts the built-in sandbox on the database's state file (at the speed the jobs were planned for). */
  startSandbox: (speed: number) => Promise<BuiltInSandbox>;
  /** Told once this process hosts the sandbox (to close it with the pipeline). */
  onHosted: (sandbox: BuiltInSandbox) => void;
  announce: (line: string) => void;
  /** Whether a process lives (default: signal 0). */
  processIsAlive?: ((pid: number) => boolean) | undefined;
  /**
   * How often the host is looked at, so the sandbox is taken over as soon as its host is gone (not
   * only when a call is refused). Default: every second; 0 turns the watch off.
   */
  watchIntervalMs?: number | undefined;
}

/** Whether a call failed because nothing listened there (so nothing was sent and it may be made again). */
export function isConnectionRefused(error: unknown): boolean {
  if (
    error instanceof OpenPlatformError &&
    error.kind === 'network' &&
    /could not connect/.test(error.message)
  ) {
    return true;
  }
  return codesOf(error).includes('ECONNREFUSED');
}

function codesOf(error: unknown, depth = 0): string[] {
  if (typeof error !== 'object' || error === null || depth > 6) return [];
  const record = error as Record<string, unknown>;
  const own = typeof record.code === 'string' ? [record.code] : [];
  const inner = Array.isArray(record.errors) ? record.errors.flatMap((e) => codesOf(e, depth + 1)) : [];
  return [...own, ...inner, ...codesOf(record.cause, depth + 1)];
}

/** A client that follows the built-in sandbox from a dead host to this process (or to whoever took it). */
export function sandboxTakeoverClient(options: SandboxTakeoverOptions): OpenPlatformClient {
  const alive = options.processIsAlive ?? processIsAlive;
  let record = options.initial;
  let inner = options.makeClient(record.url);
  const retired: OpenPlatformClient[] = [];
  let takingOver: Promise<void> | undefined;
  let hosted = false;

  const takeOver = async (): Promise<void> => {
    if (hosted) return;
    const live = await findLiveSandbox(options.recordPath);
    if (live) {
      // Another process took it over already (or the host is back): follow it.
      if (live.url !== record.url) {
        retired.push(inner);
        inner = options.makeClient(live.url);
        options.announce(`opflow: the built-in sandbox moved to opflow process ${live.pid} at ${live.url}`);
      }
      record = live;
      return;
    }
    // Only a dead host's sandbox is taken; a live but silent one keeps its state file (and its tasks).
    if (alive(record.pid)) return;
    let sandbox: BuiltInSandbox;
    try {
      sandbox = await options.startSandbox(record.speed);
    } catch (error) {
      // A third process got the state file first: it will write the record; the next attempt follows it.
      if (error instanceof StateFileInUseError) return;
      throw error;
    }
    hosted = true;
    options.onHosted(sandbox);
    writeSandboxRecord(options.recordPath, {
      url: sandbox.url,
      pid: process.pid,
      speed: record.speed,
      startedAt: Date.now(),
    });
    const previous = record;
    record = { url: sandbox.url, pid: process.pid, speed: record.speed, startedAt: Date.now() };
    if (sandbox.url !== previous.url) {
      retired.push(inner);
      inner = options.makeClient(sandbox.url);
    }
    options.announce(
      `opflow: opflow process ${previous.pid}, which ran the built-in sandbox, is gone; this process took it over at ${sandbox.url} (its tasks continue)`,
    );
  };

  const takeOverOnce = (): Promise<void> => {
    takingOver ??= takeOver().finally(() => {
      takingOver = undefined;
    });
    return takingOver;
  };

  const watchEvery = options.watchIntervalMs ?? 1_000;
  const watch =
    watchEvery > 0
      ? setInterval(() => {
          if (!hosted && !alive(record.pid)) takeOverOnce().catch(() => undefined);
        }, watchEvery)
      : undefined;
  watch?.unref();

  const withTakeover = async <T>(attempt: (client: OpenPlatformClient) => Promise<T>): Promise<T> => {
    try {
      return await attempt(inner);
    } catch (error) {
      if (!isConnectionRefused(error)) throw error;
      await takeOverOnce();
      // Nothing was sent the first time, so the call is made once more (on the sandbox now reachable).
      return await attempt(inner);
    }
  };

  return {
    call: (operationId, body, callOptions) =>
      withTakeover((client) => client.call(operationId, body, callOptions)),
    callByName: (idOrRef, body, callOptions) =>
      withTakeover((client) => client.callByName(idOrRef, body, callOptions)),
    stream: (operationId, body, streamOptions) =>
      withTakeover((client) => client.stream(operationId, body, streamOptions)),
    request: (idOrRef, input, requestOptions) =>
      withTakeover((client) => client.request(idOrRef, input, requestOptions)),
    fetchDocument: (url, callOptions) => withTakeover((client) => client.fetchDocument(url, callOptions)),
    close: async () => {
      clearInterval(watch);
      await takingOver?.catch(() => undefined);
      await Promise.all([inner, ...retired].map((client) => client.close()));
    },
  };
}

function processIsAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}
