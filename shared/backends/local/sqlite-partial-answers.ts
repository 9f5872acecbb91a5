/**
 * Partial answers in the local database (shared/engine/partial-answer.ts): the text so far of each
 * job's latest stream step in `partial_answers` (one row a job, replaced at each publication), and
 * the new part as an `answer` row of the change log, in one transaction. So `opflow serve`'s feed
 * carries the answer of a job streamed by any process writing the same file, in commit order with
 * its job's changes, resumable like them. Nothing is created before the first publication, and the
 * change row is written only once a feed has made the change log (nobody could read it before).
 * Rows older than the change log's retention are pruned.
 */
import type { PartialAnswer, PartialAnswerStore } from '../../engine/partial-answer';
import type { LocalDatabase } from './database';

type Statement = ReturnType<LocalDatabase['prepare']>;

import { defaultChangeRetentionMs, ensureChangeLog } from './sqlite-change-log';

const pruneEveryMs = 10 * 60 * 1000;

interface AnswerRow {
  job_id: string;
  body: string;
}

export interface SqlitePartialAnswersOptions {
  /** Default: the wall clock. */
  now?: (() => number) | undefined;
}

const tableSchema = `
  CREATE TABLE IF NOT EXISTS partial_answers (
    job_id TEXT PRIMARY KEY,
    at INTEGER NOT NULL,
    body TEXT NOT NULL
  ) STRICT;
`;

export class SqlitePartialAnswers implements PartialAnswerStore {
  readonly #db: LocalDatabase;
  readonly #now: () => number;
  #statements: ReturnType<typeof prepare> | undefined;
  /** The change log's insert, once a feed made the log. */
  #change: Statement | undefined;
  #prunedAt = Number.NEGATIVE_INFINITY;

  constructor(db: LocalDatabase, options: SqlitePartialAnswersOptions = {}) {
    this.#db = db;
    this.#now = options.now ?? Date.now;
  }

  async publish(answer: PartialAnswer): Promise<void> {
    if (!this.#db.open) return;
    const statements = this.#prepared();
    const change = this.#changeLog();
    this.#db
      .transaction(() => {
        statements.upsert.run(answer.jobId, answer.at, JSON.stringify(answer));
        change?.run({
          jobId: answer.jobId,
          tenant: answer.tenant,
          batchId: answer.batchId ?? null,
          workflow: answer.workflow,
          status: answer.status,
          step: answer.step,
          version: answer.version,
          at: answer.at,
          offset: answer.offset,
          part: answer.text.slice(answer.offset),
        });
      })
      .immediate();
    this.#pruneDue(statements);
  }

  async read(jobId: string): Promise<PartialAnswer | undefined> {
    if (!this.#db.open) return undefined;
    const row = this.#prepared().select.get(jobId);
    return row === undefined ? undefined : (JSON.parse(row.body) as PartialAnswer);
  }

  #prepared() {
    this.#statements ??= prepare(this.#db);
    return this.#statements;
  }

  /** The change log's insert once a feed made the log (its answer columns made sure of, once). */
  #changeLog(): Statement | undefined {
    if (this.#change !== undefined) return this.#change;
    const found = this.#db.prepare(
      "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'job_changes'",
    );
    if (found.get() === undefined) return undefined;
    ensureChangeLog(this.#db);
    this.#change = this.#db.prepare(
      `INSERT INTO job_changes (kind, id, tenant, batch_id, workflow, status, step, version, at, text_offset, text)
       VALUES ('answer', @jobId, @tenant, @batchId, @workflow, @status, @step, @version, @at, @offset, @part)`,
    );
    return this.#change;
  }

  #pruneDue(statements: ReturnType<typeof prepare>): void {
    const now = this.#now();
    if (now - this.#prunedAt < pruneEveryMs) return;
    this.#prunedAt = now;
    try {
      statements.prune.run(now - defaultChangeRetentionMs);
    } catch {
      // Busy (another process writes): the next turn prunes.
    }
  }
}

function prepare(db: LocalDatabase) {
  db.exec(tableSchema);
  return {
    upsert: db.prepare<[string, number, string]>(
      'INSERT INTO partial_answers (job_id, at, body) VALUES (?, ?, ?) ON CONFLICT (job_id) DO UPDATE SET at = excluded.at, body = excluded.body',
    ),
    select: db.prepare<[string], AnswerRow>('SELECT job_id, body FROM partial_answers WHERE job_id = ?'),
    prune: db.prepare<[number]>('DELETE FROM partial_answers WHERE at < ?'),
  };
}
