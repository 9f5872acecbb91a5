/**
 * What the engine is wired with: the ports of a backend, the Open Platform client, the workflows,
 * and optional logging and metrics. `shared/runtime` builds one of these per backend.
 */
import type { CallbackUrlPolicy } from '../callbacks/ssrf-guard';
import type { Logger } from '../log/logger';
import type { OpenPlatformClient } from '../openplatform/types';
import type { CallOrder } from './admission/budget-filler';
import type { PollTimer } from './advance';
import type { BatchStore } from './batch-store';
import type { CallbackOutbox } from './callback-ports';
import type { PollStatsStore } from './poll-stats';
import type { PollAim } from './poll-timing';
import type { Clock, JobStore, KeySource, RateLimiter, ReportStore, WorkQueue } from './ports';
import type { ReportWriter } from './report';
import type { UpstreamIdentity } from './upstream-identity';
import type { WorkflowRegistry } from './workflow';

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
  /**
   * Writes a finished job's report files: shared/reports/write-job-report.ts's `writeJobReport`
   * (presentation and schedule changes live above the engine, which only calls it).
   */
  writeReport: ReportWriter;
  log?: Logger | undefined;
  metrics?: EngineMetrics | undefined;
  /** The batches: a job of a batch that runs again leaves its counts of finished jobs (`rejoinBatch`). */
  batches?: BatchStore | undefined;
  /** Learned poll timing shared by all workers; without it, polls follow the declared schedules. */
  pollStats?: PollStatsStore | undefined;
  /**
   * Which upstream a call made with this key goes to (the sandbox, or a base URL and the key's
   * fingerprint): recorded on the job by the step that calls. Without it nothing is recorded.
   */
  upstreamOf?: ((apiKey: string) => UpstreamIdentity) | undefined;
  /** Names the upstream the timing is learned for (its base URL; only a hash of it is stored). */
  pollStatsScope?: string | undefined;
  /**
   * A reference poll timing that replaces the learned and the declared one for this job (the
   * throughput bench's oracle, which polls at the tasks' true ends); undefined: the usual timing.
   */
  pollTimerOf?: ((job: import('./job-record').Job) => PollTimer | undefined) | undefined;
  /** Quantiles of the learned durations polls aim at (default: 0.65 with room, 0.9 saturated). */
  pollAim?: PollAim | undefined;
  /** How far ahead a job may reserve a token of its key's budget (default 15 s; 0: never). */
  reserveHorizonMs?: number | undefined;
  /**
   * How far ahead of its due time a job's next call may book its token in the commit that schedules
   * it (default twice `reserveHorizonMs`). The aws runtime books as far as admission parks (10
   * minutes): there a call that comes due on a busy line costs an SQS message to wait for its
   * token, and polls of long tasks are due minutes ahead. (The local limiter books nothing: its
   * budget filler moves waiting polls.)
   */
  bookAheadMs?: number | undefined;
  /**
   * The order the calls of a key (by its bucket, the key's fingerprint) wait in while its budget is
   * saturated (see `CallOrder` in admission/budget-filler.ts; the local runtime's `BudgetFiller.orderOf`).
   * Absent or undefined: `finish-first`.
   */
  callOrder?: ((bucket: string) => CallOrder | undefined) | undefined;
  /**
   * Admission (aws): a job whose call has no token within its horizon while the key's budget is
   * saturated is parked (committed without a message) instead of sent back to ask again; a releaser
   * outside the runner (the step worker after each step, the sweeper) reserves parked jobs' tokens
   * in due order and sends each its one message. Off (default): such a job is sent back with a spread.
   */
  admission?: boolean | undefined;
  /**
   * Messages a job may send before the runaway guard fails it (`Job.messages`; default
   * `defaultMessageBudget`, job-record.ts).
   */
  messageBudget?: number | undefined;
  /** How paid calls in flight are guarded (defaults: 60 s allowance, a heartbeat every 15 s). */
  inFlight?: InFlightOptions | undefined;
  /** Told about every committed change (progress displays). */
  onJobChange?: ((job: import('./job-record').Job) => void) | undefined;
  /** Told about the job a step is for as soon as the step reads it (the step worker's log keys). */
  onJobRead?: ((job: import('./job-record').Job) => void) | undefined;
  /**
   * Every upstream call of a step is also bounded by this signal, whatever limits the call has
   * already (the step worker's: the function's deadline).
   */
  callSignal?: AbortSignal | undefined;
  /** Outgoing callbacks: without them, a job with a `callbackUrl` is refused (never accepted and ignored). */
  callbacks?: { outbox: CallbackOutbox; policy: CallbackUrlPolicy } | undefined;
}

/** shared/log's, re-exported for the engine's users (benchmarks, tests). */
export { silentLogger } from '../log/logger';

export interface InFlightOptions {
  /** How long a call may go without a heartbeat before its job counts as stranded. */
  allowanceMs?: number | undefined;
  heartbeatMs?: number | undefined;
  /** Names this caller on the job (a local process), so others can tell when it has died. */
  by?: string | undefined;
  /** Whether the caller named `by` is certainly gone (a process of this machine that exited). */
  isGone?: ((by: string) => boolean) | undefined;
}
