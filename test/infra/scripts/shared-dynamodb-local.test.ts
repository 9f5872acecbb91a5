/**
 * One DynamoDB Local per test run (scripts/emulators/shared-dynamodb-local.ts, started by
 * test/support/dynamodb-local.global.ts): the broker starts it once for files asking at once, again
 * when it died or failed to start; a broker address left by a run that is gone is no obstacle; and
 * the JVM dies with the process that started it, even one killed with SIGKILL, so a crashed run
 * leaves no JVM, port or lock behind.
 */
import { describe, expect, it } from 'vitest';
import { type DynamoDbLocal, findFreePort } from '../../../scripts/emulators/dynamodb-local';
import {
  sharedDynamoDbLocal,
  startDynamoDbLocalBroker,
} from '../../../scripts/emulators/shared-dynamodb-local';
import { repoRoot, runChild, tsScriptArgs } from '../../support/child-process';
import { REAL_PROCESS_TIMEOUT_MS } from '../../support/timeouts';

/** A stand-in for the JVM: the broker's bookkeeping, not DynamoDB, is what these tests look at. */
function fakeStarter(options: { failFirst?: boolean } = {}) {
  const started: { exited: boolean; stopped: boolean }[] = [];
  const start = async (): Promise<DynamoDbLocal> => {
    // Slow enough that requests at once all arrive while it starts.
    await new Promise((resolve) => setTimeout(resolve, 200));
    if (options.failFirst && started.length === 0) {
      started.push({ exited: true, stopped: false });
      throw new Error('java: not found');
    }
    const state = { exited: false, stopped: false };
    started.push(state);
    const port = 40_000 + started.length;
    return {
      endpoint: `http://127.0.0.1:${port}`,
      port,
      get exited() {
        return state.exited;
      },
      stop: async () => {
        state.stopped = true;
        state.exited = true;
      },
    };
  };
  return { start, started };
}

describe('the run-wide DynamoDB Local broker', () => {
  it('starts it once for files asking at once, again when it died, and stops it at the end', async () => {
    const fake = fakeStarter();
    const broker = await startDynamoDbLocalBroker({ start: fake.start });
    try {
      expect(broker.starts).toBe(0);
      const first = await Promise.all([1, 2, 3].map(() => sharedDynamoDbLocal(broker.url)));
      expect(new Set(first.map((shared) => shared?.endpoint))).toEqual(new Set(['http://127.0.0.1:40001']));
      expect(first[0]).toMatchObject({ shared: true, port: 40001 });
      expect(broker).toMatchObject({ starts: 1, served: 3 });
      // A caller's stop leaves it to the others.
      await first[0]?.stop();
      expect(fake.started[0]).toEqual({ exited: false, stopped: false });

      fake.started[0]!.exited = true;
      expect((await sharedDynamoDbLocal(broker.url))?.endpoint).toBe('http://127.0.0.1:40002');
      expect(broker.starts).toBe(2);
    } finally {
      await broker.stop();
    }
    expect(fake.started[1]).toEqual({ exited: true, stopped: true });
    await broker.stop();
  });

  it('answers a failed start with its reason, and the next request starts it again', async () => {
    const fake = fakeStarter({ failFirst: true });
    const broker = await startDynamoDbLocalBroker({ start: fake.start });
    try {
      await expect(sharedDynamoDbLocal(broker.url)).rejects.toThrow(
        /could not be started \(broker answered 500\): java: not found/,
      );
      expect((await sharedDynamoDbLocal(broker.url))?.port).toBe(40002);
      expect(broker.starts).toBe(2);
    } finally {
      await broker.stop();
    }
  });

  it('a broker address nothing answers on (its run is gone): the caller starts one of its own', async () => {
    const gone = `http://127.0.0.1:${await findFreePort()}`;
    await expect(sharedDynamoDbLocal(gone)).resolves.toBeUndefined();
    await expect(sharedDynamoDbLocal('')).resolves.toBeUndefined();
  });

  it(
    'the JVM dies with the run that started it, even one killed with SIGKILL',
    async () => {
      // A run's main process: the broker, a file asking for DynamoDB Local, then killed outright.
      const script = `import { startDynamoDbLocalBroker, sharedDynamoDbLocal } from './scripts/emulators/shared-dynamodb-local.ts';
const broker = await startDynamoDbLocalBroker();
const shared = await sharedDynamoDbLocal(broker.url);
console.log(JSON.stringify({ endpoint: shared.endpoint }));
setInterval(() => undefined, 1000);`;
      let endpoint = '';
      const run = await runChild(process.execPath, tsScriptArgs(script), {
        cwd: repoRoot,
        timeoutMs: REAL_PROCESS_TIMEOUT_MS - 30_000,
        onStart: (child) => {
          child.stdout.on('data', (chunk: Buffer) => {
            const line = /\{"endpoint":"[^"]+"\}/.exec(chunk.toString())?.[0];
            if (!line) return;
            endpoint = (JSON.parse(line) as { endpoint: string }).endpoint;
            child.kill('SIGKILL');
          });
          return undefined;
        },
      });
      expect(run.signal, run.stderr).toBe('SIGKILL');
      expect(run.timedOut).toBe(false);
      expect(endpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      // The watchdog stops the JVM once its starter's pipe closes: the port stops answering.
      const deadline = Date.now() + 30_000;
      let answering = true;
      while (answering && Date.now() < deadline) {
        answering = await fetch(endpoint, { method: 'POST', signal: AbortSignal.timeout(1_000) }).then(
          async (response) => {
            await response.body?.cancel();
            return true;
          },
          () => false,
        );
        if (answering) await new Promise((resolve) => setTimeout(resolve, 200));
      }
      expect(answering, `${endpoint} still answers: the JVM outlived its killed starter`).toBe(false);
    },
    REAL_PROCESS_TIMEOUT_MS,
  );
});
