/**
 * Builds every port of the local backend over one database file and one output folder.
 */
import type { Clock } from '../../engine/ports';
import { type LocalDatabase, openLocalDatabase } from './database';
import { EnvKeySource } from './env-key-source';
import { FileReportStore } from './file-report-store';
import { SqliteBatchStore } from './sqlite-batch-store';
import { SqliteJobStore } from './sqlite-job-store';
import { SqlitePollStats } from './sqlite-poll-stats';
import { SqliteRateLimiter } from './sqlite-rate-limiter';
import { SqliteWorkQueue } from './sqlite-work-queue';

/** The database file used when none is given, relative to the current directory. */
export const defaultDatabasePath = '.opflow/opflow.db';
/** The output folder used when none is given, relative to the current directory. */
export const defaultOutDir = 'opflow-out';
/** Upstream calls per second per API key when none is given. */
export const defaultRatePerSecond = 5;

export interface LocalBackendOptions {
  /** The database file (jobs and queue). Default: `./.opflow/opflow.db`; `':memory:'` for tests. */
  dbPath?: string | undefined;
  /** The folder reports are written to. Default: `./opflow-out`. */
  outDir?: string | undefined;
  /** Default: the system clock. */
  clock?: Clock | undefined;
  /** Where API keys are read from. Default: `process.env`. */
  env?: Readonly<Record<string, string | undefined>> | undefined;
  /** The key used when the environment has none (the sandbox's, when opflow started it). */
  fallbackKey?: string | undefined;
  /** Upstream calls per second per API key (this process's ceiling on the shared bucket). Default: 5. */
  ratePerSecond?: number | undefined;
  /** Longest delay the queue holds; longer waits go through the sweeper. Default: one hour. */
  maxDelayMs?: number | undefined;
}

export interface LocalBackend {
  db: LocalDatabase;
  clock: Clock;
  store: SqliteJobStore;
  queue: SqliteWorkQueue;
  reports: FileReportStore;
  keys: EnvKeySource;
  /** Each key's rate bucket, in the database: shared by every process on it. */
  rateLimiter: SqliteRateLimiter;
  /** Bulk ingestion batches (`opflow ingest`), in the same database. */
  batches: SqliteBatchStore;
  /** Learned poll timing, shared by every process on the database. */
  pollStats: SqlitePollStats;
  /** The database file's path as given (or `':memory:'`). */
  dbPath: string;
  /** Closes the database. The ports must not be used afterwards. */
  close(): void;
}

/** The wall clock. */
export const systemClock: Clock = { now: () => Date.now() };

/** Opens (creating if needed) the database and output folder and builds the ports over them. */
export function createLocalBackend(options: LocalBackendOptions = {}): LocalBackend {
  const dbPath = options.dbPath ?? defaultDatabasePath;
  const clock = options.clock ?? systemClock;
  const db = openLocalDatabase(dbPath);
  return {
    db,
    clock,
    dbPath,
    store: new SqliteJobStore(db),
    batches: new SqliteBatchStore(db),
    queue: new SqliteWorkQueue(db, { clock, maxDelayMs: options.maxDelayMs }),
    reports: new FileReportStore({ outDir: options.outDir ?? defaultOutDir }),
    keys: new EnvKeySource({ env: options.env, fallbackKey: options.fallbackKey }),
    rateLimiter: new SqliteRateLimiter(db, { ratePerSecond: options.ratePerSecond ?? defaultRatePerSecond }),
    pollStats: new SqlitePollStats(db),
    close: () => {
      if (db.open) db.close();
    },
  };
}
