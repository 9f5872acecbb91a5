/**
 * The local ChangeFeed: a change log table the database appends to itself. Triggers on `jobs` and
 * `batches` insert a row in the transaction of every write that moves a version, whichever process
 * (or opflow version) writes, so `opflow run` in another terminal shows up in `opflow serve`'s feed.
 * SQLite serialises writers and the row's AUTOINCREMENT number is taken inside the writing
 * transaction, so numbers follow commit order and a reader never sees number N before N - 1: a
 * reader that read up to N misses nothing by asking for what is after N. (Polling `updated_at`
 * would not be safe: writers' clocks differ and a transaction may commit after a later timestamp
 * was read.) The table and triggers are created here when first used, as the other feature tables
 * are, so the numbered migrations stay untouched; rows older than the retention are pruned.
 */
import type { Change, ChangeFeed } from '../../engine/change-feed';
import type { LocalDatabase } from './database';

/** Changes are kept a day by default: a reader away longer reads the state again. */
export const defaultChangeRetentionMs = 24 * 3600 * 1000;
const pruneEveryMs = 10 * 60 * 1000;

const jobChangeColumns = `(kind, id, tenant, batch_id, workflow, status, step, version, previous_status, previous_step, at)`;
const jobChangeValues = (previous: string) => `VALUES ('job', new.id, new.tenant, new.batch_id,
        json_extract(new.body, '$.workflow'), new.status, json_extract(new.body, '$.step'), new.version,
        ${previous}, CAST(new.updated_at AS INTEGER))`;

const schema = `
  CREATE TABLE IF NOT EXISTS job_changes (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    kind TEXT NOT NULL,
    id TEXT NOT NULL,
    tenant TEXT NOT NULL,
    batch_id TEXT,
    workflow TEXT,
    status TEXT NOT NULL,
    step TEXT,
    version INTEGER NOT NULL,
    previous_status TEXT,
    previous_step TEXT,
    at INTEGER NOT NULL,
    text_offset INTEGER,
    text TEXT
  ) STRICT;
  CREATE TRIGGER IF NOT EXISTS job_changes_on_insert AFTER INSERT ON jobs
  BEGIN
    INSERT INTO job_changes ${jobChangeColumns}
      ${jobChangeValues('NULL, NULL')};
  END;
  CREATE TRIGGER IF NOT EXISTS job_changes_on_update AFTER UPDATE OF version ON jobs
    WHEN old.version IS NOT new.version
  BEGIN
    INSERT INTO job_changes ${jobChangeColumns}
      ${jobChangeValues("old.status, json_extract(old.body, '$.step')")};
  END;
`;

const batchSchema = `
  CREATE TRIGGER IF NOT EXISTS batch_changes_on_insert AFTER INSERT ON batches
  BEGIN
    INSERT INTO job_changes (kind, id, tenant, workflow, status, version, at)
      VALUES ('batch', new.id, new.tenant, json_extract(new.body, '$.workflow'),
        json_extract(new.body, '$.status'), new.version, CAST(json_extract(new.body, '$.updatedAt') AS INTEGER));
  END;
  CREATE TRIGGER IF NOT EXISTS batch_changes_on_update AFTER UPDATE OF version ON batches
    WHEN old.version IS NOT new.version
  BEGIN
    INSERT INTO job_changes (kind, id, tenant, workflow, status, version, previous_status, at)
      VALUES ('batch', new.id, new.tenant, json_extract(new.body, '$.workflow'),
        json_extract(new.body, '$.status'), new.version, json_extract(old.body, '$.status'),
        CAST(json_extract(new.body, '$.updatedAt') AS INTEGER));
  END;
`;

/** A streamed answer's new text (kind `answer`, sqlite-partial-answers.ts); added to older logs. */
const answerColumns = [
  ['text_offset', 'INTEGER'],
  ['text', 'TEXT'],
] as const;

/**
 * Creates the change log and its job triggers if missing, with the answer columns (a log made by an
 * older opflow gets them added). The batches' triggers are added when that table exists.
 */
export function ensureChangeLog(db: LocalDatabase): void {
  db.transaction(() => {
    db.exec(schema);
    const columns = new Set(
      db
        .prepare<[], { name: string }>("SELECT name FROM pragma_table_info('job_changes')")
        .all()
        .map((row) => row.name),
    );
    for (const [name, type] of answerColumns)
      if (!columns.has(name)) db.exec(`ALTER TABLE job_changes ADD COLUMN ${name} ${type}`);
    const batches = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'batches'");
    if (batches.get() !== undefined) db.exec(batchSchema);
  }).immediate();
}

interface ChangeRow {
  seq: number;
  kind: 'job' | 'batch' | 'answer';
  id: string;
  tenant: string;
  batch_id: string | null;
  workflow: string | null;
  status: string;
  step: string | null;
  version: number;
  previous_status: string | null;
  previous_step: string | null;
  at: number;
  text_offset: number | null;
  text: string | null;
}

export interface SqliteChangeLogOptions {
  /** Changes older than this are pruned (default a day). */
  retentionMs?: number | undefined;
  /** Default: the wall clock. */
  now?: (() => number) | undefined;
}

export class SqliteChangeLog implements ChangeFeed {
  readonly #db: LocalDatabase;
  readonly #after;
  readonly #head;
  readonly #oldest;
  readonly #prune;
  readonly #retentionMs: number;
  readonly #now: () => number;
  #prunedAt = Number.NEGATIVE_INFINITY;

  /** Creates the log and its triggers if missing (the jobs table must exist; batches' when it does). */
  constructor(db: LocalDatabase, options: SqliteChangeLogOptions = {}) {
    this.#db = db;
    this.#retentionMs = options.retentionMs ?? defaultChangeRetentionMs;
    this.#now = options.now ?? Date.now;
    ensureChangeLog(db);
    this.#after = db.prepare<[number, number], ChangeRow>(
      'SELECT * FROM job_changes WHERE seq > ? ORDER BY seq LIMIT ?',
    );
    // When every change was pruned, the last number given is still in sqlite_sequence.
    this.#head = db.prepare<[], { seq: number | null }>(
      "SELECT COALESCE((SELECT MAX(seq) FROM job_changes), (SELECT seq FROM sqlite_sequence WHERE name = 'job_changes'), 0) AS seq",
    );
    this.#oldest = db.prepare<[], { seq: number | null }>('SELECT MIN(seq) AS seq FROM job_changes');
    // Rows are appended in time order (give or take the writers' clocks): delete from the front.
    this.#prune = db.prepare(
      'DELETE FROM job_changes WHERE seq < (SELECT COALESCE(MIN(seq), 9e18) FROM job_changes WHERE at >= ?)',
    );
  }

  async after(seq: number, limit: number): Promise<Change[]> {
    if (!this.#db.open) return [];
    this.#pruneDue();
    return this.#after.all(seq, limit).map(changeOf);
  }

  async head(): Promise<number> {
    return this.#head.get()?.seq ?? 0;
  }

  async oldest(): Promise<number> {
    return this.#oldest.get()?.seq ?? (await this.head()) + 1;
  }

  /** Deletes the changes older than the retention; answers how many. */
  prune(): number {
    const now = this.#now();
    this.#prunedAt = now;
    return this.#prune.run(now - this.#retentionMs).changes;
  }

  #pruneDue(): void {
    if (this.#now() - this.#prunedAt < pruneEveryMs) return;
    try {
      this.prune();
    } catch {
      // Busy (another process writes): the next turn prunes.
    }
  }
}

function changeOf(row: ChangeRow): Change {
  return {
    seq: row.seq,
    kind: row.kind,
    id: row.id,
    tenant: row.tenant,
    batchId: row.batch_id ?? undefined,
    workflow: row.workflow ?? undefined,
    status: row.status,
    step: row.step ?? undefined,
    version: row.version,
    previousStatus: row.previous_status ?? undefined,
    previousStep: row.previous_step ?? undefined,
    at: row.at,
    answer:
      row.kind === 'answer' && row.step !== null
        ? { step: row.step, offset: row.text_offset ?? 0, text: row.text ?? '' }
        : undefined,
  };
}
