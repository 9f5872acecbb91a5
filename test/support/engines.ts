/**
 * Real backends for tests, wired the way the opflow command wires them (shared/runtime/local/pipeline.ts
 * through shared/runtime/engine-wiring.ts), instead of dependency sets built by hand in each test:
 *
 * - `localEngine()`: the local Backend on a SQLite file and a report folder in a fresh temporary
 *   directory, opened for job records (no upstream calls, no sandbox, no workers until asked).
 * - `memoryEngine()`: the same on an in-memory SQLite database.
 * - `startTestApi()`: the job API server (`opflow serve`'s, node:http) on a free port with a token,
 *   over one of these.
 *
 * Each returns a `close()` that stops what it started and removes the temporary directory.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LocalBackend } from '../../shared/backends/local';
import type { EngineDeps } from '../../shared/engine/deps';
import type { Clock } from '../../shared/engine/ports';
import type { WorkflowRegistry } from '../../shared/engine/workflow';
import {
  type JobApiServer,
  type JobApiServerOptions,
  startJobApiServer,
} from '../../shared/http/node-server';
import { silentLogger } from '../../shared/log/logger';
import { loadLocalConfig } from '../../shared/runtime/local/config';
import { createLocalPipeline, type LocalPipeline } from '../../shared/runtime/local/pipeline';
import { realTime } from '../../shared/runtime/time';
import { workflows as allWorkflows } from '../../shared/workflows';

export interface TestEngine {
  /** The Backend itself, as the CLI and `opflow serve` get it. */
  readonly backend: LocalPipeline;
  /** The engine wired to it (`backend.deps`). */
  readonly deps: EngineDeps;
  /** Its ports, for a test that seeds or inspects them directly. */
  readonly local: LocalBackend;
  /** The temporary directory holding the database and the report folder. */
  readonly dir: string;
  close(): Promise<void>;
}

export interface TestEngineOptions {
  /** Default: the wall clock. */
  clock?: Clock | undefined;
  /** Default: every workflow. */
  workflows?: WorkflowRegistry | undefined;
  /** The environment settings are read from (callback secrets, message budget). Default: none set. */
  env?: Readonly<Record<string, string | undefined>> | undefined;
}

/** The local Backend on a SQLite file in a fresh temporary directory, for job records. */
export function localEngine(options: TestEngineOptions = {}): Promise<TestEngine> {
  return openEngine('file', options);
}

/** The local Backend on an in-memory SQLite database (reports in a temporary folder), for job records. */
export function memoryEngine(options: TestEngineOptions = {}): Promise<TestEngine> {
  return openEngine('memory', options);
}

async function openEngine(database: 'file' | 'memory', options: TestEngineOptions): Promise<TestEngine> {
  const dir = mkdtempSync(join(tmpdir(), 'opflow-test-engine-'));
  const env = options.env ?? {};
  const dbPath = database === 'memory' ? ':memory:' : join(dir, 'jobs.db');
  try {
    const backend = await createLocalPipeline({
      config: loadLocalConfig({ dbPath, outDir: join(dir, 'out') }, env),
      workflows: options.workflows ?? allWorkflows,
      env,
      time: realTime(options.clock),
      log: silentLogger,
      recordsOnly: true,
      announce: () => undefined,
    });
    return {
      backend,
      deps: backend.deps,
      local: backend.local,
      dir,
      close: async () => {
        await backend.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}

export interface TestApi {
  readonly engine: TestEngine;
  readonly server: JobApiServer;
  readonly url: string;
  /** The bearer token every request needs (undefined: none). */
  readonly token: string | undefined;
  close(): Promise<void>;
}

/**
 * The job API server on 127.0.0.1 and a free port over a test engine (a new `localEngine()` unless
 * one is given), requiring `token` (default: a fixed test token; `null`: no token at all).
 */
export async function startTestApi(
  options: Partial<Omit<JobApiServerOptions, 'deps' | 'token'>> & {
    engine?: TestEngine | undefined;
    token?: string | null | undefined;
  } = {},
): Promise<TestApi> {
  const { engine: given, token: asked, ...serverOptions } = options;
  const engine = given ?? (await localEngine());
  const token = asked === null ? undefined : (asked ?? 'test-api-token-0123456789');
  const server = await startJobApiServer({ ...serverOptions, deps: engine.deps, token });
  return {
    engine,
    server,
    url: server.url,
    token,
    close: async () => {
      await server.close();
      if (!given) await engine.close();
    },
  };
}
