/**
 * The local callback outbox and signing secrets, in the database file beside the jobs (tables of
 * their own, created on first use). Claims are conditional UPDATEs, so several `opflow` processes
 * on one database never deliver one callback at once.
 */
import { randomBytes } from 'node:crypto';
import { parseSigningSecret } from '../../config/signing-secrets';
import type { CallbackOutbox, CallbackOutboxEntry, CallbackSecrets } from '../../engine/callback-ports';
import type { LocalDatabase } from './database';

export function ensureCallbackTables(db: LocalDatabase): void {
  db.exec(`
    CREATE TABLE IF NOT EXISTS callback_outbox (
      job_id TEXT PRIMARY KEY,
      due_at INTEGER NOT NULL
    ) STRICT;
    CREATE INDEX IF NOT EXISTS callback_outbox_due ON callback_outbox (due_at, job_id);
    CREATE TABLE IF NOT EXISTS callback_secrets (
      tenant TEXT PRIMARY KEY,
      secret TEXT NOT NULL,
      created_at INTEGER NOT NULL
    ) STRICT;
  `);
}

export class SqliteCallbackOutbox implements CallbackOutbox {
  readonly #add;
  readonly #due;
  readonly #move;
  readonly #remove;
  readonly #earliest;
  readonly #entryOf;

  constructor(db: LocalDatabase) {
    ensureCallbackTables(db);
    this.#add = db.prepare<[string, number]>(
      'INSERT INTO callback_outbox (job_id, due_at) VALUES (?, ?) ON CONFLICT (job_id) DO UPDATE SET due_at = excluded.due_at',
    );
    this.#due = db.prepare<[number, number], { job_id: string; due_at: number }>(
      'SELECT job_id, due_at FROM callback_outbox WHERE due_at <= ? ORDER BY due_at, job_id LIMIT ?',
    );
    this.#move = db.prepare<[number, string, number]>(
      'UPDATE callback_outbox SET due_at = ? WHERE job_id = ? AND due_at = ?',
    );
    this.#remove = db.prepare<[string, number]>(
      'DELETE FROM callback_outbox WHERE job_id = ? AND due_at = ?',
    );
    this.#earliest = db.prepare<[], { job_id: string; due_at: number }>(
      'SELECT job_id, due_at FROM callback_outbox ORDER BY due_at, job_id LIMIT 1',
    );
    this.#entryOf = db.prepare<[string], { job_id: string; due_at: number }>(
      'SELECT job_id, due_at FROM callback_outbox WHERE job_id = ?',
    );
  }

  async add(jobId: string, dueAt: number): Promise<void> {
    this.#add.run(jobId, Math.floor(dueAt));
  }

  async due(now: number, limit: number): Promise<CallbackOutboxEntry[]> {
    return this.#due.all(Math.floor(now), limit).map((row) => ({ jobId: row.job_id, dueAt: row.due_at }));
  }

  async earliest(): Promise<CallbackOutboxEntry | undefined> {
    const row = this.#earliest.get();
    return row && { jobId: row.job_id, dueAt: row.due_at };
  }

  async entryOf(jobId: string): Promise<CallbackOutboxEntry | undefined> {
    const row = this.#entryOf.get(jobId);
    return row && { jobId: row.job_id, dueAt: row.due_at };
  }

  async move(entry: CallbackOutboxEntry, nextDueAt: number): Promise<boolean> {
    return this.#move.run(Math.floor(nextDueAt), entry.jobId, Math.floor(entry.dueAt)).changes === 1;
  }

  async remove(entry: CallbackOutboxEntry): Promise<void> {
    this.#remove.run(entry.jobId, Math.floor(entry.dueAt));
  }
}

/** The environment variable of a tenant's secret: OPFLOW_CALLBACK_SECRET_<TENANT> (upper case, _ for others). */
export function callbackSecretVariable(tenant: string): string {
  return `OPFLOW_CALLBACK_SECRET_${tenant.toUpperCase().replace(/[^A-Z0-9]/g, '_')}`;
}

/**
 * Signing secrets of local callbacks: `OPFLOW_CALLBACK_SECRET_<TENANT>`, else
 * `OPFLOW_CALLBACK_SECRET`, else one generated for the tenant on first use and kept in the
 * database (`opflow callbacks secret` prints it for the receiver).
 */
export class LocalCallbackSecrets implements CallbackSecrets {
  readonly #insert;
  readonly #select;

  constructor(
    db: LocalDatabase,
    private readonly env: Readonly<Record<string, string | undefined>> = process.env,
  ) {
    ensureCallbackTables(db);
    this.#insert = db.prepare<[string, string, number]>(
      'INSERT OR IGNORE INTO callback_secrets (tenant, secret, created_at) VALUES (?, ?, ?)',
    );
    this.#select = db.prepare<[string], { secret: string }>(
      'SELECT secret FROM callback_secrets WHERE tenant = ?',
    );
  }

  async secretFor(tenant: string): Promise<string> {
    const variable = this.env[callbackSecretVariable(tenant)]
      ? callbackSecretVariable(tenant)
      : 'OPFLOW_CALLBACK_SECRET';
    const configured = this.env[variable];
    if (configured) return parseSigningSecret(configured, variable);
    // INSERT OR IGNORE then SELECT: two processes generating at once agree on the first one written.
    this.#insert.run(tenant, `whsec_${randomBytes(32).toString('base64')}`, Date.now());
    return this.#select.get(tenant)!.secret;
  }
}
