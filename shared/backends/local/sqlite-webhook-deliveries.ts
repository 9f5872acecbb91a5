/**
 * The record of incoming webhook deliveries (shared/engine/webhook-deliveries.ts) in the local
 * database: a table of its own created on first use, newest first by its ULID, pruned of entries
 * older than the retention as new ones are written (at most once an hour).
 */
import {
  defaultDeliveryRetentionMs,
  type WebhookDelivery,
  type WebhookDeliveryLog,
  type WebhookDeliveryQuery,
} from '../../engine/webhook-deliveries';
import type { LocalDatabase } from './database';

const pruneEveryMs = 3600 * 1000;
const cursorPattern = /^[0-9A-HJKMNP-TV-Z]{26}$/;

export class SqliteWebhookDeliveries implements WebhookDeliveryLog {
  private readonly insert;
  private readonly remove;
  private prunedAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly db: LocalDatabase,
    private readonly options: { retentionMs?: number | undefined; now?: (() => number) | undefined } = {},
  ) {
    db.exec(`
      CREATE TABLE IF NOT EXISTS webhook_deliveries (
        id TEXT PRIMARY KEY,
        source TEXT NOT NULL,
        tenant TEXT NOT NULL,
        at INTEGER NOT NULL,
        body TEXT NOT NULL
      ) STRICT, WITHOUT ROWID;
      CREATE INDEX IF NOT EXISTS webhook_deliveries_by_source ON webhook_deliveries (source, id);
    `);
    this.insert = db.prepare(
      'INSERT OR IGNORE INTO webhook_deliveries (id, source, tenant, at, body) VALUES (?, ?, ?, ?, ?)',
    );
    this.remove = db.prepare('DELETE FROM webhook_deliveries WHERE at < ?');
  }

  async record(delivery: WebhookDelivery): Promise<void> {
    if (!this.db.open) return;
    this.insert.run(delivery.id, delivery.source, delivery.tenant, delivery.at, JSON.stringify(delivery));
    const now = (this.options.now ?? Date.now)();
    if (now - this.prunedAt >= pruneEveryMs) {
      this.prunedAt = now;
      this.remove.run(now - (this.options.retentionMs ?? defaultDeliveryRetentionMs));
    }
  }

  async list(
    query: WebhookDeliveryQuery,
  ): Promise<{ deliveries: WebhookDelivery[]; cursor?: string | undefined }> {
    if (query.cursor !== undefined && !cursorPattern.test(query.cursor))
      throw new RangeError('cursor is not one this log produced');
    const where: string[] = [];
    const values: (string | number)[] = [];
    if (query.source !== undefined) {
      where.push('source = ?');
      values.push(query.source);
    }
    if (query.tenant !== undefined) {
      where.push('tenant = ?');
      values.push(query.tenant);
    }
    if (query.cursor !== undefined) {
      where.push('id < ?');
      values.push(query.cursor);
    }
    const rows = this.db
      .prepare(
        `SELECT body FROM webhook_deliveries ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY id DESC LIMIT ?`,
      )
      .all(...values, query.limit + 1) as { body: string }[];
    const deliveries = rows.slice(0, query.limit).map((row) => JSON.parse(row.body) as WebhookDelivery);
    return { deliveries, cursor: rows.length > query.limit ? deliveries.at(-1)?.id : undefined };
  }
}
