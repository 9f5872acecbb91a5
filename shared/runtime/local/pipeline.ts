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
  isLeaseOwnerAlive,
  type LocalBackend,
  type LocalDatabase,
  leaseOwnerOfThisProcess,
  SqliteJobHistory,
} from '../../backends/local';
import { LocalCallbackSecrets, SqliteCallbackOutbox } from '../../backends/local/sqlite-callback-outbox';
import { SqliteChangeLog } from '../../backends/local/sqlite-change-log';
import { SqlitePartialAnswers } from '../../backends/local/sqlite-partial-answers';
import { SqliteScheduleStateStore } from '../../backends/local/sqlite-schedule-state-store';
import { SqliteWebhookDeliveries } from '../../backends/local/sqlite-webhook-deliveries';
import type { CallbackSenderDeps } from '../../callbacks/sender';
import { BudgetFiller } from '../../engine/admission/budget-filler';
import type { EngineDeps, InFlightOptions } from '../../engine/deps';
import type { Job } from '../../engine/job-record';
import type { PartialAnswerOptions } from '../../engine/partial-answer';
import { CachedPollStats } from '../../engine/poll-stats';
import type { Clock, JobStore, WorkQueue } from '../../engine/ports';
import { inFlightAllowanceMs, runStep } from '../../engine/runner';
import { sweep } from '../../engine/sweep';
import type { WorkflowRegistry } from '../../engine/workflow';
import { errorMessage } from '../../errors/error-message';
import type { Logger } from '../../log/logger';
import { redactUrl } from '../../openplatform/redact';
import type { OpenPlatformClient } from '../../openplatform/types';
import type { Backend, WorkHere } from '../backend';
import { wireEngine } from '../engine-wiring';
import { createJobChangeHub, type JobChangeHub } from '../job-change-hub';
import { listUnfinished, unfinishedStatuses } from '../job-queries';
import { type RuntimeTime, realTime } from '../time';
import { watchJobs } from '../watch-jobs';
import { type CallbackLoop, localReportLinks, startCallbackLoop } from './callback-loop';
import type { LocalRuntimeConfig } from './config';
import type { BuiltInSandbox, SandboxLaunchOptions } from './sandbox-launch';
import { compressPolling } from './sandbox-speed';
import { platformBaseUrl, resolveUpstream, type Upstream } from './upstream';
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
  log?: Logger | undefined;
  /**
   * Where tenants with their own key are sent while the built-in sandbox serves the others
   * (default: the platform, https://connect.patsnap.com). Tests point it at a second sandbox.
   */
  platformBaseUrl?: string | undefined;
  /** A client to use instead of one built from the configuration (tests). */
  client?: OpenPlatformClient | undefined;
  /** Passed to the built-in sandbox when it is started (faults, durations, accepted keys). */
  sandbox?: SandboxLaunchOptions | undefined;
  /** Leases of claimed messages. Default: `OPFLOW_LEASE_MS`, else one minute; renewed while a step runs. */
  leaseMs?: number | undefined;
  /** Default: 30 seconds of clock time. */
  sweepIntervalMs?: number | undefined;
  /**
   * For commands that only read or change job records (status, list, cancel, report): no sandbox
   * is started and no upstream client is made. `start()` then refuses. Default: false.
   */
  recordsOnly?: boolean | undefined;
  /**
   * Run the budget filler's rounds (re-aims, pulls into the budget's room, the end-of-work order).
   * Default: true. False leaves polls at the runner's own aims, as on aws, where no process runs
   * between messages (bench/throughput.ts compares).
   */
  fill?: boolean | undefined;
}

export interface LocalPipeline extends Backend {
  readonly kind: 'local';
  readonly work: WorkHere;
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
  const local = createLocalBackend({
    dbPath: config.dbPath,
    outDir: config.outDir,
    clock: time.clock,
    env: options.env,
    ratePerSecond: config.qps,
  });
  let upstream: Upstream | undefined;
  // Set once the workers exist: a message sent or a sandbox taken over wakes them.
  const wake = { workers: undefined as WorkerPool | undefined };
  try {
    upstream = await resolveUpstream({
      config,
      env: options.env,
      time,
      announce: options.announce ?? ((line) => process.stderr.write(`${line}\n`)),
      platformBaseUrl: options.platformBaseUrl,
      client: options.client,
      sandbox: options.sandbox,
      recordsOnly: options.recordsOnly,
      hasUnfinishedJobs: () => hasUnfinishedJobs(local.store),
      onTakeover: () => {
        // The dead host's claimed steps come back now, not when their leases run out.
        local.queue.releaseOrphanedLeases();
        wake.workers?.wake();
      },
    });
    return assembleLocalPipeline(options, local, upstream, time, wake);
  } catch (error) {
    await upstream?.close().catch(() => undefined);
    local.close();
    throw error;
  }
}

/** The engine, the workers and the feature stores over an opened database and a resolved upstream. */
function assembleLocalPipeline(
  options: LocalPipelineOptions,
  local: LocalBackend,
  upstream: Upstream,
  time: RuntimeTime,
  wake: { workers: WorkerPool | undefined },
): LocalPipeline {
  const { config } = options;
  const env = options.env ?? process.env;
  const clock = time.clock;
  const changes = createJobChangeHub();
  const history = new SqliteJobHistory(local.db, { now: () => clock.now() });
  changes.subscribe((job) => history.record(job));
  const log = options.log ?? (config.dbPath === ':memory:' ? undefined : fileLogger(config.dbPath, clock));
  const callbackOutbox = new SqliteCallbackOutbox(local.db);
  let callbackLoop: CallbackLoop | undefined;
  const owner = leaseOwnerOfThisProcess();
  const answers = streamedAnswers(local, clock, changes, log);
  const deps = wireEngine({
    ports: {
      ...local,
      keys: upstream.keys,
      queue: wakingQueue(local, () => wake.workers?.wake()),
      pollStats: new CachedPollStats(local.pollStats, { now: () => clock.now(), ttlMs: 1_000 }),
      callbackOutbox,
    },
    client: upstream.client,
    workflows: compressPolling(options.workflows, upstream.speed),
    clock,
    random: options.random,
    env,
    upstream: { scope: upstream.baseUrl ?? platformBaseUrl, identify: (apiKey) => upstream.identify(apiKey) },
    log,
    onJobChange: (job) => {
      callbackLoop?.noticed(job);
      changes.emit(job);
    },
    partialAnswers: answers.options,
    tuning: { inFlight: inFlightOf(config, owner) },
  });
  const workers = createWorkers(options, local, deps, time, owner);
  wake.workers = workers;
  const sender: CallbackSenderDeps = {
    store: local.store,
    outbox: callbackOutbox,
    secrets: new LocalCallbackSecrets(local.db, env),
    reportLinks: localReportLinks(env),
    clock,
    send: { policy: deps.callbacks?.policy },
  };
  const start = () => {
    if (options.recordsOnly) throw new Error('this pipeline was opened for job records only');
    workers.start();
    callbackLoop ??= startCallbackLoop({ ...sender, log, onJobChange: deps.onJobChange });
  };
  const stop = async () => {
    await callbackLoop?.stop();
    callbackLoop = undefined;
    await workers.stop();
  };
  return {
    kind: 'local',
    deps,
    local,
    pool: workers,
    time,
    get sandbox() {
      return upstream.sandbox;
    },
    work: {
      where: 'here',
      start,
      stop,
      get sandbox() {
        return upstream.sandbox;
      },
      dbPath: local.dbPath,
      queue: local.queue,
    },
    history,
    batches: async () => local.batches,
    ...localFeatureStores(local.db, clock),
    callbackSecrets: async () => sender.secrets,
    callbackSender: async () => sender,
    description: `local (${config.dbPath}), ${upstream.description}`,
    start,
    stop,
    onJobChange: changes.subscribe,
    ...answers.backend,
    waitForJobs: (ids, waitOptions = {}) =>
      watchJobs(local.store, ids, { subscribe: changes.subscribe, signal: waitOptions.signal }),
    unfinishedJobs: () => listUnfinished(local.store),
    close: async () => {
      await stop();
      await upstream.close();
      local.close();
      await closeLog(log);
    },
  };
}

/**
 * A paid call names this process on its job: another process of the machine that finds the job
 * while this one is alive leaves it alone, and takes it over at once once this one is gone.
 */
function inFlightOf(config: LocalRuntimeConfig, owner: string): InFlightOptions {
  const allowanceMs = config.inFlightAllowanceMs ?? inFlightAllowanceMs;
  return { by: owner, isGone: (by) => !isLeaseOwnerAlive(by), allowanceMs, heartbeatMs: allowanceMs / 4 };
}

/** The local queue, waking this process's workers whenever a message is sent. */
function wakingQueue(local: LocalBackend, wake: () => void): WorkQueue {
  return {
    maxDelayMs: local.queue.maxDelayMs,
    send: async (message, delayMs) => {
      await local.queue.send(message, delayMs);
      wake();
    },
    sendBatch: async (messages) => {
      await local.queue.sendBatch(messages);
      wake();
    },
  };
}

/** The in-process workers: steps, the budget filler's rounds and the sweeper's timer. */
function createWorkers(
  options: LocalPipelineOptions,
  local: LocalBackend,
  deps: EngineDeps,
  time: RuntimeTime,
  owner: string,
): WorkerPool {
  const { config } = options;
  const filler = new BudgetFiller(deps);
  // Near the end of a key's work the filler turns its calls' order to longest remaining work first.
  deps.callOrder = (bucket) => filler.orderOf(bucket);
  // Polls are priced by whether a job's time decides when its key's work ends (poll-price.ts).
  deps.keyWork = (bucket) => filler.orders().get(bucket);
  // The sweeper re-sends only jobs no queued message will bring back (see listStranded); at start
  // with no grace, since this process has nothing in flight yet.
  let firstSweep = true;
  const pool: WorkerPool = new WorkerPool({
    queue: local.queue,
    time,
    concurrency: config.concurrency,
    owner,
    leaseMs: options.leaseMs ?? config.leaseMs,
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
        pool.pauseClaims(time.clock.now() + (report.waitMs ?? report.delayMs));
      }
      return report;
    },
    // Pull polls forward into the key's spare budget and re-aim them as the estimate learns.
    ...(options.fill === false ? {} : { fill: async () => filler.fill() }),
    sweep: () => {
      // At start, jobs whose call was in flight in a process that died are stranded too, though
      // their nextRunAt is pushed out by the in-flight allowance: look that far ahead once (the
      // runner leaves alone those whose caller is still alive).
      const graceMs = firstSweep ? -(config.inFlightAllowanceMs ?? inFlightAllowanceMs) : 5_000;
      firstSweep = false;
      return sweep(deps, { graceMs, listDue: (now, limit) => local.store.listStranded(now, limit) });
    },
    onError: (error, message) =>
      deps.log?.error('a step failed unexpectedly; it will be tried again', {
        jobId: message.jobId,
        version: message.version,
        error: errorMessage(error),
      }),
  });
  return pool;
}

/** Whether any job still has work to do or waits for a person (one row per status at most). */
async function hasUnfinishedJobs(store: JobStore): Promise<boolean> {
  for (const status of unfinishedStatuses) {
    if ((await store.list({ status, limit: 1 })).jobs.length > 0) return true;
  }
  return false;
}

/** Ends the file log's stream, if the log is one. */
async function closeLog(log: Logger | undefined): Promise<void> {
  const stream = log && 'stream' in log ? (log.stream as WriteStream) : undefined;
  await new Promise<void>((done) => (stream ? stream.end(done) : done()));
}

/** JSON lines appended to `opflow.log` beside the database. */
function fileLogger(dbPath: string, clock: { now(): number }): Logger & { stream: WriteStream } {
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

/** The least time between two publications of a streamed answer's text: four a second. */
export const localAnswerEveryMs = 250;

/**
 * How streamed answers are published (to the database four times a second, to this process's
 * listeners at once), and what the backend tells of them.
 */
function streamedAnswers(
  local: LocalBackend,
  clock: Clock,
  changes: JobChangeHub,
  log: Logger | undefined,
): { options: PartialAnswerOptions; backend: Pick<Backend, 'onAnswerText' | 'partialAnswers'> } {
  const store = new SqlitePartialAnswers(local.db, { now: () => clock.now() });
  return {
    options: {
      store,
      everyMs: localAnswerEveryMs,
      onText: changes.emitText,
      onError: (error) =>
        log?.warn('a partial answer could not be published', { error: errorMessage(error) }),
    },
    backend: { onAnswerText: changes.subscribeText, partialAnswers: async () => store },
  };
}

/** The stores of the features beside the engine, tables of the same database. */
function localFeatureStores(
  db: LocalDatabase,
  clock: Clock,
): Pick<Backend, 'scheduleStates' | 'webhookDeliveries' | 'changeFeed'> {
  const scheduleStates = new SqliteScheduleStateStore(db);
  const deliveries = new SqliteWebhookDeliveries(db, { now: () => clock.now() });
  // Created on first use: its triggers then log every process's writes to the file.
  let changeLog: SqliteChangeLog | undefined;
  return {
    scheduleStates: async () => scheduleStates,
    webhookDeliveries: async () => deliveries,
    changeFeed: async () => {
      changeLog ??= new SqliteChangeLog(db, { now: () => clock.now() });
      return changeLog;
    },
  };
}
