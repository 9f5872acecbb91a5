/**
 * What the engine is wired with: the ports of a backend, the Open Platform client, the workflows,
 * and optional logging and metrics. `shared/runtime` builds one of these per backend.
 */
import type { OpenPlatformClient } from '../openplatform/types';
import type { Clock, JobStore, KeySource, RateLimiter, ReportStore, WorkQueue } from './ports';
import type { WorkflowRegistry } from './workflow';

export interface EngineLogger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

/** Counters the engine reports (names: StepsRun, Retries, UpstreamCalls, BilledUnits, JobSucceeded, JobFailed, ...). */
export interface EngineMetrics {
  count(name: string, value?: number, dimensions?: Record<string, string>): void;
}

export interface EngineDeps {
  store: JobStore;
  queue: WorkQueue;
  reports: ReportStore;
  keys: KeySource;
  rateLimiter: RateLimiter;
  clock: Clock;
  /** Uniform in [0, 1): jitter. Injected so tests are exact. */
  random: () => number;
  client: OpenPlatformClient;
  workflows: WorkflowRegistry;
  log?: EngineLogger | undefined;
  metrics?: EngineMetrics | undefined;
  /** Told about every committed change (progress displays). */
  onJobChange?: ((job: import('./job').Job) => void) | undefined;
}

export const silentLogger: EngineLogger = { debug() {}, info() {}, warn() {}, error() {} };
