/**
 * The local runtime: the engine wired to the local backend (one SQLite file, a report folder, keys
 * from the environment), a pool of in-process workers, the sweeper's timer, and, when no key and no
 * base URL are configured, the built-in sandbox started in-process.
 *
 * Everything durable is in the database, so a process killed at any moment loses nothing: the next
 * one takes back the dead process's leases, re-sends jobs whose message was lost, and continues every
 * unfinished job from its last committed step.
 */
import { createWriteStream, type WriteStream } from 'node:fs';
import { dirname, resolve } from 'node:path';
import {
  createLocalBackend,
  EnvKeySource,
  isLeaseOwnerAlive,
  type LocalBackend,
  leaseOwnerOfThisProcess,
  SqliteJobHistory,
} from '../../backends/local';
import { LocalCallbackSecrets, SqliteCallbackOutbox } from '../../backends/local/sqlite-callback-outbox';
import { callbackPolicyFromEnv } from '../../callbacks/ssrf-guard';
import type { EngineDeps, EngineLogger } from '../../engine/deps';
import type { Job } from '../../engine/job-record';
import { CachedPollStats } from '../../engine/poll-stats';
import type { JobStore } from '../../engine/ports';
import { inFlightAllowanceMs, runStep } from '../../engine/runner';
import { sweep } from '../../engine/sweep';
import type { WorkflowRegistry } from '../../engine/workflow';
import { createOpenPlatformClient } from '../../openplatform/client';
import { redactUrl } from '../../openplatform/redact';
import type { OpenPlatformClient } from '../../openplatform/types';
import { describeStateReport, discardStateFile } from '../../sandbox';
import { createJobChangeHub } from '../job-change-hub';
import { listUnfinished, unfinishedStatuses } from '../job-queries';
import type { Pipeline } from '../pipeline';
import { type RuntimeTime, realTime } from '../time';
import { watchJobs } from '../watch-jobs';
import { type CallbackLoop, startCallbackLoop } from './callback-loop';
import { defaultBuiltInSandboxSpeed, type LocalRuntimeConfig, usesBuiltInSandbox } from './config';
import { keyRoutedClient } from './key-routed-client';
import {
  type BuiltInSandbox,
  type SandboxLaunchOptions,
  sandboxApiKey,
  sandboxStatePath,
  startBuiltInSandbox,
} from './sandbox-launch';
import {
  findLiveSandbox,
  removeSandboxRecord,
  type SandboxRecord,
  sandboxRecordPath,
  writeSandboxRecord,
} from './sandbox-record';
import { compressPolling } from './sandbox-speed';
import { sandboxTakeoverClient } from './sandbox-takeover';
import { WorkerPool } from './worker-pool';

export interface LocalPipelineOptions {
  config: LocalRuntimeConfig;
  /** The workflows jobs may name. */
  workflows: WorkflowRegistry;
  /** Per-tenant keys (`OPFLOW_API_KEY_<TENANT>`) are read from here. Default: `process.env`. */
  env?: Readonly<Record<string, string | undefined>> | undefined;
  /** Wall clock, or a skipping clock for tests. Default: real time. */
  time?: RuntimeTime | undefined;
  /** Default: `Math.random`. */
  random?: (() => number) | undefined;
  /** Where the one line about the built-in sandbox goes. Default: standard error. */
  announce?: ((line: string) => void) | undefined;
  /** The engine's log. Default: JSON lines in `opflow.log` beside the database file. */
  log?: EngineLogger | undefined;
  /**
   * Where tenants with their own key are sent while the built-in sandbox serves the others
   * (default: the platform, https://connect.patsnap.com). Tests point it at a second sandbox.
   */
  platformBaseUrl?: string | undefined;
  /** A client to use instead of one built from the configuration (tests). */
  client?: OpenPlatformClient | undefined;
  /** Passed to the built-in sandbox when it is started (faults, durations, accepted keys). */
  sandbox?: SandboxLaunchOptions | undefined;
  /** Leases of claimed messages. Default: one minute, renewed while a step runs. */
  leaseMs?: number | undefined;
  /** Default: 30 seconds of clock time. */
  sweepIntervalMs?: number | undefined;
  /**
   * For commands that only read or change job records (status, list, cancel, report): no sandbox
   * is started and no upstream client is made. `start()` then refuses. Default: false.
   */
  recordsOnly?: boolean | undefined;
}

export interface LocalPipeline extends Pipeline {
  readonly backend: 'local';
  readonly local: LocalBackend;
  readonly pool: WorkerPool;
  readonly time: RuntimeTime;
  /**
   * The built-in sandbox, when this pipeline started one. With a file database its tasks are kept
   * in `sandbox-state.json` beside it, so a later process continues them; while this process runs,
   * other commands of the database use this sandbox (see sandbox-record.ts).
   */
  readonly sandbox: BuiltInSandbox | undefined;
  /** Every committed change of a job this process made, for the dashboard's timeline. */
  readonly history: SqliteJobHistory;
  start(): void;
  /** Stops claiming work and waits for the steps in progress; `start` may be called again. */
  stop(): Promise<void>;
  onJobChange(listener: (job: Job) => void): () => void;
  /**
   * Resolves with the jobs once each is settled (see `isSettled`): finished, or waiting for a
   * person's selection. Notices changes made here at once, by other processes within half a second.
   */
  waitForJobs(ids: readonly string[], options?: { signal?: AbortSignal | undefined }): Promise<Job[]>;
  /** Every job not finished yet (awaiting a selection included), oldest first. */
  unfinishedJobs(): Promise<Job[]>;
}

/** Opens the database, starts the sandbox if needed and wires the engine. Call `start()` to work. */
export async function createLocalPipeline(options: LocalPipelineOptions): Promise<LocalPipeline> {
  const { config } = options;
  const time = options.time ?? realTime();
  const clock = time.clock;
  const builtIn = usesBuiltInSandbox(config);

  const local = createLocalBackend({
    dbPath: config.dbPath,
    outDir: config.outDir,
    clock,
    env: options.env,
    ratePerSecond: config.qps,
  });
  let sandbox: BuiltInSandbox | undefined;
  let client: OpenPlatformClient | undefined;
  let logStream: WriteStream | undefined;
  let recordPath: string | undefined;
  try {
    let baseUrl = config.baseUrl;
    let fallbackKey: string | undefined;
    let sharedSandbox: SandboxRecord | undefined;
    // Poll schedules shrink only when talking to a sandbox that runs faster than the platform.
    let speed = 1;
    if (options.recordsOnly) {
      // Nothing will call the platform.
    } else if (builtIn && !options.client) {
      const announce = options.announce ?? ((line) => process.stderr.write(`${line}\n`));
      // Share a built-in sandbox another opflow process of this database is running: its tasks
      // (a job parked for a selection, say) exist only there.
      const shareable = config.dbPath !== ':memory:' && !time.skipping;
      const live = shareable ? await findLiveSandbox(sandboxRecordPath(config.dbPath)) : undefined;
      if (live) {
        sharedSandbox = live;
        speed = live.speed;
        baseUrl = live.url;
        fallbackKey = sandboxApiKey;
        announce(
          `opflow: using the built-in sandbox of opflow process ${live.pid} at ${live.url} (simulated data, ${speed}x speed)`,
        );
      } else {
        speed = config.sandboxSpeed ?? defaultBuiltInSandboxSpeed;
        // Its tasks outlive this process (kill -9 included) in a file beside the database; a file
        // no unfinished job needs any more is dropped, so it does not grow run after run.
        let stateFile = options.sandbox?.stateFile;
        if (stateFile === undefined && config.dbPath !== ':memory:') {
          stateFile = sandboxStatePath(config.dbPath);
          if (!(await hasUnfinishedJobs(local.store))) discardStateFile(stateFile);
        }
        sandbox = await startBuiltInSandbox({
          ...options.sandbox,
          now: () => clock.now(),
          speed,
          ...(stateFile === undefined ? {} : { stateFile }),
        });
        baseUrl = sandbox.url;
        fallbackKey = sandbox.apiKey;
        if (shareable) {
          recordPath = sandboxRecordPath(config.dbPath);
          writeSandboxRecord(recordPath, {
            url: sandbox.url,
            pid: process.pid,
            speed,
            startedAt: Date.now(),
          });
        }
        announce(
          `opflow: no OPFLOW_API_KEY or OPFLOW_BASE_URL set, so using the built-in sandbox at ${sandbox.url} (simulated data, ${speed}x speed)`,
        );
        const tenantKeys = Object.keys(options.env ?? process.env).filter(
          (name) => /^OPFLOW_API_KEY_/.test(name) && name !== 'OPFLOW_API_KEY_SECRET_PREFIX',
        );
        if (tenantKeys.length > 0) {
          announce(
            `opflow: tenants with their own key (${tenantKeys.join(', ')}) talk to the platform; their keys never go to the sandbox`,
          );
        }
        const state = sandbox.server.state;
        if (state?.outcome === 'moved-aside' || (state?.outcome === 'restored' && state.records > 0)) {
          announce(`opflow: built-in sandbox: ${describeStateReport(state)}`);
        }
      }
    } else if (config.apiKey === undefined && baseUrl !== undefined && isLoopback(baseUrl)) {
      // `opflow sandbox` in another terminal: its well-known key is the natural default.
      fallbackKey = sandboxApiKey;
      speed = config.sandboxSpeed ?? 1;
    }
    const keys = new EnvKeySource({ env: options.env, fallbackKey });

    const makeClient = (url: string | undefined) =>
      createOpenPlatformClient({ baseUrl: url, now: () => clock.now() });
    const announceLine = options.announce ?? ((line: string) => process.stderr.write(`${line}\n`));
    client =
      options.client ??
      (options.recordsOnly
        ? recordsOnlyClient
        : sharedSandbox
          ? // Another process hosts the sandbox: if it dies, this one takes the sandbox over.
            sandboxTakeoverClient({
              initial: sharedSandbox,
              recordPath: sandboxRecordPath(config.dbPath),
              makeClient,
              startSandbox: (takenSpeed) =>
                startBuiltInSandbox({
                  ...options.sandbox,
                  now: () => clock.now(),
                  speed: takenSpeed,
                  stateFile: options.sandbox?.stateFile ?? sandboxStatePath(config.dbPath),
                }),
              onHosted: (taken) => {
                sandbox = taken;
                recordPath = sandboxRecordPath(config.dbPath);
                // The dead host's claimed steps come back now, not when their leases run out.
                local.queue.releaseOrphanedLeases();
                pool?.wake();
              },
              announce: announceLine,
            })
          : makeClient(baseUrl));
    // A tenant's own key goes to the platform, never to the built-in sandbox.
    if (!options.client && !options.recordsOnly && (sandbox || sharedSandbox)) {
      client = keyRoutedClient({
        sandbox: client,
        sandboxKey: sandboxApiKey,
        platform: () => makeClient(options.platformBaseUrl),
      });
    }

    const workflows = compressPolling(options.workflows, speed);
    const changes = createJobChangeHub();
    const subscribe = changes.subscribe;
    const history = new SqliteJobHistory(local.db, { now: () => clock.now() });
    subscribe((job) => history.record(job));
    const log = options.log ?? (config.dbPath === ':memory:' ? undefined : fileLogger(config.dbPath, clock));
    if (log && 'stream' in log) logStream = log.stream as WriteStream;

    let pool: WorkerPool | undefined;
    const owner = leaseOwnerOfThisProcess();
    const callbackOutbox = new SqliteCallbackOutbox(local.db);
    let callbackLoop: CallbackLoop | undefined;
    const deps: EngineDeps = {
      store: local.store,
      queue: {
        maxDelayMs: local.queue.maxDelayMs,
        send: async (message, delayMs) => {
          await local.queue.send(message, delayMs);
          pool?.wake();
        },
        sendBatch: async (messages) => {
          await local.queue.sendBatch(messages);
          pool?.wake();
        },
      },
      reports: local.reports,
      keys,
      rateLimiter: local.rateLimiter,
      pollStats: new CachedPollStats(local.pollStats, { now: () => clock.now(), ttlMs: 1_000 }),
      pollStatsScope: baseUrl ?? 'https://connect.patsnap.com',
      clock,
      random: options.random ?? Math.random,
      client,
      workflows,
      log,
      // A paid call names this process on its job: another process of the machine that finds the
      // job while this one is alive leaves it alone, and takes it over at once once this one is gone.
      inFlight: {
        by: owner,
        isGone: (by) => !isLeaseOwnerAlive(by),
        allowanceMs: config.inFlightAllowanceMs ?? inFlightAllowanceMs,
        heartbeatMs: (config.inFlightAllowanceMs ?? inFlightAllowanceMs) / 4,
      },
      callbacks: { outbox: callbackOutbox, policy: callbackPolicyFromEnv(options.env ?? process.env) },
      onJobChange: (job) => {
        callbackLoop?.noticed(job);
        changes.emit(job);
      },
    };

    // The sweeper re-sends only jobs no queued message will bring back (see listStranded); at start
    // with no grace, since this process has nothing in flight yet.
    let firstSweep = true;
    const strandedView: JobStore = {
      create: (job) => local.store.create(job),
      get: (id) => local.store.get(id),
      commit: (job, expectedVersion) => local.store.commit(job, expectedVersion),
      listDue: (now, limit) => local.store.listStranded(now, limit),
      list: (query) => local.store.list(query),
      findByIdempotencyKey: (tenant, key) => local.store.findByIdempotencyKey(tenant, key),
    };
    pool = new WorkerPool({
      queue: local.queue,
      time,
      concurrency: config.concurrency,
      owner,
      leaseMs: options.leaseMs,
      sweepIntervalMs: options.sweepIntervalMs,
      handle: async (message) => {
        const report = await runStep(deps, message);
        // The bucket is empty: no other step can call before then either. With reservations the
        // tokens until then belong to jobs whose messages come due meanwhile: keep claiming those
        // (the unreserved job itself comes back after the reserved ones, so nothing churns).
        if (
          report.outcome === 'deferred' &&
          report.reason === 'rate-limited' &&
          !report.reserved &&
          deps.reserveHorizonMs === 0
        ) {
          pool?.pauseClaims(clock.now() + (report.waitMs ?? report.delayMs));
        }
        return report;
      },
      sweep: () => {
        // At start, jobs whose call was in flight in a process that died are stranded too, though
        // their nextRunAt is pushed out by the in-flight allowance: look that far ahead once (the
        // runner leaves alone those whose caller is still alive).
        const graceMs = firstSweep ? -(config.inFlightAllowanceMs ?? inFlightAllowanceMs) : 5_000;
        firstSweep = false;
        return sweep({ ...deps, store: strandedView }, { graceMs });
      },
      onError: (error, message) =>
        log?.error('a step failed unexpectedly; it will be tried again', {
          jobId: message.jobId,
          version: message.version,
          error: error instanceof Error ? error.message : String(error),
        }),
    });
    const workers = pool;

    const pipeline: LocalPipeline = {
      backend: 'local',
      deps,
      local,
      pool: workers,
      time,
      get sandbox() {
        return sandbox;
      },
      history,
      description: sandbox
        ? `local (${config.dbPath}), built-in sandbox`
        : `local (${config.dbPath}), ${baseUrl === undefined ? 'the Open Platform' : redactUrl(baseUrl)}`,
      start: () => {
        if (options.recordsOnly) throw new Error('this pipeline was opened for job records only');
        workers.start();
        callbackLoop ??= startCallbackLoop({
          store: local.store,
          outbox: callbackOutbox,
          secrets: new LocalCallbackSecrets(local.db, options.env ?? process.env),
          reports: local.reports,
          clock,
          log,
          send: { policy: deps.callbacks?.policy },
          onJobChange: deps.onJobChange,
        });
      },
      stop: async () => {
        await callbackLoop?.stop();
        callbackLoop = undefined;
        await workers.stop();
      },
      onJobChange: subscribe,
      waitForJobs: (ids, waitOptions = {}) =>
        watchJobs(local.store, ids, { subscribe, signal: waitOptions.signal }),
      unfinishedJobs: () => listUnfinished(local.store),
      close: async () => {
        await callbackLoop?.stop();
        await workers.stop();
        await client?.close();
        if (recordPath) removeSandboxRecord(recordPath);
        await sandbox?.close();
        local.close();
        await new Promise<void>((done) => (logStream ? logStream.end(done) : done()));
      },
    };
    return pipeline;
  } catch (error) {
    await client?.close().catch(() => undefined);
    if (recordPath) removeSandboxRecord(recordPath);
    await sandbox?.close().catch(() => undefined);
    local.close();
    throw error;
  }
}

/** Whether any job still has work to do or waits for a person (one row per status at most). */
async function hasUnfinishedJobs(store: JobStore): Promise<boolean> {
  for (const status of unfinishedStatuses) {
    if ((await store.list({ status, limit: 1 })).jobs.length > 0) return true;
  }
  return false;
}

const notForRecords = async (): Promise<never> => {
  throw new Error('this pipeline was opened for job records only; it makes no upstream calls');
};
const recordsOnlyClient: OpenPlatformClient = {
  call: notForRecords,
  callByName: notForRecords,
  request: notForRecords,
  stream: notForRecords,
  fetchDocument: notForRecords,
  close: async () => undefined,
};

function isLoopback(url: string): boolean {
  const host = new URL(url).hostname;
  return host === 'localhost' || host === '::1' || host === '[::1]' || host.startsWith('127.');
}

/** JSON lines appended to `opflow.log` beside the database. */
function fileLogger(dbPath: string, clock: { now(): number }): EngineLogger & { stream: WriteStream } {
  const stream = createWriteStream(resolve(dirname(dbPath), 'opflow.log'), { flags: 'a' });
  stream.on('error', () => undefined);
  const write = (level: string) => (message: string, fields?: Record<string, unknown>) => {
    // URL credentials (user:password@, apikey=) never reach the file, whatever a caller passed.
    stream.write(
      `${redactUrl(JSON.stringify({ time: new Date(clock.now()).toISOString(), level, message, ...fields }))}\n`,
    );
  };
  return { stream, debug: () => undefined, info: write('info'), warn: write('warn'), error: write('error') };
}
