/**
 * The ports: what the engine needs from a backend. `shared/backends/local` and
 * `shared/backends/aws` implement them; one contract suite (test/contract/) runs against both.
 */
import type { Job, JobStatus } from './job-record';

export interface Clock {
  now(): number;
}

export interface ListJobsQuery {
  status?: JobStatus | undefined;
  batchId?: string | undefined;
  tenant?: string | undefined;
  limit?: number | undefined;
  /** Opaque, from a previous page. */
  cursor?: string | undefined;
}

export interface JobPage {
  jobs: Job[];
  cursor?: string | undefined;
}

export interface JobStore {
  /**
   * Insert a new job. With an idempotency key, a second create for the same tenant and key returns
   * the job that already exists instead (`created: false`).
   */
  create(job: Job): Promise<{ job: Job; created: boolean }>;
  get(id: string): Promise<Job | undefined>;
  /**
   * Write `job` only if the stored version is still `expectedVersion`; `job.version` must be
   * `expectedVersion + 1`. Returns false when another writer won.
   */
  commit(job: Job, expectedVersion: number): Promise<boolean>;
  /**
   * `commit`, and the job's batch written in the same write (a transaction on both versions, or
   * neither): the usage of a call that came back after its job finished is added to the batch's
   * settled totals with the job's own (`recordLateUsage`, runner.ts). Absent: two writes.
   */
  commitWithBatch?(
    job: Job,
    expectedVersion: number,
    batch: import('./batch-store').Batch,
    expectedBatchVersion: number,
  ): Promise<boolean>;
  /** Non-terminal jobs (see `schedulableStatuses`) whose `nextRunAt` is at or before `now`, oldest first. */
  listDue(now: number, limit: number): Promise<Job[]>;
  list(query: ListJobsQuery): Promise<JobPage>;
  findByIdempotencyKey(tenant: string, key: string): Promise<Job | undefined>;
  /**
   * Optional: many jobs by id at once (a missing one is left out), for stores where each `get` is
   * a round trip (DynamoDB: BatchGetItem, 100 a request). Callers fall back to `get` without it.
   */
  getMany?(ids: readonly string[]): Promise<Job[]>;
  /**
   * Optional: unfinished jobs last written by a clock ahead of `now`'s (their `updatedAt` beyond the
   * tolerance of engine/clock-skew.ts) that nothing else brings back, whatever their status or
   * call: the candidates. The sweeper decides which it sends (`sentWhenWrittenAhead`, engine/sweep.ts;
   * a paid call in flight included) and the runner re-bases their times. Local: any such job without
   * a queued message at its version; DynamoDB: such jobs created ahead (their `createdAt` in the
   * reader's future, from the status index). The port contract suite holds both to it.
   */
  listWrittenAhead?(now: number, limit: number): Promise<Job[]>;
  /**
   * Optional: the jobs of many idempotency keys of one tenant at once, by key (a key without a job
   * is left out). Callers fall back to `findByIdempotencyKey` without it.
   */
  findByIdempotencyKeys?(tenant: string, keys: readonly string[]): Promise<Map<string, Job>>;
  /**
   * Optional: what the budget filler (engine/admission/budget-filler.ts) reads a few times a second, cheaply:
   * per tenant, how many jobs are due by `dueBy` without a reserved token (each tenant counted up to
   * `countUpTo`), and the WAITING jobs due in (`dueBy`, `until`], soonest first, as slim views. A
   * store without it is read with `listDue` (whole jobs, the due ones first).
   */
  scanForFill?(query: FillScanQuery): Promise<FillScan>;
  /**
   * Optional, with `scanForFill`: the first read of a filler round, so a round whose budget has no
   * room reads only the jobs a re-aim can move (`FillScanQuery.later`): per tenant, how many jobs
   * are due by `dueBy` without a reserved token (as `scanForFill` counts them), and the WAITING jobs
   * counted by tenant, workflow and step (kept as jobs change, not counted job by job).
   */
  countForFill?(query: { dueBy: number; countUpTo: number }): Promise<FillCounts>;
  /**
   * Optional: the unfinished work the budget filler orders calls by near the end of a key's work
   * (engine/admission/budget-filler.ts, `planOrder`): QUEUED, RUNNING and WAITING jobs counted by tenant, workflow,
   * step and status, and the oldest QUEUED jobs (at most `queuedLimit`; none for 0). It is read every
   * few seconds whatever the backlog: a store should keep the counts as jobs change rather than
   * count every job (SQLite: triggers). A store without it leaves the order as it is.
   */
  scanWork?(query: { queuedLimit: number }): Promise<WorkScan>;
}

/** Unfinished jobs of one tenant at one step of one workflow, in one status. */
export interface WorkGroup {
  tenant: string;
  workflow: string;
  step: string;
  status: JobStatus;
  count: number;
}

export interface WorkScan {
  groups: WorkGroup[];
  /** The oldest QUEUED jobs (not started yet), oldest first. */
  queued: Pick<Job, 'id' | 'version' | 'tenant' | 'nextRunAt' | 'tokenAt'>[];
}

export interface FillScanQuery {
  dueBy: number;
  until: number;
  /** Waiting jobs returned at most. */
  limit: number;
  /** Due jobs counted per tenant at most (the filler only needs to know the budget is full); 0: none counted. */
  countUpTo: number;
  /**
   * Only the WAITING jobs at these steps whose next poll lies more than `laterThanMs` after their
   * task's start (`nextRunAt - pollStartedAt`), soonest first: with the budget full, the only jobs a
   * re-aim can move (admission/budget-filler.ts). Absent: every WAITING job in the window.
   */
  later?: readonly { workflow: string; step: string; laterThanMs: number }[] | undefined;
}

export interface FillCounts {
  dueByTenant: Map<string, number>;
  /** WAITING jobs (any due time) by tenant, workflow and step. */
  waiting: Pick<WorkGroup, 'tenant' | 'workflow' | 'step' | 'count'>[];
}

/** The fields of a job the budget filler decides on; a move reads and commits the whole job. */
export type FillView = Pick<
  Job,
  | 'id'
  | 'version'
  | 'tenant'
  | 'workflow'
  | 'status'
  | 'step'
  | 'nextRunAt'
  | 'attempts'
  | 'polls'
  | 'pollStartedAt'
  | 'lastPolledAt'
  | 'inFlightSince'
  | 'tokenAt'
> & {
  lastError?: { at: number } | undefined;
  /** Only whether the job keeps an answer not stored yet. */
  unsaved?: unknown;
};

export interface FillScan {
  /** Jobs due by `dueBy` holding no reserved token, by tenant (each at most `countUpTo`). */
  dueByTenant: Map<string, number>;
  waiting: FillView[];
}

export interface WorkMessage {
  jobId: string;
  version: number;
  /**
   * A token of the key's budget reserved for this job's call at this time, held by the message
   * instead of the record (a queue that `carriesTokens`; see runner.ts): only a message at the
   * job's version spends it, and the job's next commit makes every message of this version stale.
   */
  tokenAt?: number | undefined;
}

export interface WorkQueue {
  /** Ask for the job to be looked at after `delayMs` (the backend caps the delay it can hold). */
  send(message: WorkMessage, delayMs: number): Promise<void>;
  sendBatch?(messages: { message: WorkMessage; delayMs: number }[]): Promise<void>;
  /** The longest delay this queue can hold; longer waits rely on `nextRunAt` and the sweeper. */
  readonly maxDelayMs: number;
  /**
   * Messages keep their `tokenAt` (SQS): a job waiting for a reserved token is sent back with it,
   * without a commit. Otherwise the token is recorded in the job (`tokenAt`, one commit).
   */
  readonly carriesTokens?: boolean;
}

export interface StoredObject {
  body: Uint8Array;
  contentType: string;
}

export interface ReportStore {
  /** Write (or overwrite) an object. Keys look like `reports/<jobId>/...`. */
  put(key: string, body: Uint8Array | string, contentType: string): Promise<void>;
  /**
   * Write (or overwrite) an object from chunks as they are produced, never holding it whole (a large
   * batch's summary). Readers see the old object or the whole new one. Optional: without it, callers
   * collect the chunks and `put` them.
   */
  putStream?(key: string, body: AsyncIterable<Uint8Array | string>, contentType: string): Promise<void>;
  get(key: string): Promise<StoredObject | undefined>;
  list(prefix: string): Promise<string[]>;
  /** Where a reader can fetch the object: a file path locally, a short-lived presigned URL on AWS. */
  link(key: string, ttlSeconds?: number): Promise<string>;
}

export interface KeySource {
  /** The API key for a tenant, or undefined when there is none. */
  getKey(tenant: string): Promise<string | undefined>;
  /** Forget any cached key and read it again (after a 401, to pick up a rotated key). */
  refresh(tenant: string): Promise<string | undefined>;
}

/**
 * `reserved`: the token at `retryAtMs` is this caller's (asked for with `reserveWithinMs`): it may
 * call then without taking another one.
 */
export type RateDecision =
  | { granted: true }
  | {
      granted: false;
      retryAtMs: number;
      reserved?: boolean | undefined;
      /** The horizon the limiter asked within, when a share claim's standing set it (`ShareClaim.horizonFor`). */
      withinMs?: number | undefined;
    };

/**
 * Whose token a limiter that keeps the key's fair shares gives (`RateLimiter.keepsShares`): the
 * job's tenant and batch, charged in the write that takes the token (admission/fair-share.ts).
 */
export interface ShareClaim {
  tenant: string;
  batchId?: string | undefined;
  /**
   * The job whose call it is: with it, a call whose tenant or batch has fallen behind its share may
   * take over a token a leading tenant or batch reserved ahead (the holder finds it gone through
   * `stillHeld`, as after a `high` call's cut-in).
   */
  jobId?: string | undefined;
  /**
   * For a `take` whose call may stand back or step up: its horizon where its tenant and batch stand
   * against their shares (read and charged in the same write). Absent: `reserveWithinMs` as given.
   */
  horizonFor?: ((standing: 'ahead' | 'even' | 'behind') => number) | undefined;
}

/** One token bucket per API key, shared by every worker of a backend. */
export interface RateLimiter {
  /**
   * The limiter keeps the key's fair shares in its bucket: every token it gives to a `share` claim
   * is charged to the claim's tenant and batch in the same write (the aws bucket item, so every
   * function shares one ledger). The engine then keeps no ledger of its own for the key.
   */
  readonly keepsShares?: boolean | undefined;
  /**
   * Take one token for `bucket` now, or say when one will be available. Never waits. With
   * `reserveWithinMs`, a token due within that long is reserved for the caller (see RateDecision).
   */
  take(
    bucket: string,
    now: number,
    options?: { reserveWithinMs?: number; share?: ShareClaim | undefined },
  ): Promise<RateDecision>;
  /**
   * Reserve the token of a call due at `at` while it is being scheduled (see admission/rate-bucket.ts
   * `reserveAhead`): the time of the token reserved, within `withinMs` of `at`, or undefined when
   * none was (the call then takes its token when it comes). Optional: without it every call takes
   * its token when it comes. `sentBack`: the booking of a job sent back to wait (a spread return);
   * a limiter that keeps the key's shares books none while two tenants or more have work, as such
   * a booking lies past the line's end, where no tenant behind can take it over (the job then
   * parks on its return and is released in share order: `shareOrder`).
   */
  reserveAhead?(
    bucket: string,
    now: number,
    options: { at: number; withinMs: number; share?: ShareClaim | undefined; sentBack?: boolean | undefined },
  ): Promise<number | undefined>;
  /**
   * A `high` job's call (`by`, its id) goes ahead of the key's line: the time of the soonest token
   * reserved ahead that it takes over (admission/priority-lane.ts), or undefined when the line
   * would give it one as soon (it then takes its token as any call does). `options.at`: when the
   * call is due, for a call booked ahead (default now; a limiter that books nothing ahead may
   * ignore it). Optional: without it a priority call waits at the line's end, first among those
   * that ask after it.
   */
  cutIn?(
    bucket: string,
    now: number,
    by: string,
    options?: { at?: number; share?: ShareClaim | undefined },
  ): Promise<number | undefined>;
  /**
   * A call (`by`, its job's id) whose tenant or batch is behind its fair share takes over a token
   * reserved ahead for a leader (`plan.takes`, the engine's ledger: admission/share-cut.ts
   * `cutPlan`), from `plan.from(the key's rate)` and before `plan.before` and the line's
   * next free token: the time of the soonest such token, or undefined (nothing written). Its holder
   * finds it gone (`stillHeld`) and takes a new one. For a limiter without `keepsShares` (one that
   * keeps the shares does this in `take`). Optional: without it a call behind waits in line.
   */
  shareCutIn?(
    bucket: string,
    now: number,
    by: string,
    plan: { takes: (at: number) => boolean; from: (ratePerSecond: number) => number; before: number },
  ): Promise<number | undefined>;
  /**
   * For a limiter that keeps the key's shares: how calls of the key's tenants are owed its next
   * tokens, read once at `now` (weighted fair queueing from the ledger's virtual times, each pick
   * moving its tenant on by 1/weight): a function from the tenants of some calls (one entry a
   * call) to their indices in that order. Undefined when the ledger holds fewer than two tenants
   * (any order is then the shares'). The releaser of parked jobs releases in this order, so the
   * tokens it hands out follow the shares, not the parked jobs' ids. Optional: the local limiter
   * has none, as the local backend parks no jobs (its job store has no parked index; every wait
   * holds a message, and the engine's `FairShares` sets each call's horizon).
   */
  shareOrder?(bucket: string, now: number): Promise<((tenants: readonly string[]) => number[]) | undefined>;
  /**
   * Whether the token reserved for `at` is still `by`'s: false when a priority call took it over
   * (the holder then takes a new one). Optional: without it a reserved token is always its holder's.
   */
  stillHeld?(bucket: string, at: number, by: string): Promise<boolean>;
  /**
   * A held token (reserved for `at`) is about to be spent at `now`: when its call may go. `now`
   * when the key's last call is a token interval behind; later when a process busy for a while
   * claims several held tokens at once (they go one interval apart, each still holding its token,
   * instead of together over the key's limit). Optional: without it a held token is spent at once.
   */
  pace?(bucket: string, at: number, now: number): Promise<number>;
  /** The upstream throttled a call: slow the bucket down. */
  throttled(bucket: string, now: number): Promise<void>;
  /** A call went through: let the bucket speed up again, slowly. */
  succeeded(bucket: string, now: number): Promise<void>;
  /**
   * Whether the bucket's budget is used up now: in the last couple of seconds a take was refused
   * with its token more than one token interval away (a line longer than the call itself; a call
   * that waits only for the spacing after the one before, as one job's calls back to back on an
   * idle key do, is not). Optional: without it the engine assumes it has room.
   */
  saturated?(bucket: string, now: number): Promise<boolean>;
  /**
   * The bucket at `now`, without taking anything: the tokens it holds (below zero when tokens are
   * reserved ahead) and its current rate. Optional: without it the budget filler does not pull polls
   * forward into spare budget (admission/budget-filler.ts).
   */
  budget?(bucket: string, now: number): Promise<{ tokens: number; ratePerSecond: number }>;
}
