/**
 * The local BatchStore: batches, their items and the problems of their bad lines in three tables of
 * the job database (created here if missing, so the numbered job migrations stay untouched). A chunk
 * is one immediate transaction: its items, its problems and the batch's moved cursor, or nothing.
 */
import type { Batch, BatchItem, BatchPage, BatchProblem, BatchStore } from '../../engine/batch-store';
import type { LocalDatabase } from './database';

const schema = `
  CREATE TABLE IF NOT EXISTS batches (
    id TEXT PRIMARY KEY,
    tenant TEXT NOT NULL,
    version INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    body TEXT NOT NULL
  ) STRICT;
  CREATE INDEX IF NOT EXISTS batches_by_created ON batches (created_at, id);
  CREATE TABLE IF NOT EXISTS batch_items (
    batch_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    item_key TEXT NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (batch_id, seq)
  ) STRICT;
  CREATE UNIQUE INDEX IF NOT EXISTS batch_items_by_key ON batch_items (batch_id, item_key);
  CREATE TABLE IF NOT EXISTS batch_problems (
    batch_id TEXT NOT NULL,
    run INTEGER NOT NULL,
    record INTEGER NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (batch_id, run, record)
  ) STRICT;
`;

interface BodyRow {
  body: string;
}

const cursorPattern = /^(\d{1,15}):([\w.-]{1,100})$/;

export class SqliteBatchStore implements BatchStore {
  readonly maxChunkItems = 500;
  readonly #db: LocalDatabase;
  readonly #insert;
  readonly #update;
  readonly #byId;
  readonly #insertItem;
  readonly #insertProblem;
  readonly #itemByKey;
  readonly #items;
  readonly #problems;

  constructor(db: LocalDatabase) {
    this.#db = db;
    db.exec(schema);
    this.#insert = db.prepare(
      'INSERT INTO batches (id, tenant, version, created_at, body) VALUES (?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING',
    );
    this.#update = db.prepare('UPDATE batches SET version = ?, body = ? WHERE id = ? AND version = ?');
    this.#byId = db.prepare<[string], BodyRow>('SELECT body FROM batches WHERE id = ?');
    this.#insertItem = db.prepare(
      'INSERT INTO batch_items (batch_id, seq, item_key, body) VALUES (?, ?, ?, ?)',
    );
    this.#insertProblem = db.prepare(
      'INSERT OR REPLACE INTO batch_problems (batch_id, run, record, body) VALUES (?, ?, ?, ?)',
    );
    this.#itemByKey = db.prepare<[string, string], { item_key: string }>(
      'SELECT item_key FROM batch_items WHERE batch_id = ? AND item_key = ?',
    );
    this.#items = db.prepare<[string, number, number], BodyRow>(
      'SELECT body FROM batch_items WHERE batch_id = ? AND seq >= ? ORDER BY seq LIMIT ?',
    );
    this.#problems = db.prepare<[string, number], BodyRow>(
      'SELECT body FROM batch_problems WHERE batch_id = ? AND run = ? ORDER BY record',
    );
  }

  async create(batch: Batch): Promise<{ batch: Batch; created: boolean }> {
    const result = this.#insert.run(
      batch.id,
      batch.tenant,
      batch.version,
      batch.createdAt,
      JSON.stringify(batch),
    );
    if (result.changes === 1) return { batch, created: true };
    const existing = await this.get(batch.id);
    if (!existing) throw new Error(`batch ${batch.id} vanished while being created`);
    return { batch: existing, created: false };
  }

  async get(id: string): Promise<Batch | undefined> {
    const row = this.#byId.get(id);
    return row ? (JSON.parse(row.body) as Batch) : undefined;
  }

  async commit(batch: Batch, expectedVersion: number): Promise<boolean> {
    checkVersion(batch, expectedVersion);
    return this.#update.run(batch.version, JSON.stringify(batch), batch.id, expectedVersion).changes === 1;
  }

  async list(query: { tenant?: string; limit?: number; cursor?: string }): Promise<BatchPage> {
    const where: string[] = [];
    const params: (string | number)[] = [];
    if (query.tenant !== undefined) {
      where.push('tenant = ?');
      params.push(query.tenant);
    }
    if (query.cursor !== undefined) {
      const match = cursorPattern.exec(query.cursor);
      if (!match) throw new RangeError('list: the cursor is not one this store handed out');
      where.push('(created_at < ? OR (created_at = ? AND id < ?))');
      params.push(Number(match[1]), Number(match[1]), match[2] ?? '');
    }
    const limit = Math.max(1, Math.min(query.limit ?? 50, 500));
    const rows = this.#db
      .prepare<(string | number)[], BodyRow>(
        `SELECT body FROM batches ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY created_at DESC, id DESC LIMIT ?`,
      )
      .all(...params, limit + 1);
    const batches = rows.slice(0, limit).map((row) => JSON.parse(row.body) as Batch);
    const last = batches[batches.length - 1];
    return rows.length > limit && last ? { batches, cursor: `${last.createdAt}:${last.id}` } : { batches };
  }

  async existingKeys(batchId: string, keys: readonly string[]): Promise<Set<string>> {
    const found = new Set<string>();
    for (const key of keys) if (this.#itemByKey.get(batchId, key)) found.add(key);
    return found;
  }

  async commitChunk(
    batch: Batch,
    expectedVersion: number,
    items: readonly BatchItem[],
    problems: readonly BatchProblem[],
  ): Promise<boolean> {
    checkVersion(batch, expectedVersion);
    try {
      return this.#db
        .transaction(() => {
          if (this.#update.run(batch.version, JSON.stringify(batch), batch.id, expectedVersion).changes !== 1)
            return false;
          for (const item of items) this.#insertItem.run(batch.id, item.seq, item.key, JSON.stringify(item));
          for (const problem of problems)
            this.#insertProblem.run(batch.id, problem.run, problem.record, JSON.stringify(problem));
          return true;
        })
        .immediate();
    } catch (error) {
      // An item key or sequence number taken meanwhile: the whole chunk is redone by the caller.
      if ((error as { code?: string }).code?.startsWith('SQLITE_CONSTRAINT')) return false;
      throw error;
    }
  }

  async listItems(batchId: string, fromSeq: number, limit: number): Promise<BatchItem[]> {
    return this.#items
      .all(batchId, fromSeq, Math.max(1, limit))
      .map((row) => JSON.parse(row.body) as BatchItem);
  }

  async listProblems(batchId: string, run: number): Promise<BatchProblem[]> {
    return this.#problems.all(batchId, run).map((row) => JSON.parse(row.body) as BatchProblem);
  }
}

function checkVersion(batch: Batch, expectedVersion: number): void {
  if (batch.version !== expectedVersion + 1)
    throw new RangeError(`batch ${batch.id}: a commit must raise the version by one`);
}
