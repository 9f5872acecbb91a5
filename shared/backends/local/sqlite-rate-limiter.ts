/**
 * The local RateLimiter: one adaptive token bucket per API key, kept in the database file, so every
 * opflow process on it (a batch's `ingest`, a `run` beside it, `serve`) draws from the same budget,
 * as every Lambda does from the DynamoDB bucket on aws. Each change is one immediate transaction
 * (read the key's row, apply the engine's arithmetic, write it back): two processes never spend
 * the same token. The tokens reserved ahead are rows of their own (the priority lane), so a `high`
 * job in one process cuts in ahead of a batch's line in another. Every token given is logged
 * (`rate_grants`: to which job, when its call first asked, the token's time, in grant order; kept
 * ten minutes), so a priority job's wait is counted in tokens (`tokensWaited`). A refused ask is not
 * logged: a named caller's first refused ask since its last token is kept (`rate_asks`, one row per
 * waiting job, written once however often it is refused) and goes into its next grant's row. The arithmetic is the engine's
 * (admission/key-line.ts, priority-lane.ts). Tests and benches that need no file use one on an
 * in-memory database (`SqliteRateLimiter.inMemory`).
 */
import * as z from 'zod';
import {
  type KeyLine,
  lineBudget,
  lineSaturated,
  lineSucceeded,
  lineThrottled,
  newKeyLine,
  nextTokenAt,
  paceSpend,
  takeToken,
} from '../../engine/admission/key-line';
import { cutInMemoryMs, type TokenGrant } from '../../engine/admission/priority-lane';
import {
  type RateBucketConfig,
  type RateBucketOptions,
  rateBucketConfig,
} from '../../engine/admission/rate-bucket';
import type { RateDecision, RateLimiter, ShareClaim } from '../../engine/ports';
import { type LocalDatabase, openLocalDatabase } from './database';

const optionalNumber = z.number().optional();

/** A line stamped further ahead of this process's clock than this was written by a clock ahead. */
const aheadClockMs = 60_000;

/** The grant log keeps a token this long after its ask. */
export const grantMemoryMs = 600_000;
/** The grant log of a key is pruned once every this many grants (one scan of its rows). */
const grantPruneEvery = 256;

const grantsTable = `CREATE TABLE IF NOT EXISTS rate_grants (
  bucket TEXT NOT NULL,
  seq INTEGER NOT NULL,
  by TEXT,
  asked_at REAL NOT NULL,
  token_at REAL NOT NULL,
  kind TEXT NOT NULL,
  PRIMARY KEY (bucket, seq)
) STRICT, WITHOUT ROWID`;

/** A named caller's first refused ask since its last token: its next grant's `asked_at`. */
const asksTable = `CREATE TABLE IF NOT EXISTS rate_asks (
  bucket TEXT NOT NULL,
  by TEXT NOT NULL,
  asked_at REAL NOT NULL,
  PRIMARY KEY (bucket, by)
) STRICT, WITHOUT ROWID`;

const grantRowSchema = z.object({
  bucket: z.string(),
  seq: z.number(),
  by: z.string().nullable(),
  asked_at: z.number(),
  token_at: z.number(),
  // `refused`: a refused ask, as a file written before refusals were kept in `rate_asks` holds them.
  kind: z.enum(['granted', 'reserved', 'cut-in', 'refused']),
});

/**
 * The tokens the limiters on a database gave (its grant log), by key, in grant order. Reads only:
 * works on a database opened to read (`openLocalDatabaseToRead`); none before any limiter opened it.
 * `table`: another table of the log's columns (the fairness bench's copy of it, `bench_grants`).
 */
export function readTokenGrants(
  db: LocalDatabase,
  table: 'rate_grants' | 'bench_grants' = 'rate_grants',
): Map<string, TokenGrant[]> {
  const byBucket = new Map<string, TokenGrant[]>();
  const exists = db
    .prepare<[string], { name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND name = ?")
    .get(table);
  if (!exists) return byBucket;
  for (const raw of db.prepare(`SELECT * FROM ${table} ORDER BY bucket, seq`).all()) {
    const row = grantRowSchema.parse(raw);
    const grants = byBucket.get(row.bucket) ?? [];
    grants.push({
      seq: row.seq,
      ...(row.by === null ? {} : { by: row.by }),
      askedAt: row.asked_at,
      tokenAt: row.token_at,
      kind: row.kind,
    });
    byBucket.set(row.bucket, grants);
  }
  return byBucket;
}

/** A key's bucket as stored (JSON in `rate_buckets.line`). */
const keyLineSchema = z.object({
  bucket: z.object({
    tokens: z.number(),
    rate: z.number(),
    updatedAt: z.number(),
    decreasedAt: optionalNumber,
    knownLimit: optionalNumber,
    windowStart: optionalNumber,
    windowOk: optionalNumber,
    lastWindowOk: optionalNumber,
    windowThrottled: optionalNumber,
    lastWindowThrottled: optionalNumber,
    lastTokenAt: optionalNumber,
    booked: z.array(z.number()).optional(),
  }),
  refusedAt: optionalNumber,
  spentAt: optionalNumber,
  paced: z.array(z.number()).optional(),
});

export class SqliteRateLimiter implements RateLimiter {
  readonly config: RateBucketConfig;
  readonly #statements;
  /** Runs its function in one IMMEDIATE transaction (see the constructor). */
  readonly #atomically;

  /** `ratePerSecond` is this process's ceiling for each bucket; see `rateBucketConfig` for the rest. */
  constructor(db: LocalDatabase, options: RateBucketOptions) {
    this.config = rateBucketConfig(options);
    // The lane: one row per token reserved ahead, `cut_by` the priority job that took it over.
    // Kept while ahead, and a cut-in a minute past its time (its holder may come late).
    db.exec(`CREATE TABLE IF NOT EXISTS rate_buckets (
      bucket TEXT PRIMARY KEY,
      line TEXT NOT NULL,
      updated_at INTEGER NOT NULL
    ) STRICT;
    CREATE TABLE IF NOT EXISTS rate_lane (
      bucket TEXT NOT NULL,
      at REAL NOT NULL,
      cut_by TEXT,
      PRIMARY KEY (bucket, at)
    ) STRICT, WITHOUT ROWID;
    ${grantsTable};
    ${asksTable}`);
    this.#statements = {
      get: db.prepare<[string], { line: string; updated_at: number }>(
        'SELECT line, updated_at FROM rate_buckets WHERE bucket = ?',
      ),
      put: db.prepare<[string, string, number]>(
        `INSERT INTO rate_buckets (bucket, line, updated_at) VALUES (?, ?, ?)
         ON CONFLICT (bucket) DO UPDATE SET line = excluded.line, updated_at = excluded.updated_at`,
      ),
      reserve: db.prepare<[string, number]>('INSERT OR IGNORE INTO rate_lane (bucket, at) VALUES (?, ?)'),
      // Tokens passed (a cut-in kept a minute for its late holder), and tokens reserved by a clock
      // more than a minute ahead of this one (no horizon reaches that far: see `#read`).
      prune: db.prepare<[string, number, number, number]>(
        'DELETE FROM rate_lane WHERE bucket = ? AND ((at <= ? AND (cut_by IS NULL OR at < ?)) OR at > ?)',
      ),
      nextReserved: db.prepare<[string, number], { at: number }>(
        'SELECT at FROM rate_lane WHERE bucket = ? AND at > ? AND cut_by IS NULL ORDER BY at LIMIT 1',
      ),
      reservedBetween: db.prepare<[string, number, number], { at: number }>(
        'SELECT at FROM rate_lane WHERE bucket = ? AND at >= ? AND at < ? AND cut_by IS NULL ORDER BY at',
      ),
      cut: db.prepare<[string, string, number]>(
        'UPDATE rate_lane SET cut_by = ? WHERE bucket = ? AND at = ?',
      ),
      // The grant order is the key's own sequence: the next after its last, in the write's transaction.
      grant: db.prepare<[string, string | null, number, number, string, string], { seq: number }>(
        `INSERT INTO rate_grants (bucket, seq, by, asked_at, token_at, kind)
         SELECT ?, coalesce(max(seq), 0) + 1, ?, ?, ?, ? FROM rate_grants WHERE bucket = ? RETURNING seq`,
      ),
      pruneGrants: db.prepare<[string, number]>('DELETE FROM rate_grants WHERE bucket = ? AND asked_at < ?'),
      // A refused ask: kept only when it is the caller's first since its last token (no write otherwise).
      ask: db.prepare<[string, string, number]>(
        'INSERT OR IGNORE INTO rate_asks (bucket, by, asked_at) VALUES (?, ?, ?)',
      ),
      firstAsk: db.prepare<[string, string], { asked_at: number }>(
        'DELETE FROM rate_asks WHERE bucket = ? AND by = ? RETURNING asked_at',
      ),
      pruneAsks: db.prepare<[string, number]>('DELETE FROM rate_asks WHERE bucket = ? AND asked_at < ?'),
      cutBy: db.prepare<[string, number], { cut_by: string | null }>(
        'SELECT cut_by FROM rate_lane WHERE bucket = ? AND at = ?',
      ),
    };
    // Read and write under the database's write lock, taken at the start (IMMEDIATE): another
    // process's change of the same key waits for this one instead of both reading the same line.
    this.#atomically = db.transaction((work: () => unknown) => work());
  }

  /** A limiter on a database of its own in memory: one process's buckets (tests, benches). */
  static inMemory(options: RateBucketOptions): SqliteRateLimiter {
    return new SqliteRateLimiter(openLocalDatabase(':memory:'), options);
  }

  async take(
    bucket: string,
    now: number,
    options?: { reserveWithinMs?: number; share?: ShareClaim | undefined },
  ): Promise<RateDecision> {
    return this.#atomic(() => {
      const { line, decision } = takeToken(
        this.#read(bucket, now),
        this.config,
        now,
        options?.reserveWithinMs,
      );
      if (line) this.#write(bucket, line, now);
      if (!decision.granted && decision.reserved) {
        this.#prune(bucket, now);
        this.#statements.reserve.run(bucket, decision.retryAtMs);
      }
      const by = options?.share?.jobId;
      if (decision.granted) this.#logGrant(bucket, by, now, now, 'granted');
      else if (decision.reserved) this.#logGrant(bucket, by, now, decision.retryAtMs, 'reserved');
      // A refusal of a named caller: its call's wait starts at its first ask (`tokensWaited`), which
      // its next grant carries; a refusal after the first writes nothing.
      else if (by !== undefined) this.#statements.ask.run(bucket, by, now);
      return decision;
    });
  }

  async cutIn(bucket: string, now: number, by: string): Promise<number | undefined> {
    return this.#atomic(() => {
      const freeAt = nextTokenAt(this.#read(bucket, now), this.config, now);
      if (freeAt === undefined) return undefined;
      this.#prune(bucket, now);
      const at = this.#statements.nextReserved.get(bucket, now)?.at;
      if (at === undefined || at >= freeAt) return undefined;
      this.#statements.cut.run(by, bucket, at);
      this.#logGrant(bucket, by, now, at, 'cut-in');
      return at;
    });
  }

  async shareCutIn(
    bucket: string,
    now: number,
    by: string,
    plan: { takes: (at: number) => boolean; from: (ratePerSecond: number) => number; before: number },
  ): Promise<number | undefined> {
    return this.#atomic(() => {
      const line = this.#read(bucket, now);
      const freeAt = nextTokenAt(line, this.config, now);
      if (freeAt === undefined) return undefined;
      this.#prune(bucket, now);
      // As a `high` call's cut-in (`cutIn`): a token not yet come, whose holder finds it gone
      // when it comes (`stillHeld`).
      const rate = Math.min(this.config.ceiling, Math.max(this.config.floor, line.bucket.rate));
      const from = Math.max(now + 1, plan.from(rate));
      const before = Math.min(freeAt, plan.before);
      const at = this.#statements.reservedBetween
        .all(bucket, from, before)
        .map((row) => row.at)
        .find((time) => plan.takes(time));
      if (at === undefined) return undefined;
      this.#statements.cut.run(by, bucket, at);
      this.#logGrant(bucket, by, now, at, 'cut-in');
      return at;
    });
  }

  async stillHeld(bucket: string, at: number, by: string): Promise<boolean> {
    const cutBy = this.#statements.cutBy.get(bucket, at)?.cut_by;
    return cutBy === undefined || cutBy === null || cutBy === by;
  }

  async pace(bucket: string, at: number, now: number): Promise<number> {
    return this.#atomic(() => {
      const { line, goesAt } = paceSpend(this.#read(bucket, now), this.config, at, now);
      this.#write(bucket, line, now);
      return goesAt;
    });
  }

  async saturated(bucket: string, now: number): Promise<boolean> {
    return lineSaturated(this.#read(bucket, now), now);
  }

  async budget(bucket: string, now: number): Promise<{ tokens: number; ratePerSecond: number }> {
    return lineBudget(this.#read(bucket, now), this.config, now);
  }

  async throttled(bucket: string, now: number): Promise<void> {
    this.#atomic(() => this.#write(bucket, lineThrottled(this.#read(bucket, now), this.config, now), now));
  }

  async succeeded(bucket: string, now: number): Promise<void> {
    this.#atomic(() => this.#write(bucket, lineSucceeded(this.#read(bucket, now), this.config, now), now));
  }

  /** The current refill rate of a bucket, in calls per second (the ceiling for an unused bucket). */
  currentRate(bucket: string): number {
    return Math.min(this.config.ceiling, this.#read(bucket, 0).bucket.rate);
  }

  /** Drops the lane's passed tokens, and those a clock more than a minute ahead reserved. */
  #prune(bucket: string, now: number): void {
    this.#statements.prune.run(bucket, now, now - cutInMemoryMs, now + aheadClockMs);
  }

  /**
   * Logs a token given (in the change's transaction), asked for at the caller's first refused ask
   * since its last token (now when none), and prunes the key's old grants and asks now and then.
   */
  #logGrant(bucket: string, by: string | undefined, now: number, at: number, kind: TokenGrant['kind']): void {
    const askedAt = by === undefined ? now : (this.#statements.firstAsk.get(bucket, by)?.asked_at ?? now);
    const row = this.#statements.grant.get(bucket, by ?? null, askedAt, at, kind, bucket);
    if (row && row.seq % grantPruneEvery === 0) {
      this.#statements.pruneGrants.run(bucket, now - grantMemoryMs);
      this.#statements.pruneAsks.run(bucket, now - grantMemoryMs);
    }
  }

  #atomic<T>(work: () => T): T {
    return this.#atomically.immediate(work) as T;
  }

  /** The key's line; a new one when there is none (or an unreadable one, which the next change replaces). */
  #read(bucket: string, now: number): KeyLine {
    const row = this.#statements.get.get(bucket);
    // A line written by a process whose clock is ahead of this one (more than a minute) holds
    // tokens and calls in this process's future: followed, it would hold every call here until
    // that time. This process starts the line anew instead (at worst a throttled call, which the
    // limiter learns from).
    if (!row || row.updated_at > now + aheadClockMs) return newKeyLine(this.config, now);
    try {
      const parsed = keyLineSchema.safeParse(JSON.parse(row.line));
      return parsed.success ? parsed.data : newKeyLine(this.config, now);
    } catch {
      return newKeyLine(this.config, now);
    }
  }

  #write(bucket: string, line: KeyLine, now: number): void {
    this.#statements.put.run(bucket, JSON.stringify(line), Math.floor(now));
  }
}
