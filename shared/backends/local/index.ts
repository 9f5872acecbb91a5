/**
 * The local embedded backend: SQLite job store and work queue in one database file, reports as files
 * under an output folder, API keys from the environment, an in-memory adaptive rate limiter.
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
} from './createLocalBackend';
export { type LocalDatabase, type OpenDatabaseOptions, openLocalDatabase } from './database';
export { EnvKeySource, type EnvKeySourceOptions, tenantKeyVariable } from './EnvKeySource';
export { FileReportStore, type FileReportStoreOptions, InvalidReportKeyError } from './FileReportStore';
export { InMemoryRateLimiter } from './InMemoryRateLimiter';
export { SqliteBatchStore } from './SqliteBatchStore';
export { SqliteJobHistory } from './SqliteJobHistory';
export { SqliteJobStore } from './SqliteJobStore';
export { SqlitePollStats } from './SqlitePollStats';
export {
  type ClaimedMessage,
  isLeaseOwnerAlive,
  leaseOwnerOfThisProcess,
  SqliteWorkQueue,
  type SqliteWorkQueueOptions,
} from './SqliteWorkQueue';
