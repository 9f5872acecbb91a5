/**
 * Learned poll timing on the local backend: one row per operation and base URL in the database
 * file, so every process on it learns together. Its own table, created when the store is made.
 */

import type { PollStatsStore } from '../../engine/poll-stats';
import {
  type DurationSketch,
  durationSketchSchema,
  emptySketch,
  recordDuration,
} from '../../engine/poll-timing';
import type { LocalDatabase } from './database';

export class SqlitePollStats implements PollStatsStore {
  readonly #db: LocalDatabase;
  readonly #get;
  readonly #put;

  constructor(db: LocalDatabase) {
    this.#db = db;
    db.exec(`CREATE TABLE IF NOT EXISTS poll_stats (
      key TEXT PRIMARY KEY,
      body TEXT NOT NULL,
      updated_at INTEGER NOT NULL
    ) STRICT`);
    this.#get = db.prepare<[string], { body: string }>('SELECT body FROM poll_stats WHERE key = ?');
    this.#put = db.prepare<[string, string, number]>(
      `INSERT INTO poll_stats (key, body, updated_at) VALUES (?, ?, ?)
       ON CONFLICT (key) DO UPDATE SET body = excluded.body, updated_at = excluded.updated_at`,
    );
  }

  async load(keys: readonly string[]): Promise<Map<string, DurationSketch>> {
    const answer = new Map<string, DurationSketch>();
    for (const key of keys) {
      const sketch = this.#read(key);
      if (sketch) answer.set(key, sketch);
    }
    return answer;
  }

  async record(key: string, lowerMs: number, upperMs: number, now: number): Promise<void> {
    // Read and write in one immediate transaction: two processes cannot lose each other's task.
    this.#db
      .transaction(() => {
        const sketch = this.#read(key) ?? emptySketch(now);
        this.#put.run(key, JSON.stringify(recordDuration(sketch, lowerMs, upperMs, now)), Math.floor(now));
      })
      .immediate();
  }

  #read(key: string): DurationSketch | undefined {
    const row = this.#get.get(key);
    if (!row) return undefined;
    // A damaged row is only a lost estimate: start again from the declared schedule.
    try {
      const parsed = durationSketchSchema.safeParse(JSON.parse(row.body));
      return parsed.success ? parsed.data : undefined;
    } catch {
      return undefined;
    }
  }
}
