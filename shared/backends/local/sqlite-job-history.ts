/**
 * The job history (see shared/engine/history.ts) in the local database: one row per job version,
 * in its own table created when first used. Nothing prunes it yet: a job that polls for hours has
 * a row per poll (small: the status, step, counters and usage).
 */
import { eventOf, type JobEvent, type JobHistory } from '../../engine/history';
import type { Job } from '../../engine/job-record';
import type { LocalDatabase } from './database';

export class SqliteJobHistory implements JobHistory {
  private readonly insert;
  private readonly select;

  constructor(private readonly db: LocalDatabase) {
    db.exec(`
      CREATE TABLE IF NOT EXISTS job_events (
        job_id TEXT NOT NULL,
        version INTEGER NOT NULL,
        body TEXT NOT NULL,
        PRIMARY KEY (job_id, version)
      ) STRICT, WITHOUT ROWID;
    `);
    this.insert = db.prepare('INSERT OR IGNORE INTO job_events (job_id, version, body) VALUES (?, ?, ?)');
    this.select = db.prepare('SELECT body FROM job_events WHERE job_id = ? ORDER BY version');
  }

  record(job: Job): void {
    if (!this.db.open) return;
    const event = eventOf(job);
    this.insert.run(job.id, job.version, JSON.stringify(event));
  }

  async list(jobId: string): Promise<JobEvent[]> {
    return (this.select.all(jobId) as { body: string }[]).map((row) => JSON.parse(row.body) as JobEvent);
  }
}
