/**
 * One DynamoDB Local for a whole test run. vitest runs each test file in a process of its own; each
 * starts its own JVM by default. With `OPFLOW_TEST_DYNAMODB=shared`, vitest's main process runs a small broker (started by
 * test/support/dynamodb-local.global.ts, an HTTP server on a free port of 127.0.0.1) and puts its
 * address in `OPFLOW_TEST_DYNAMODB_LOCAL`; `startAwsEmulators()` asks the broker for the endpoint
 * instead of starting a JVM. The broker starts DynamoDB Local on the first request (a run of unit
 * tests never starts it), answers every later one with the same endpoint, starts a new one if it
 * died, and stops it when the run ends.
 *
 * Nothing is left for the next run to trip on: no lock file, no fixed port (the broker's and the
 * JVM's ports are chosen free each time), and the JVM dies with the process that started it, even
 * one killed with SIGKILL (scripts/emulators/dynamodb-local.ts). A broker address left in the
 * environment by a run that is gone is noticed (nothing answers) and the caller starts a JVM of its
 * own, as before.
 *
 * Each file keeps its own tables: table names are unique to the process (scripts/emulators/
 * aws-emulators.ts `uniqueName`) and the tables a file created are deleted when it stops its
 * emulators.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as z from 'zod';
import { type DynamoDbLocal, type StartDynamoDbLocalOptions, startDynamoDbLocal } from './dynamodb-local';

/** The variable that carries the broker's address (`http://127.0.0.1:<port>`) to the test processes. */
export const SHARED_DYNAMODB_LOCAL_ENV = 'OPFLOW_TEST_DYNAMODB_LOCAL';

/** The path the broker answers on. */
const ROUTE = '/dynamodb-local';

export interface DynamoDbLocalBroker {
  /** `http://127.0.0.1:<port>`: what `OPFLOW_TEST_DYNAMODB_LOCAL` carries. */
  readonly url: string;
  /** How many JVMs it started (0 when nobody asked, 1 normally, more when one died). */
  readonly starts: number;
  /** How many requests it answered with an endpoint. */
  readonly served: number;
  /** Stop the JVM (if started) and the broker. Safe to call twice. */
  stop(): Promise<void>;
}

export interface DynamoDbLocalBrokerOptions extends StartDynamoDbLocalOptions {
  /** What starts a JVM (default `startDynamoDbLocal`; tests of the broker count the starts). */
  start?: (options: StartDynamoDbLocalOptions) => Promise<DynamoDbLocal>;
}

/** Start the broker (in vitest's main process). DynamoDB Local itself starts on the first request. */
export async function startDynamoDbLocalBroker(
  options: DynamoDbLocalBrokerOptions = {},
): Promise<DynamoDbLocalBroker> {
  const { start = startDynamoDbLocal, ...startOptions } = options;
  let current: Promise<DynamoDbLocal> | undefined;
  let starts = 0;
  let served = 0;
  let stopping = false;

  const emulator = async (): Promise<DynamoDbLocal> => {
    if (current) {
      const running = await current.catch(() => undefined);
      // A failed start is tried again by the next request; a JVM that died is replaced.
      if (running && !running.exited) return running;
      current = undefined;
    }
    starts += 1;
    current = start(startOptions);
    return current;
  };

  const answer = (response: ServerResponse, status: number, body: unknown) => {
    response.writeHead(status, { 'content-type': 'application/json' });
    response.end(JSON.stringify(body));
  };
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    request.resume();
    if (request.method !== 'POST' || request.url !== ROUTE) {
      answer(response, 404, { error: `the broker answers POST ${ROUTE} only` });
      return;
    }
    if (stopping) {
      answer(response, 503, { error: 'the test run is ending' });
      return;
    }
    emulator().then(
      (running) => {
        served += 1;
        answer(response, 200, { endpoint: running.endpoint, port: running.port });
      },
      (error: unknown) =>
        answer(response, 500, { error: error instanceof Error ? error.message : String(error) }),
    );
  });
  server.listen(0, '127.0.0.1');
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  // The broker must not keep vitest's process alive on its own.
  server.unref();
  const { port } = server.address() as AddressInfo;

  let stopped: Promise<void> | undefined;
  return {
    url: `http://127.0.0.1:${port}`,
    get starts() {
      return starts;
    },
    get served() {
      return served;
    },
    stop() {
      stopped ??= (async () => {
        stopping = true;
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
        const running = await current?.catch(() => undefined);
        await running?.stop();
      })();
      return stopped;
    },
  };
}

const brokerAnswer = z.object({ endpoint: z.url(), port: z.number().int().positive() });
const brokerError = z.object({ error: z.string() });

/** A DynamoDB Local served by the run's broker: `stop()` leaves it running for the other files. */
export interface SharedDynamoDbLocal extends DynamoDbLocal {
  readonly shared: true;
}

let warnedStale = false;

/**
 * The run's shared DynamoDB Local, or `undefined` when there is none to share: no broker in the
 * environment (outside vitest, or `OPFLOW_TEST_DYNAMODB=per-file`), or a broker address that nothing
 * answers on any more (a run that is gone). Throws when the broker answers but could not start it.
 */
export async function sharedDynamoDbLocal(
  brokerUrl: string | undefined = process.env[SHARED_DYNAMODB_LOCAL_ENV],
): Promise<SharedDynamoDbLocal | undefined> {
  if (!brokerUrl) return undefined;
  let response: Response;
  try {
    // The JVM's start can take a minute on a busy machine (the start's own limit), plus the install.
    response = await fetch(`${brokerUrl}${ROUTE}`, { method: 'POST', signal: AbortSignal.timeout(180_000) });
  } catch (error) {
    const code = (error as { cause?: { code?: unknown } }).cause?.code;
    if (code !== 'ECONNREFUSED')
      throw new Error(`the test run's DynamoDB Local broker (${brokerUrl}) did not answer: ${String(error)}`);
    if (!warnedStale) {
      warnedStale = true;
      process.stderr.write(
        `${SHARED_DYNAMODB_LOCAL_ENV}=${brokerUrl} answers no more (a run that ended?): starting a DynamoDB Local of this process's own\n`,
      );
    }
    return undefined;
  }
  const text = await response.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  if (!response.ok) {
    const failed = brokerError.safeParse(body);
    throw new Error(
      `the test run's DynamoDB Local could not be started (broker answered ${response.status}): ${failed.success ? failed.data.error : text.slice(0, 500)}`,
    );
  }
  const parsed = brokerAnswer.safeParse(body);
  if (!parsed.success)
    throw new Error(`the DynamoDB Local broker answered what is no endpoint: ${text.slice(0, 500)}`);
  return {
    endpoint: parsed.data.endpoint,
    port: parsed.data.port,
    shared: true,
    // The broker knows whether it still runs; to this process it is there until the run ends.
    exited: false,
    stop: async () => undefined,
  };
}
