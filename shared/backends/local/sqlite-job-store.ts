/**
 * The local JobStore: one row per job in SQLite, the job itself as JSON beside the few columns that
 * are indexed (status, due time, batch, tenant + idempotency key) and the fields the scheduler reads
 * a few times a second (`fillColumns`, in covering indexes; schema 2). Unfinished jobs are counted
 * by triggers into `job_work` (database.ts). Commits are conditional on the version, so two workers
 * that ran the same step cannot both write.
 */
import * as z from 'zod';
import { type Batch, checkJobAndBatchVersions } from '../../engine/batch-store';
import { maxClockAheadMs } from '../../engine/clock-skew';
import { type Job, type JobStatus, jobStatuses, schedulableStatuses } from '../../engine/job-record';
import type {
  FillCounts,
  FillScan,
  FillScanQuery,
  FillView,
  JobPage,
  JobStore,
  ListJobsQuery,
  WorkScan,
} from '../../engine/ports';
import { formatIssues } from '../../errors/zod-issues';
import type { LocalDatabase } from './database';

interface JobRow {
  body: string;
}

/** The columns a stored job must have to be read back; the rest of the record is trusted JSON. */
const storedJobSchema = z
  .object({
    id: z.string().min(1),
    status: z.enum(jobStatuses),
    version: z.number().int(),
    tenant: z.string(),
  })
  .loose();

const cursorSchema = z.string().regex(/^[\w-]{1,200}$/);

/** Default and largest page size of `list`. */
const defaultPageSize = 50;
const maxPageSize = 1000;

export class SqliteJobStore implements JobStore {
  readonly #db: LocalDatabase;
  readonly #insert;
  readonly #update;
  #updateBatch: import('better-sqlite3').Statement<[number, string, string, number]> | undefined;
  readonly #byId;
  readonly #byIdempotencyKey;
  readonly #due;
  readonly #stranded;
  readonly #writtenAhead;
  readonly #dueUnreserved;
  readonly #waiting;
  readonly #late;
  readonly #waitingGroups;
  readonly #workGroups;
  readonly #queued;

  /** Uses an open database from `openLocalDatabase` (the store does not close it). */
  constructor(db: LocalDatabase) {
    this.#db = db;
    this.#insert = db.prepare<JobColumns>(
      `INSERT INTO jobs (id, tenant, status, version, next_run_at, batch_id, idempotency_key, created_at, updated_at, body,
         ${fillColumns.join(', ')})
       VALUES (@id, @tenant, @status, @version, @next_run_at, @batch_id, @idempotency_key, @created_at, @updated_at, @body,
         ${fillColumns.map((column) => `@${column}`).join(', ')})`,
    );
    this.#update = db.prepare<JobColumns & { expected: number }>(
      `UPDATE jobs SET tenant = @tenant, status = @status, version = @version, next_run_at = @next_run_at,
         batch_id = @batch_id, idempotency_key = @idempotency_key, updated_at = @updated_at, body = @body,
         ${fillColumns.map((column) => `${column} = @${column}`).join(', ')}
       WHERE id = @id AND version = @expected`,
    );
    this.#byId = db.prepare<[string], JobRow>('SELECT body FROM jobs WHERE id = ?');
    this.#byIdempotencyKey = db.prepare<[string, string], JobRow>(
      'SELECT body FROM jobs WHERE tenant = ? AND idempotency_key = ?',
    );
    this.#due = db.prepare<[number, number], JobRow>(
      `SELECT body FROM jobs WHERE next_run_at IS NOT NULL AND next_run_at <= ?
       ORDER BY next_run_at, id LIMIT ?`,
    );
    // Jobs last written by a clock ahead (updated_at in the reader's future) with no queued message
    // at their version (one that has one is re-based by the queue): a scan of the unfinished jobs.
    this.#writtenAhead = db.prepare<[number, number], JobRow>(
      `SELECT body FROM jobs AS j WHERE next_run_at IS NOT NULL AND updated_at > ?
         AND NOT EXISTS (SELECT 1 FROM messages AS m WHERE m.job_id = j.id AND m.version = j.version)
       ORDER BY next_run_at, id LIMIT ?`,
    );
    this.#stranded = db.prepare<[number, number], JobRow>(
      `SELECT body FROM jobs AS j WHERE next_run_at IS NOT NULL AND next_run_at <= ?
         AND NOT EXISTS (SELECT 1 FROM messages AS m WHERE m.job_id = j.id AND m.version = j.version)
       ORDER BY next_run_at, id LIMIT ?`,
    );
    // The budget filler's reads (scanForFill), a few times a second: along the due time, from
    // covering indexes of the fields it decides on (jobs_due_fill, jobs_waiting_fill: no row, no JSON).
    this.#dueUnreserved = db.prepare<[number, number], { tenant: string; n: number }>(
      `SELECT tenant, COUNT(*) AS n FROM (
         SELECT tenant FROM jobs INDEXED BY jobs_due_fill
         WHERE next_run_at IS NOT NULL AND next_run_at <= ? AND token_at IS NULL
         ORDER BY next_run_at, id LIMIT ?)
       GROUP BY tenant`,
    );
    this.#waiting = db.prepare<[number, number, number], WaitingRow>(
      `SELECT id, version, tenant, workflow, step, run_at, attempts, polls, poll_started_at, last_polled_at,
         in_flight_since, token_at, error_at, unsaved
       FROM jobs INDEXED BY jobs_waiting_fill
       WHERE status = 'WAITING' AND next_run_at > ? AND next_run_at <= ?
       ORDER BY next_run_at, id LIMIT ?`,
    );
    // With the budget full: the polls of one workflow step scheduled later than `laterThanMs` after
    // their task's start (jobs_poll_lateness: a range of the index per step, no row read).
    this.#late = db.prepare<[string, string, number, number, number, number], WaitingRow>(
      `SELECT id, version, tenant, workflow, step, run_at, attempts, polls, poll_started_at, last_polled_at,
         in_flight_since, token_at, error_at, unsaved
       FROM jobs INDEXED BY jobs_poll_lateness
       WHERE status = 'WAITING' AND poll_started_at IS NOT NULL AND workflow = ? AND step = ?
         AND (run_at - poll_started_at) > ? AND next_run_at > ? AND next_run_at <= ?
       LIMIT ?`,
    );
    this.#waitingGroups = db.prepare<[], WorkGroupRow>(
      "SELECT tenant, status, workflow, step, n FROM job_work WHERE status = 'WAITING' AND n > 0",
    );
    // The scheduler's count of unfinished work (scanWork), every few seconds: the counts the
    // triggers keep (job_work, a row per tenant, status, workflow and step), and the oldest QUEUED
    // jobs along the status index (read only near the end of a key's work).
    this.#workGroups = db.prepare<[], WorkGroupRow>(
      'SELECT tenant, status, workflow, step, n FROM job_work WHERE n > 0',
    );
    this.#queued = db.prepare<[number], QueuedRow>(
      `SELECT id, version, tenant, next_run_at, token_at FROM jobs INDEXED BY jobs_by_status
       WHERE status = 'QUEUED' ORDER BY id LIMIT ?`,
    );
  }

  async create(job: Job): Promise<{ job: Job; created: boolean }> {
    // One immediate transaction: the idempotency check and the insert cannot interleave with another process.
    return this.#db
      .transaction((): { job: Job; created: boolean } => {
        if (job.idempotencyKey !== undefined) {
          const existing = this.#byIdempotencyKey.get(job.tenant, job.idempotencyKey);
          if (existing) return { job: parseJob(existing.body), created: false };
        }
        try {
          this.#insert.run(columnsOf(job));
        } catch (error) {
          if (isConstraintError(error) && this.#byId.get(job.id)) {
            throw new Error(`a job with id ${job.id} already exists`, { cause: error });
          }
          throw error;
        }
        return { job, created: true };
      })
      .immediate();
  }

  async get(id: string): Promise<Job | undefined> {
    const row = this.#byId.get(id);
    return row ? parseJob(row.body) : undefined;
  }

  async commit(job: Job, expectedVersion: number): Promise<boolean> {
    if (job.version !== expectedVersion + 1) {
      throw new RangeError(
        `job ${job.id}: a commit must raise the version by one (expected ${expectedVersion + 1}, got ${job.version})`,
      );
    }
    return this.#update.run({ ...columnsOf(job), expected: expectedVersion }).changes === 1;
  }

  /** `commit` and the job's batch (on its version) in one immediate transaction, or neither. */
  async commitWithBatch(
    job: Job,
    expectedVersion: number,
    batch: Batch,
    expectedBatchVersion: number,
  ): Promise<boolean> {
    checkJobAndBatchVersions(job, expectedVersion, batch, expectedBatchVersion);
    // The batches table is the batch store's (sqlite-batch-store.ts): prepared when first needed.
    this.#updateBatch ??= this.#db.prepare<[number, string, string, number]>(
      'UPDATE batches SET version = ?, body = ? WHERE id = ? AND version = ?',
    );
    const updateBatch = this.#updateBatch;
    const lostBatch = new Error('the batch changed');
    try {
      return this.#db
        .transaction((): boolean => {
          if (this.#update.run({ ...columnsOf(job), expected: expectedVersion }).changes !== 1) return false;
          // Another writer changed the batch: the job's write is rolled back with it.
          if (
            updateBatch.run(batch.version, JSON.stringify(batch), batch.id, expectedBatchVersion).changes !==
            1
          )
            throw lostBatch;
          return true;
        })
        .immediate();
    } catch (error) {
      if (error === lostBatch) return false;
      throw error;
    }
  }

  async listDue(now: number, limit: number): Promise<Job[]> {
    return this.#due.all(now, clampLimit(limit, maxPageSize)).map((row) => parseJob(row.body));
  }

  /**
   * Like `listDue`, but only the jobs that no queued message will bring back: nothing in the queue
   * (of the same database) names their current version. The local sweeper re-sends only these, so
   * a job that merely waits its turn behind the rate limit is not sent twice.
   */
  async listStranded(now: number, limit: number): Promise<Job[]> {
    return this.#stranded.all(now, clampLimit(limit, maxPageSize)).map((row) => parseJob(row.body));
  }

  /**
   * Unfinished jobs last written by a clock ahead of `now`'s, with no queued message at their
   * version, whatever their status or call: the sweeper decides which it sends (engine/sweep.ts's
   * `sentWhenWrittenAhead`); the runner re-bases them.
   */
  async listWrittenAhead(now: number, limit: number): Promise<Job[]> {
    return this.#writtenAhead
      .all(now + maxClockAheadMs, clampLimit(limit, maxPageSize))
      .map((row) => parseJob(row.body));
  }

  /**
   * The budget filler's read: jobs due by `dueBy` with no reserved token, counted per tenant (the
   * soonest `countUpTo` tenants' rows in all: the filler only needs to know whether the budget is
   * full), and the WAITING jobs due in (`dueBy`, `until`] as slim views, soonest first.
   */
  async scanForFill(query: FillScanQuery): Promise<FillScan> {
    const dueByTenant = query.countUpTo >= 1 ? this.#countDue(query.dueBy, query.countUpTo) : new Map();
    const limit = clampLimit(query.limit, maxPageSize);
    if (query.later === undefined) {
      return { dueByTenant, waiting: this.#waiting.all(query.dueBy, query.until, limit).map(viewOf) };
    }
    const rows: WaitingRow[] = [];
    for (const { workflow, step, laterThanMs } of query.later) {
      rows.push(...this.#late.all(workflow, step, laterThanMs, query.dueBy, query.until, limit));
    }
    // Soonest first, as the whole window would list them, and no more than asked for.
    rows.sort((a, b) => (a.run_at ?? 0) - (b.run_at ?? 0) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    return { dueByTenant, waiting: rows.slice(0, limit).map(viewOf) };
  }

  /**
   * The first read of a filler round: the due jobs without a reserved token counted per tenant (as
   * `scanForFill`), and the WAITING jobs by tenant, workflow and step from the counts the triggers keep.
   */
  async countForFill(query: { dueBy: number; countUpTo: number }): Promise<FillCounts> {
    return {
      dueByTenant: this.#countDue(query.dueBy, query.countUpTo),
      waiting: this.#waitingGroups.all().map((row) => ({
        tenant: row.tenant,
        workflow: row.workflow,
        step: row.step,
        count: row.n,
      })),
    };
  }

  #countDue(dueBy: number, countUpTo: number): Map<string, number> {
    const dueByTenant = new Map<string, number>();
    for (const row of this.#dueUnreserved.all(dueBy, clampLimit(countUpTo, maxPageSize)))
      dueByTenant.set(row.tenant, row.n);
    return dueByTenant;
  }

  /**
   * The scheduler's read of the unfinished work: QUEUED, RUNNING and WAITING jobs counted by tenant,
   * status, workflow and step, and the oldest QUEUED jobs (ids sort by creation time).
   */
  async scanWork(query: { queuedLimit: number }): Promise<WorkScan> {
    const groups = this.#workGroups.all().map((row) => {
      if (row.workflow === '' || row.step === '')
        throw new Error(`stored jobs of tenant "${row.tenant}" are damaged: no workflow or step`);
      return {
        tenant: row.tenant,
        status: storedJobSchema.shape.status.parse(row.status),
        workflow: row.workflow,
        step: row.step,
        count: row.n,
      };
    });
    const queued = (
      query.queuedLimit >= 1 ? this.#queued.all(clampLimit(query.queuedLimit, maxPageSize)) : []
    ).map((row) => ({
      id: row.id,
      version: row.version,
      tenant: row.tenant,
      nextRunAt: row.next_run_at ?? 0,
      ...(row.token_at !== null ? { tokenAt: row.token_at } : {}),
    }));
    return { groups, queued };
  }

  /** Newest first (job ids sort by creation time); the cursor is the last id of the previous page. */
  async list(query: ListJobsQuery): Promise<JobPage> {
    const where: string[] = [];
    const params: (string | number)[] = [];
    if (query.status !== undefined) {
      where.push('status = ?');
      params.push(query.status satisfies JobStatus);
    }
    if (query.batchId !== undefined) {
      where.push('batch_id = ?');
      params.push(query.batchId);
    }
    if (query.tenant !== undefined) {
      where.push('tenant = ?');
      params.push(query.tenant);
    }
    if (query.cursor !== undefined) {
      const cursor = cursorSchema.safeParse(query.cursor);
      if (!cursor.success) throw new RangeError('list: the cursor is not one this store handed out');
      where.push('id < ?');
      params.push(cursor.data);
    }
    const limit = clampLimit(query.limit ?? defaultPageSize, maxPageSize);
    const sql = `SELECT body FROM jobs ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''}
      ORDER BY id DESC LIMIT ?`;
    // One more than asked for tells whether there is a next page without a second query.
    const rows = this.#db.prepare<(string | number)[], JobRow>(sql).all(...params, limit + 1);
    const jobs = rows.slice(0, limit).map((row) => parseJob(row.body));
    const last = jobs[jobs.length - 1];
    return rows.length > limit && last !== undefined ? { jobs, cursor: last.id } : { jobs };
  }

  async findByIdempotencyKey(tenant: string, key: string): Promise<Job | undefined> {
    const row = this.#byIdempotencyKey.get(tenant, key);
    return row ? parseJob(row.body) : undefined;
  }
}

interface WorkGroupRow {
  tenant: string;
  status: string;
  workflow: string;
  step: string;
  n: number;
}

interface QueuedRow {
  id: string;
  version: number;
  tenant: string;
  next_run_at: number | null;
  token_at: number | null;
}

interface WaitingRow {
  id: string;
  version: number;
  tenant: string;
  workflow: string | null;
  step: string | null;
  run_at: number | null;
  attempts: number | null;
  polls: number | null;
  poll_started_at: number | null;
  last_polled_at: number | null;
  in_flight_since: number | null;
  token_at: number | null;
  error_at: number | null;
  unsaved: number | null;
}

function viewOf(row: WaitingRow): FillView {
  const { workflow, step, run_at: nextRunAt, attempts, polls } = row;
  if (workflow === null || step === null || nextRunAt === null || attempts === null || polls === null)
    throw new Error(`a stored job is damaged (${row.id}): no workflow, step, nextRunAt, attempts or polls`);
  return {
    id: row.id,
    version: row.version,
    tenant: row.tenant,
    status: 'WAITING',
    workflow,
    step,
    nextRunAt,
    attempts,
    polls,
    pollStartedAt: row.poll_started_at ?? undefined,
    lastPolledAt: row.last_polled_at ?? undefined,
    inFlightSince: row.in_flight_since ?? undefined,
    tokenAt: row.token_at ?? undefined,
    lastError: row.error_at === null ? undefined : { at: row.error_at },
    unsaved: row.unsaved === 1 ? true : undefined,
  };
}

/** The filler's columns (database.ts, schema 2), written from the job at every insert and commit. */
const fillColumns = [
  'workflow',
  'step',
  'run_at',
  'attempts',
  'polls',
  'poll_started_at',
  'last_polled_at',
  'in_flight_since',
  'token_at',
  'error_at',
  'unsaved',
  'fill_version',
] as const;

interface JobColumns {
  id: string;
  tenant: string;
  status: string;
  version: number;
  next_run_at: number | null;
  batch_id: string | null;
  idempotency_key: string | null;
  created_at: number;
  updated_at: number;
  body: string;
  workflow: string;
  step: string;
  run_at: number | null;
  attempts: number;
  polls: number;
  poll_started_at: number | null;
  last_polled_at: number | null;
  in_flight_since: number | null;
  token_at: number | null;
  error_at: number | null;
  unsaved: number;
  fill_version: number;
}

function columnsOf(job: Job): JobColumns {
  const schedulable = schedulableStatuses.has(job.status);
  return {
    workflow: job.workflow,
    step: job.step,
    run_at: schedulable ? job.nextRunAt : null,
    attempts: job.attempts,
    polls: job.polls,
    poll_started_at: job.pollStartedAt ?? null,
    last_polled_at: job.lastPolledAt ?? null,
    in_flight_since: job.inFlightSince ?? null,
    token_at: job.tokenAt ?? null,
    error_at: job.lastError?.at ?? null,
    unsaved: job.unsaved === undefined ? 0 : 1,
    fill_version: job.version,
    id: job.id,
    tenant: job.tenant,
    status: job.status,
    version: job.version,
    next_run_at: schedulable ? Math.floor(job.nextRunAt) : null,
    batch_id: job.batchId ?? null,
    idempotency_key: job.idempotencyKey ?? null,
    created_at: Math.floor(job.createdAt),
    updated_at: Math.floor(job.updatedAt),
    body: JSON.stringify(job),
  };
}

function parseJob(body: string): Job {
  const parsed = storedJobSchema.safeParse(JSON.parse(body));
  if (!parsed.success) {
    throw new Error(`a stored job is damaged: ${formatIssues(parsed.error)}`);
  }
  return parsed.data as unknown as Job;
}

function clampLimit(limit: number, max: number): number {
  if (!Number.isFinite(limit)) return max;
  return Math.min(max, Math.max(1, Math.floor(limit)));
}

function isConstraintError(error: unknown): boolean {
  return (
    typeof error === 'object' &&
    error !== null &&
    'code' in error &&
    typeof error.code === 'string' &&
    error.code.startsWith('SQLITE_CONSTRAINT')
  );
}
