/** Schedule state in the local database (a table of its own, created on first use). */
import type { ScheduleState, ScheduleStateStore } from '../../engine/schedule-ports';
import type { LocalDatabase } from './database';

export class SqliteScheduleStateStore implements ScheduleStateStore {
  readonly #get;
  readonly #list;
  readonly #insert;
  readonly #update;

  constructor(db: LocalDatabase) {
    db.exec(`CREATE TABLE IF NOT EXISTS schedule_state (
      name TEXT PRIMARY KEY,
      updated_at INTEGER NOT NULL,
      body TEXT NOT NULL
    ) STRICT;`);
    this.#get = db.prepare<[string], { body: string }>('SELECT body FROM schedule_state WHERE name = ?');
    this.#list = db.prepare<[], { body: string }>('SELECT body FROM schedule_state ORDER BY name');
    this.#insert = db.prepare<[string, number, string]>(
      'INSERT OR IGNORE INTO schedule_state (name, updated_at, body) VALUES (?, ?, ?)',
    );
    this.#update = db.prepare<[number, string, string, number]>(
      'UPDATE schedule_state SET updated_at = ?, body = ? WHERE name = ? AND updated_at = ?',
    );
  }

  async get(name: string): Promise<ScheduleState | undefined> {
    const row = this.#get.get(name);
    return row ? (JSON.parse(row.body) as ScheduleState) : undefined;
  }

  async list(): Promise<ScheduleState[]> {
    return this.#list.all().map((row) => JSON.parse(row.body) as ScheduleState);
  }

  async put(next: ScheduleState, expected: ScheduleState | undefined): Promise<boolean> {
    const body = JSON.stringify(next);
    if (expected === undefined) return this.#insert.run(next.name, next.updatedAt, body).changes === 1;
    return this.#update.run(next.updatedAt, body, next.name, expected.updatedAt).changes === 1;
  }
}
