/**
 * The port for learned poll timing: one duration sketch (poll-timing.ts) per operation and base
 * URL, shared by every worker of a backend (a SQLite table locally, `POLLSTAT#` items on AWS).
 */
import { createHash } from 'node:crypto';
import type { DurationSketch } from './poll-timing';
import type { Step } from './workflow';

export interface PollStatsStore {
  /** The sketches of these keys that exist (a store may answer from a cache a few seconds old). */
  load(keys: readonly string[]): Promise<Map<string, DurationSketch>>;
  /** One task finished after `lowerMs` and by `upperMs` from its start. */
  record(key: string, lowerMs: number, upperMs: number, now: number): Promise<void>;
}

/**
 * The key of an operation's sketch: the operation id and a short hash of the base URL (the real
 * platform and a sandbox have different timings; the URL itself is never stored).
 */
export function pollStatsKey(scope: string | undefined, operationId: string): string {
  const where = createHash('sha256')
    .update(scope ?? 'default')
    .digest('hex')
    .slice(0, 12);
  return `${where}:${operationId}`;
}

/** Caches `load` answers for `ttlMs` (by the given clock), and drops a key's entry when it is recorded. */
export class CachedPollStats implements PollStatsStore {
  readonly #inner: PollStatsStore;
  readonly #ttlMs: number;
  readonly #now: () => number;
  readonly #cache = new Map<string, { at: number; sketch: DurationSketch | undefined }>();

  constructor(inner: PollStatsStore, options: { ttlMs?: number; now?: () => number } = {}) {
    this.#inner = inner;
    this.#ttlMs = options.ttlMs ?? 2_000;
    this.#now = options.now ?? Date.now;
  }

  async load(keys: readonly string[]): Promise<Map<string, DurationSketch>> {
    const now = this.#now();
    const missing = keys.filter((key) => {
      const entry = this.#cache.get(key);
      return !entry || now - entry.at > this.#ttlMs;
    });
    if (missing.length > 0) {
      const loaded = await this.#inner.load(missing);
      for (const key of missing) this.#cache.set(key, { at: now, sketch: loaded.get(key) });
    }
    const answer = new Map<string, DurationSketch>();
    for (const key of keys) {
      const sketch = this.#cache.get(key)?.sketch;
      if (sketch) answer.set(key, sketch);
    }
    return answer;
  }

  async record(key: string, lowerMs: number, upperMs: number, now: number): Promise<void> {
    await this.#inner.record(key, lowerMs, upperMs, now);
    this.#cache.delete(key);
  }
}

/** The key of a polled step's duration sketch; undefined for a step that is not polled. */
export function stepStatsKey(scope: string | undefined, step: Step): string | undefined {
  if (step.kind === 'fetch' || !step.poll || step.operation === undefined) return undefined;
  return pollStatsKey(scope, step.operation);
}
