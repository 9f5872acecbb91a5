/**
 * The job history (see shared/engine/history.ts) in the local database: one row per job version,
 * in its own table created when first used. Kept bounded: events older than the retention (30
 * days by default) are deleted as new ones are written, at most once an
 * hour, so a database used for months holds a month of timelines, not every poll ever made.
 */
import {
  defaultHistoryRetentionMs,
  eventOf,
  historyEventLimit,
  type JobEvent,
  type JobHistory,
} from '../../engine/history';
import type { Job } from '../../engine/job-record';
import type { LocalDatabase } from './database';

const pruneEveryMs = 3600 * 1000;

export interface SqliteJobHistoryOptions {
  /** Events older than this are deleted (default 30 days). */
  retentionMs?: number | undefined;
  /** Default: the wall clock. */
  now?: (() => number) | undefined;
}

export class SqliteJobHistory implements JobHistory {
  private readonly insert;
  private readonly select;
  private readonly remove;
  private readonly retentionMs: number;
  private readonly now: () => number;
  private prunedAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly db: LocalDatabase,
    options: SqliteJobHistoryOptions = {},
  ) {
    this.retentionMs = options.retentionMs ?? defaultHistoryRetentionMs;
    this.now = options.now ?? Date.now;
    db.exec(`
      CREATE TABLE IF NOT EXISTS job_events (
        job_id TEXT NOT NULL,
        version INTEGER NOT NULL,
        body TEXT NOT NULL,
        PRIMARY KEY (job_id, version)
      ) STRICT, WITHOUT ROWID;
    `);
    this.insert = db.prepare('INSERT OR IGNORE INTO job_events (job_id, version, body) VALUES (?, ?, ?)');
    this.select = db.prepare(
      'SELECT body FROM (SELECT version, body FROM job_events WHERE job_id = ? ORDER BY version DESC LIMIT ?) ORDER BY version',
    );
    // The event's time is in its body: no column (and no migration of tables kept before pruning).
    this.remove = db.prepare("DELETE FROM job_events WHERE json_extract(body, '$.at') < ?");
  }

  record(job: Job): void {
    if (!this.db.open) return;
    const event = eventOf(job);
    this.insert.run(job.id, job.version, JSON.stringify(event));
    this.pruneDue();
  }

  async list(jobId: string): Promise<JobEvent[]> {
    return (this.select.all(jobId, historyEventLimit) as { body: string }[]).map(
      (row) => JSON.parse(row.body) as JobEvent,
    );
  }

  /** Deletes the events older than the retention; answers how many. */
  prune(): number {
    const now = this.now();
    this.prunedAt = now;
    return this.remove.run(now - this.retentionMs).changes;
  }

  private pruneDue(): void {
    if (this.now() - this.prunedAt < pruneEveryMs) return;
    try {
      this.prune();
    } catch {
      // Busy (another process writes): the next hour's turn prunes.
    }
  }
}
