/**
 * Starts AWS's DynamoDB Local (in memory, telemetry off) on a free port of 127.0.0.1 and stops it
 * again. Tests call `startDynamoDbLocal()` in `beforeAll` and `stop()` in `afterAll`; by hand,
 * `npx tsx scripts/emulators/dynamodb-local.ts [port]` runs it in the foreground until Ctrl-C.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { ensureDynamoDbLocal } from './install-dynamodb-local';

export interface DynamoDbLocal {
  /** `http://127.0.0.1:<port>`: give it to the SDK as `endpoint`. */
  endpoint: string;
  port: number;
  /** Stop the JVM and wait until it has exited. Safe to call twice. */
  stop(): Promise<void>;
}

export interface StartDynamoDbLocalOptions {
  /** Port to listen on; a free one is chosen when absent. */
  port?: number | undefined;
  /** How long to wait for the emulator to answer (default 60 seconds: the JVM is slow on a busy machine). */
  startTimeoutMs?: number | undefined;
  /** Heap limit passed to the JVM (default `512m`). */
  maxHeap?: string | undefined;
}

/** Ask the OS for a port nobody listens on (released again before the JVM binds it). */
export async function findFreePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  server.close();
  await once(server, 'close');
  if (address === null || typeof address === 'string') throw new Error('could not read a free port');
  return address.port;
}

const running = new Set<ChildProcess>();
// Last resort: never leave a JVM behind when the test process exits without calling stop().
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

async function answers(endpoint: string): Promise<boolean> {
  try {
    // Any HTTP answer (even "missing authentication") means the server is up.
    const response = await fetch(endpoint, { method: 'POST', signal: AbortSignal.timeout(1_000) });
    await response.body?.cancel();
    return true;
  } catch {
    return false;
  }
}

/** Start DynamoDB Local (installing it first when needed) and wait until it answers. */
export async function startDynamoDbLocal(options: StartDynamoDbLocalOptions = {}): Promise<DynamoDbLocal> {
  const install = await ensureDynamoDbLocal();
  const port = options.port ?? (await findFreePort());
  const endpoint = `http://127.0.0.1:${port}`;
  const child = spawn(
    'java',
    [
      `-Xmx${options.maxHeap ?? '512m'}`,
      `-Djava.library.path=${install.libraryPath}`,
      '-jar',
      install.jarPath,
      '-inMemory',
      '-sharedDb',
      '-disableTelemetry',
      '-port',
      String(port),
    ],
    { cwd: install.home, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  running.add(child);
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-4_000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  let exited = child.exitCode !== null;
  const exit = once(child, 'exit').then(() => {
    exited = true;
    running.delete(child);
  });
  let spawnError: unknown;
  child.once('error', (error) => {
    spawnError = error;
  });

  const stop = async () => {
    if (!exited) child.kill('SIGTERM');
    await exit;
  };

  const deadline = Date.now() + (options.startTimeoutMs ?? 60_000);
  while (!(await answers(endpoint))) {
    if (spawnError !== undefined || exited || Date.now() > deadline) {
      await stop();
      const why =
        spawnError !== undefined ? String(spawnError) : exited ? 'it exited' : 'it did not answer in time';
      throw new Error(`DynamoDB Local did not start on port ${port}: ${why}\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { endpoint, port, stop };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const port = process.argv[2] ? Number(process.argv[2]) : 8000;
  startDynamoDbLocal({ port }).then(
    (emulator) => {
      console.log(`DynamoDB Local listens on ${emulator.endpoint} (Ctrl-C to stop)`);
      process.once('SIGINT', () => void emulator.stop());
      process.once('SIGTERM', () => void emulator.stop());
    },
    (error: unknown) => {
      console.error(error);
      process.exitCode = 1;
    },
  );
}
