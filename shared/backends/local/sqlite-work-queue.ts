/**
 * The local WorkQueue: messages in the same SQLite file as the jobs, with SQS's semantics. A message
 * becomes visible after its delay; a consumer claims it for a lease; `ack` deletes it, `release`
 * makes it visible again later, and a lease that runs out (the worker died) makes it visible again
 * by itself. Delivery is at least once: the engine drops duplicates by the job's version.
 *
 * Clock skew: every write of a message's visibility (send, claim, extend, release) stamps `sent_at`
 * with the writer's clock, so a reader can tell a stamp from its future (a writer whose clock is
 * ahead) and re-base that visibility on its own clock, keeping the delay or lease the writer meant,
 * capped at the longest a writer may set (`maxDelayMs`, `maxLeaseMs`). A visibility further ahead
 * than either bound allows is due at once, whatever its stamp. So a process with a fast clock holds
 * a message no longer than it could with the right time: a live one keeps its lease by renewing it,
 * a frozen or dead one loses it one lease after a reader on the right time first sees it.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import * as z from 'zod';
import { maxClockAheadMs } from '../../engine/clock-skew';
import type { Clock, WorkMessage, WorkQueue } from '../../engine/ports';
import { formatIssues } from '../../errors/zod-issues';
import type { LocalDatabase } from './database';

/** A message a consumer holds until it acks or releases it, or its lease runs out. */
export interface ClaimedMessage {
  /** Names this claim only: a later claim of the same message gets another receipt. */
  receipt: string;
  message: WorkMessage;
  /** How many times the message has been claimed, this time included. */
  receiveCount: number;
  /** When its visibility was last set (sent, or released), by the writer's clock. */
  sentAt: number;
}

/** A message whose visibility was set by a clock ahead of the reader's, or further ahead than any writer may set. */
export interface MessageHeldAhead {
  jobId: string;
  version: number;
  /** When the message becomes visible by the stamp as written (a lease: when it runs out). */
  visibleAt: number;
  /** How far the writer's clock looked ahead of the reader's (its stamp minus the reader's now). */
  aheadMs: number;
  /** The process holding its lease (host/pid/nonce), if leased. */
  leaseOwner: string | undefined;
}

export interface SqliteWorkQueueOptions {
  clock: Clock;
  /** The longest delay `send` holds. Default: one hour (SQS holds fifteen minutes). */
  maxDelayMs?: number | undefined;
  /** The longest lease `claim` and `extend` grant. Default: ten minutes. */
  maxLeaseMs?: number | undefined;
}

const workMessageSchema = z.object({
  jobId: z.string().min(1),
  version: z.number().int().nonnegative(),
});

const receiptSchema = z.string().regex(/^(\d+)\.(\d+)$/);

interface MessageRow {
  id: number;
  job_id: string;
  version: number;
  receive_count: number;
  sent_at: number;
}

interface HeldRow {
  job_id: string;
  version: number;
  visible_at: number;
  sent_at: number;
  lease_owner: string | null;
}

export class SqliteWorkQueue implements WorkQueue {
  readonly maxDelayMs: number;
  readonly maxLeaseMs: number;
  readonly #db: LocalDatabase;
  readonly #clock: Clock;
  readonly #insert;
  readonly #visible;
  readonly #lease;
  readonly #delete;
  readonly #release;
  readonly #extend;
  readonly #owners;
  readonly #freeOwner;
  readonly #nextVisible;
  readonly #count;
  readonly #rebase;
  readonly #dueBeyondBound;
  readonly #heldAhead;

  constructor(db: LocalDatabase, options: SqliteWorkQueueOptions) {
    this.#db = db;
    this.#clock = options.clock;
    this.maxDelayMs = options.maxDelayMs ?? 60 * 60 * 1000;
    this.maxLeaseMs = options.maxLeaseMs ?? 10 * 60 * 1000;
    this.#insert = db.prepare<[string, number, number, number]>(
      'INSERT INTO messages (job_id, version, visible_at, sent_at) VALUES (?, ?, ?, ?)',
    );
    this.#visible = db.prepare<[number, number], MessageRow>(
      `SELECT id, job_id, version, receive_count, sent_at FROM messages
       WHERE visible_at <= ? ORDER BY visible_at, id LIMIT ?`,
    );
    this.#lease = db.prepare<[number, string | null, number, number]>(
      `UPDATE messages SET visible_at = ?, lease_owner = ?, sent_at = ?, receive_count = receive_count + 1
       WHERE id = ?`,
    );
    this.#delete = db.prepare<[number, number]>('DELETE FROM messages WHERE id = ? AND receive_count = ?');
    this.#release = db.prepare<[number, number, number, number]>(
      'UPDATE messages SET visible_at = ?, sent_at = ?, lease_owner = NULL WHERE id = ? AND receive_count = ?',
    );
    this.#extend = db.prepare<[number, number, number, number]>(
      'UPDATE messages SET visible_at = ?, sent_at = ? WHERE id = ? AND receive_count = ?',
    );
    this.#owners = db.prepare<[number], { owner: string }>(
      'SELECT DISTINCT lease_owner AS owner FROM messages WHERE visible_at > ? AND lease_owner IS NOT NULL',
    );
    this.#freeOwner = db.prepare<[number, string, number]>(
      'UPDATE messages SET visible_at = ?, lease_owner = NULL WHERE lease_owner = ? AND visible_at > ?',
    );
    this.#nextVisible = db.prepare<[], { at: number | null }>('SELECT MIN(visible_at) AS at FROM messages');
    this.#count = db.prepare<[], { n: number }>('SELECT COUNT(*) AS n FROM messages');
    // A visibility set by a clock ahead of the reader's keeps the delay (or lease) it was set
    // with, from now, capped at the longest one a writer may set.
    this.#rebase = db.prepare<{ now: number; maxDelay: number; maxLease: number; ahead: number }>(
      `UPDATE messages SET sent_at = @now, visible_at = @now + MIN(MAX(visible_at - sent_at, 0),
         CASE WHEN lease_owner IS NULL THEN @maxDelay ELSE @maxLease END)
       WHERE sent_at > @ahead`,
    );
    // Further ahead than any writer may set (a row stamped before stamps were re-based): due now.
    this.#dueBeyondBound = db.prepare<[number, number, number]>(
      'UPDATE messages SET visible_at = ?, sent_at = ? WHERE visible_at > ?',
    );
    this.#heldAhead = db.prepare<[number, number], HeldRow>(
      `SELECT job_id, version, visible_at, sent_at, lease_owner FROM messages
       WHERE sent_at > ? OR visible_at > ? ORDER BY visible_at, id LIMIT 1000`,
    );
  }

  /** Delays are capped at `maxDelayMs` and negative ones count as zero, as SQS does. */
  async send(message: WorkMessage, delayMs: number): Promise<void> {
    const valid = parseMessage(message);
    const now = this.#clock.now();
    this.#insert.run(valid.jobId, valid.version, now + this.#clampDelay(delayMs), now);
  }

  async sendBatch(messages: { message: WorkMessage; delayMs: number }[]): Promise<void> {
    const valid = messages.map(({ message, delayMs }) => ({ message: parseMessage(message), delayMs }));
    const now = this.#clock.now();
    this.#db.transaction(() => {
      for (const { message, delayMs } of valid) {
        this.#insert.run(message.jobId, message.version, now + this.#clampDelay(delayMs), now);
      }
    })();
  }

  /**
   * Claims up to `limit` messages visible at `now`, oldest first, hiding each for `leaseMs`. Two
   * consumers (even in two processes) never claim the same message while its lease holds. `owner`
   * names the claiming process for `releaseLeasesOf` (see `leaseOwnerOfThisProcess`). The lease
   * is capped at `maxLeaseMs`. Visibilities set by a process whose clock was ahead (their stamp in
   * the future) are first re-based on `now`, keeping the delay or lease they meant, so a skewed
   * writer cannot hide a message for as long as the skew (see the file's comment).
   */
  claim(now: number, limit: number, leaseMs: number, owner?: string): ClaimedMessage[] {
    if (limit <= 0) return [];
    return this.#db
      .transaction((): ClaimedMessage[] => {
        this.#rebaseSkewed(now);
        const rows = this.#visible.all(now, Math.floor(limit));
        return rows.map((row) => {
          this.#lease.run(now + this.#clampLease(leaseMs), owner ?? null, now, row.id);
          const receiveCount = row.receive_count + 1;
          return {
            receipt: `${row.id}.${receiveCount}`,
            message: { jobId: row.job_id, version: row.version },
            receiveCount,
            sentAt: row.sent_at,
          };
        });
      })
      .immediate();
  }

  /** Deletes a claimed message. False when the lease had run out and someone else claimed it since. */
  ack(receipt: string): boolean {
    const [id, count] = parseReceipt(receipt);
    return this.#delete.run(id, count).changes === 1;
  }

  /** Makes a claimed message visible again after `delayMs` (capped like `send`). */
  release(receipt: string, delayMs: number): boolean {
    const [id, count] = parseReceipt(receipt);
    const now = this.#clock.now();
    return this.#release.run(now + this.#clampDelay(delayMs), now, id, count).changes === 1;
  }

  /**
   * Keeps holding a claimed message for `leaseMs` more from now (a long step), capped at
   * `maxLeaseMs`. False if the lease was lost.
   */
  extend(receipt: string, leaseMs: number): boolean {
    const [id, count] = parseReceipt(receipt);
    const now = this.#clock.now();
    return this.#extend.run(now + this.#clampLease(leaseMs), now, id, count).changes === 1;
  }

  /**
   * Messages whose visibility was set by a clock ahead of `now`'s (their stamp further ahead than
   * `maxClockAheadMs`), or lies further ahead than any writer may set: what a reader on the right
   * time re-bases at its next claim. Soonest first, at most a thousand. For saying why work stalls.
   */
  heldAhead(now: number): MessageHeldAhead[] {
    return this.#heldAhead.all(now + maxClockAheadMs, now + this.#horizonMs()).map((row) => ({
      jobId: row.job_id,
      version: row.version,
      visibleAt: row.visible_at,
      aheadMs: Math.max(0, row.sent_at - now),
      leaseOwner: row.lease_owner ?? undefined,
    }));
  }

  /** The owners of leases that still hold at `now`. */
  leaseOwners(now: number): string[] {
    return this.#owners.all(now).map((row) => row.owner);
  }

  /**
   * Makes every message leased by `owner` visible now: its process is gone (killed, crashed), so
   * there is no point waiting for the leases to run out. Returns how many messages came back.
   */
  releaseLeasesOf(owner: string): number {
    const now = this.#clock.now();
    return this.#freeOwner.run(now, owner, now).changes;
  }

  /**
   * Takes back, at once, the leases of processes of this machine that are no longer running (a
   * `kill -9`, a crash), so a restart does not wait for them to run out. Returns how many came back.
   */
  releaseOrphanedLeases(): number {
    let released = 0;
    for (const owner of this.leaseOwners(this.#clock.now())) {
      if (!isLeaseOwnerAlive(owner)) released += this.releaseLeasesOf(owner);
    }
    return released;
  }

  /** When the earliest message becomes (or became) visible, leased ones included; undefined when empty. */
  nextVisibleAt(): number | undefined {
    return this.#nextVisible.get()?.at ?? undefined;
  }

  /** Messages held, visible or not. */
  size(): number {
    return this.#count.get()?.n ?? 0;
  }

  #rebaseSkewed(now: number): void {
    this.#rebase.run({
      now,
      maxDelay: this.maxDelayMs,
      maxLease: this.maxLeaseMs,
      ahead: now + maxClockAheadMs,
    });
    this.#dueBeyondBound.run(now, now, now + this.#horizonMs());
  }

  /** The furthest ahead a writer on the right time may set a visibility, with the clocks' tolerance. */
  #horizonMs(): number {
    return Math.max(this.maxDelayMs, this.maxLeaseMs) + maxClockAheadMs;
  }

  #clampLease(leaseMs: number): number {
    if (Number.isNaN(leaseMs) || leaseMs <= 0) return 0;
    return Math.min(Math.floor(leaseMs), this.maxLeaseMs);
  }

  #clampDelay(delayMs: number): number {
    if (Number.isNaN(delayMs) || delayMs <= 0) return 0;
    return Math.min(Math.floor(delayMs), this.maxDelayMs);
  }
}

/** Names this process (and this call) as a lease owner: `<host>/<pid>/<nonce>`. */
export function leaseOwnerOfThisProcess(): string {
  return `${hostname()}/${process.pid}/${randomBytes(4).toString('hex')}`;
}

/**
 * Whether the process that took a lease may still be running. Only a process of this machine that
 * is certainly gone counts as dead; anything unknown is assumed alive and its leases run out.
 */
export function isLeaseOwnerAlive(owner: string): boolean {
  const match = /^(.*)\/(\d+)\/[0-9a-f]+$/.exec(owner);
  if (!match || match[1] !== hostname()) return true;
  const pid = Number(match[2]);
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

function parseMessage(message: WorkMessage): WorkMessage {
  const parsed = workMessageSchema.safeParse(message);
  if (!parsed.success) throw new TypeError(`not a work message: ${formatIssues(parsed.error)}`);
  return parsed.data;
}

function parseReceipt(receipt: string): [number, number] {
  const match = receiptSchema.safeParse(receipt);
  if (!match.success) throw new TypeError(`not a receipt of this queue: ${JSON.stringify(receipt)}`);
  const [id, count] = match.data.split('.');
  return [Number(id), Number(count)];
}
