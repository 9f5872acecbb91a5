/**
 * What the engine is wired with, split by who needs what: `JobDeps` (creating, reading and changing
 * job records), `SweepDeps` (the sweeper) and `StepDeps` (the step runner: the job side, the
 * upstream and the tuning). `shared/runtime/engine-wiring.ts` builds them from a backend's ports.
 */
import type { CallbackUrlPolicy } from '../callbacks/ssrf-guard';
import type { Logger } from '../log/logger';
import type { OpenPlatformClient } from '../openplatform/types';
import type { CallOrder } from './admission/budget-filler';
import type { KeyWork, PollAllowance } from './admission/poll-price';
import type { PollTimer } from './advance';
import type { BatchStore } from './batch-store';
import type { CallbackOutbox } from './callback-ports';
import type { PollStatsStore } from './poll-stats';
import type { Clock, JobStore, KeySource, RateLimiter, ReportStore, WorkQueue } from './ports';
import type { ReportWriter } from './report';
import type { UpstreamIdentity } from './upstream-identity';
import type { WorkflowRegistry } from './workflow';

/** Counters the engine reports (names: StepsRun, Retries, UpstreamCalls, BilledUnits, JobSucceeded, JobFailed, ...). */
export interface EngineMetrics {
  count(name: string, value?: number, dimensions?: Record<string, string>): void;
}

/**
 * What creating, reading, answering, cancelling and retrying jobs needs (the job API, schedules,
 * webhooks, ingestion, the CLI's record commands): the job store, the queue, the report store, the
 * clock and the workflows. Nothing here calls the Open Platform.
 */
export interface JobDeps {
  store: JobStore;
  queue: WorkQueue;
  reports: ReportStore;
  clock: Clock;
  workflows: WorkflowRegistry;
  /** The batches: a job of a batch that runs again leaves its counts of finished jobs (`rejoinBatch`). */
  batches?: BatchStore | undefined;
  log?: Logger | undefined;
  metrics?: EngineMetrics | undefined;
  /**
   * Messages a job may send before the runaway guard fails it (`Job.messages`; default
   * `defaultMessageBudget`, job-record.ts).
   */
  messageBudget?: number | undefined;
  /** Outgoing callbacks: without them, a job with a `callbackUrl` is refused (never accepted and ignored). */
  callbacks?: { outbox: CallbackOutbox; policy: CallbackUrlPolicy } | undefined;
  /** Told about every committed change (progress displays, the job history, the callback loop). */
  onJobChange?: ((job: import('./job-record').Job) => void) | undefined;
  /**
   * Sends a new job's first message holding its first call's token (first-message.ts; aws, where
   * messages carry tokens). Absent: the first message goes at once and the step worker takes the token.
   */
  sendFirstMessage?: import('./first-message').FirstMessageSender | undefined;
  /**
   * How many distinct people must confirm the selection a job awaits, by the reviewers' rule that
   * matches it (shared/reviewers): asked when a job is answered before the reviewers' pass has
   * recorded its review (`Job.review`). Absent: one.
   */
  reviewApprovals?: ((job: import('./job-record').Job) => number) | undefined;
}

/** What the sweeper needs: stranded jobs found in the store and sent again. */
export type SweepDeps = Pick<JobDeps, 'store' | 'queue' | 'clock' | 'log' | 'metrics' | 'messageBudget'>;

/**
 * What the step runner needs: the job side, the upstream (client, keys, the key's rate budget) and
 * the tuning of polls and admission. shared/runtime/engine-wiring.ts builds one from a backend's ports.
 */
export interface StepDeps extends JobDeps {
  keys: KeySource;
  rateLimiter: RateLimiter;
  /** Uniform in [0, 1): jitter. Injected so tests are exact. */
  random: () => number;
  client: OpenPlatformClient;
  /**
   * Writes a finished job's report files: shared/reports/write-job-report.ts's `writeJobReport`
   * (presentation and schedule changes live above the engine, which only calls it).
   */
  writeReport: ReportWriter;
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
  /**
   * The calls over its minimum a job whose time decides when its key's work ends may spend on polls
   * (admission/poll-price.ts; default 0.3: calls at most 1.3 of the minimum).
   */
  pollAllowance?: PollAllowance | undefined;
  /** A key's unfinished work as last counted (the local runtime's `BudgetFiller.workOf`); absent: not counted. */
  keyWork?: ((bucket: string) => KeyWork | undefined) | undefined;
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
   * Fair shares of each key's budget among tenants and batches (admission/fair-share.ts; weights
   * from `OPFLOW_SHARES`). Absent: calls wait in their priority's order only.
   */
  fairShares?: import('./admission/fair-share').FairShares | undefined;
  /** How paid calls in flight are guarded (defaults: 60 s allowance, a heartbeat every 15 s). */
  inFlight?: InFlightOptions | undefined;
  /**
   * Streamed answers as they arrive: published (throttled) to the live feed and told to in-process
   * listeners (partial-answer.ts). Absent: a stream's text is seen only in the finished job.
   */
  partialAnswers?: import('./partial-answer').PartialAnswerOptions | undefined;
  /** Told about the job a step is for as soon as the step reads it (the step worker's log keys). */
  onJobRead?: ((job: import('./job-record').Job) => void) | undefined;
  /**
   * Every upstream call of a step is also bounded by this signal, whatever limits the call has
   * already (the step worker's: the function's deadline).
   */
  callSignal?: AbortSignal | undefined;
}

/** Everything the engine is wired with: the step runner's set, of which every narrower set is a part. */
export type EngineDeps = StepDeps;

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
