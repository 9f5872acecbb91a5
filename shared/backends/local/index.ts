/**
 * The local embedded backend: SQLite job store and work queue in one database file, reports as files
 * under an output folder, API keys from the environment, an adaptive rate limiter in the database (shared by its processes).
 * This file is the only way in.
 */
export {
  createLocalBackend,
  defaultDatabasePath,
  defaultOutDir,
  defaultRatePerSecond,
  type LocalBackend,
  type LocalBackendOptions,
  systemClock,
} from './create-local-backend';
export {
  DatabaseSchemaMismatch,
  type LocalDatabase,
  type OpenDatabaseOptions,
  openLocalDatabase,
  openLocalDatabaseToRead,
} from './database';
export { EnvKeySource, type EnvKeySourceOptions, tenantKeyVariable } from './env-key-source';
export { FileReportStore, type FileReportStoreOptions, InvalidReportKeyError } from './file-report-store';
export { SqliteBatchStore } from './sqlite-batch-store';
export { SqliteChangeLog, type SqliteChangeLogOptions } from './sqlite-change-log';
export { SqliteJobHistory } from './sqlite-job-history';
export { SqliteJobStore } from './sqlite-job-store';
export { SqlitePartialAnswers, type SqlitePartialAnswersOptions } from './sqlite-partial-answers';
export { SqlitePollStats } from './sqlite-poll-stats';
export { SqliteRateLimiter } from './sqlite-rate-limiter';
export {
  type ClaimedMessage,
  isLeaseOwnerAlive,
  leaseOwnerOfThisProcess,
  type MessageHeldAhead,
  SqliteWorkQueue,
  type SqliteWorkQueueOptions,
} from './sqlite-work-queue';
