/**
 * Starts AWS's DynamoDB Local (in memory, telemetry off) on a free port of 127.0.0.1 and stops it
 * again. Under vitest with `OPFLOW_TEST_DYNAMODB=shared` one instance serves the whole run (scripts/emulators/shared-dynamodb-local.ts,
 * started by test/support/dynamodb-local.global.ts); by hand,
 * `npx tsx scripts/emulators/dynamodb-local.ts [port]` runs it in the foreground until Ctrl-C.
 *
 * The JVM never outlives the process that started it, even one killed with SIGKILL: it runs under a
 * small `sh` watchdog that reads the starter's pipe and stops the JVM when the pipe closes.
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
  /** Whether the JVM has exited (stopped, or died on its own). */
  readonly exited: boolean;
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
  /** Chooses the port when `port` is absent (default `findFreePort`; a test hands it a taken one). */
  choosePort?: (() => Promise<number>) | undefined;
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
// Last resort: never leave a JVM behind when the test process exits without calling stop(). The
// watchdog and the JVM are a process group of their own (detached): kill the whole group.
process.once('exit', () => {
  for (const child of running) killGroup(child, 'SIGKILL');
});

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    if (child.pid !== undefined) process.kill(-child.pid, signal);
  } catch {
    // Already gone.
  }
}

/**
 * Runs `java "$@"` and watches the starter: the watchdog subshell reads the starter's pipe (fd 3, a
 * copy of stdin taken first: a background job's own stdin is /dev/null) and kills the JVM when it closes, which
 * happens when the starter stops it or dies, however it dies. The shell exits with the JVM's status,
 * so a JVM that dies on its own is seen as an exit.
 */
const WATCHDOG =
  'exec 3<&0; java "$@" </dev/null 3<&- & jvm=$!; ' +
  '( read -r _ <&3; kill "$jvm" 2>/dev/null ) & watchdog=$!; exec 3<&-; ' +
  'wait "$jvm"; status=$?; kill "$watchdog" 2>/dev/null; exit "$status"';

/**
 * Whether DynamoDB answers on `endpoint`: a ListTables (unsigned: DynamoDB Local reads the key but
 * not the signature) that comes back as a table list. Any answer is not enough: the port was free
 * when chosen, and another server (fauxqs, in a test beside this one) may have taken it since.
 */
async function answersAsDynamoDb(endpoint: string): Promise<boolean> {
  try {
    const response = await fetch(endpoint, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-amz-json-1.0',
        'x-amz-target': 'DynamoDB_20120810.ListTables',
        authorization:
          'AWS4-HMAC-SHA256 Credential=test/20000101/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=0',
      },
      body: '{}',
      signal: AbortSignal.timeout(1_000),
    });
    const body: unknown = await response.json().catch(() => undefined);
    return (
      response.ok &&
      typeof body === 'object' &&
      body !== null &&
      Array.isArray((body as { TableNames?: unknown }).TableNames)
    );
  } catch {
    return false;
  }
}

/**
 * Start DynamoDB Local (installing it first when needed) and wait until it answers as DynamoDB. On a
 * port of its own choosing, a JVM that cannot bind it (taken between its choice and the JVM's bind,
 * by another test's server) is stopped and started again on another port, up to three times.
 */
export async function startDynamoDbLocal(options: StartDynamoDbLocalOptions = {}): Promise<DynamoDbLocal> {
  const install = await ensureDynamoDbLocal();
  if (options.port !== undefined) return startOn(install, options.port, options);
  const choosePort = options.choosePort ?? findFreePort;
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOn(install, await choosePort(), options);
    } catch (error) {
      if (!(error instanceof PortTaken) || attempt >= 3) throw error;
    }
  }
}

/** The JVM could not bind its port (its message carries the JVM's output). */
class PortTaken extends Error {}

/** What DynamoDB Local (Jetty) prints when its port is in use. */
const PORT_TAKEN = /Failed to bind to|BindException: Address already in use/;

async function startOn(
  install: Awaited<ReturnType<typeof ensureDynamoDbLocal>>,
  port: number,
  options: StartDynamoDbLocalOptions,
): Promise<DynamoDbLocal> {
  const endpoint = `http://127.0.0.1:${port}`;
  const child = spawn(
    'sh',
    [
      '-c',
      WATCHDOG,
      'dynamodb-local',
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
    { cwd: install.home, stdio: ['pipe', 'pipe', 'pipe'], detached: true },
  );
  // The watchdog's pipe: written to never, closed by stop() or by this process's end.
  child.stdin?.on('error', () => undefined);
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
    if (!exited) {
      // Closing the pipe has the watchdog stop the JVM; SIGKILL on the group if that takes too long.
      child.stdin?.end();
      const late = setTimeout(() => killGroup(child, 'SIGKILL'), 10_000);
      await exit;
      clearTimeout(late);
    }
    await exit;
  };

  const deadline = Date.now() + (options.startTimeoutMs ?? 60_000);
  while (!(await answersAsDynamoDb(endpoint))) {
    // A JVM that could not bind its port prints so and lives on (Jetty's threads outlast main).
    const portTaken = PORT_TAKEN.test(output);
    if (spawnError !== undefined || exited || portTaken || Date.now() > deadline) {
      const why =
        spawnError !== undefined
          ? String(spawnError)
          : portTaken
            ? 'the port is taken'
            : exited
              ? 'it exited'
              : 'it did not answer in time';
      await stop();
      const message = `DynamoDB Local did not start on port ${port}: ${why}\n${output}`;
      throw portTaken ? new PortTaken(message) : new Error(message);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    endpoint,
    port,
    get exited() {
      return exited;
    },
    stop,
  };
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
