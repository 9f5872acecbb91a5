// The SQLite work queue's consumer side: claims, leases, acks and releases, with a fake clock.

import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  isLeaseOwnerAlive,
  type LocalDatabase,
  leaseOwnerOfThisProcess,
  openLocalDatabase,
  SqliteWorkQueue,
} from '../../../../shared/backends/local';

const T0 = 1_750_000_000_000;

describe('SqliteWorkQueue', () => {
  let dir: string;
  let db: LocalDatabase;
  let now: number;
  let queue: SqliteWorkQueue;
  const clock = { now: () => now };

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'opflow-queue-'));
    db = openLocalDatabase(join(dir, 'opflow.db'));
    now = T0;
    queue = new SqliteWorkQueue(db, { clock, maxDelayMs: 60_000 });
  });
  afterEach(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('makes a delayed message visible when its delay has passed', async () => {
    await queue.send({ jobId: 'a', version: 1 }, 5_000);
    expect(queue.claim(T0 + 4_999, 10, 1_000)).toEqual([]);
    const [claimed] = queue.claim(T0 + 5_000, 10, 1_000);
    expect(claimed?.message).toEqual({ jobId: 'a', version: 1 });
    expect(claimed?.receiveCount).toBe(1);
    expect(claimed?.sentAt).toBe(T0);
  });

  it('caps delays at maxDelayMs and treats negative or NaN delays as none', async () => {
    await queue.send({ jobId: 'far', version: 1 }, Number.POSITIVE_INFINITY);
    await queue.send({ jobId: 'neg', version: 1 }, -10);
    await queue.send({ jobId: 'nan', version: 1 }, Number.NaN);
    expect(
      queue
        .claim(T0, 10, 1_000)
        .map((c) => c.message.jobId)
        .sort(),
    ).toEqual(['nan', 'neg']);
    expect(queue.nextVisibleAt()).toBe(T0 + 1_000);
    expect(queue.claim(T0 + 60_000, 10, 1_000).map((c) => c.message.jobId)).toContain('far');
  });

  it('hides a claimed message for its lease, then delivers it again (at least once)', async () => {
    await queue.send({ jobId: 'a', version: 1 }, 0);
    const [first] = queue.claim(T0, 10, 30_000);
    expect(queue.claim(T0 + 29_999, 10, 30_000)).toEqual([]);
    const [second] = queue.claim(T0 + 30_000, 10, 30_000);
    expect(second?.message).toEqual(first?.message);
    expect(second?.receiveCount).toBe(2);
    expect(second?.receipt).not.toBe(first?.receipt);
  });

  it('deletes on ack, and an ack from an expired lease does not delete the new claim', async () => {
    await queue.send({ jobId: 'a', version: 1 }, 0);
    const [first] = queue.claim(T0, 10, 1_000);
    const [second] = queue.claim(T0 + 1_000, 10, 1_000);
    expect(queue.ack(first!.receipt)).toBe(false);
    expect(queue.size()).toBe(1);
    expect(queue.ack(second!.receipt)).toBe(true);
    expect(queue.size()).toBe(0);
    expect(queue.claim(T0 + 10_000, 10, 1_000)).toEqual([]);
  });

  it('makes a released message visible again after the given delay', async () => {
    await queue.send({ jobId: 'a', version: 1 }, 0);
    const [claimed] = queue.claim(T0, 10, 30_000);
    now = T0 + 100;
    expect(queue.release(claimed!.receipt, 2_000)).toBe(true);
    expect(queue.claim(T0 + 2_099, 10, 1_000)).toEqual([]);
    expect(queue.claim(T0 + 2_100, 10, 1_000)).toHaveLength(1);
  });

  it('claims oldest-visible first and no more than asked', async () => {
    await queue.send({ jobId: 'late', version: 1 }, 300);
    await queue.send({ jobId: 'early', version: 1 }, 100);
    await queue.send({ jobId: 'middle', version: 1 }, 200);
    const claimed = queue.claim(T0 + 1_000, 2, 1_000);
    expect(claimed.map((c) => c.message.jobId)).toEqual(['early', 'middle']);
    expect(queue.claim(T0 + 1_000, 0, 1_000)).toEqual([]);
  });

  it('never hands one message to two consumers on two connections', async () => {
    const otherDb = openLocalDatabase(join(dir, 'opflow.db'));
    const other = new SqliteWorkQueue(otherDb, { clock });
    for (let i = 0; i < 20; i += 1) await queue.send({ jobId: `j${i}`, version: 1 }, 0);
    const seen: string[] = [];
    for (let round = 0; round < 10; round += 1) {
      for (const consumer of [queue, other]) {
        for (const claimed of consumer.claim(T0, 3, 60_000)) seen.push(claimed.message.jobId);
      }
    }
    otherDb.close();
    expect(seen).toHaveLength(20);
    expect(new Set(seen).size).toBe(20);
  });

  it('sends a batch in one go', async () => {
    await queue.sendBatch([
      { message: { jobId: 'a', version: 1 }, delayMs: 0 },
      { message: { jobId: 'b', version: 2 }, delayMs: 10 },
    ]);
    expect(queue.size()).toBe(2);
    expect(queue.nextVisibleAt()).toBe(T0);
  });

  it('refuses a message that is not {jobId, version}, saying what is wrong', async () => {
    await expect(queue.send({ jobId: '', version: 1 }, 0)).rejects.toThrow(/jobId/);
    await expect(queue.send({ jobId: 'a', version: 1.5 }, 0)).rejects.toThrow(/version/);
    expect(() => queue.ack('nonsense')).toThrow(/receipt/);
  });

  it('keeps messages across reopening the file', async () => {
    await queue.send({ jobId: 'a', version: 3 }, 0);
    db.close();
    db = openLocalDatabase(join(dir, 'opflow.db'));
    const reopened = new SqliteWorkQueue(db, { clock });
    expect(reopened.claim(T0, 10, 1_000).map((c) => c.message)).toEqual([{ jobId: 'a', version: 3 }]);
  });

  it('reports when the next message is due, and undefined when empty', async () => {
    expect(queue.nextVisibleAt()).toBeUndefined();
    await queue.send({ jobId: 'a', version: 1 }, 700);
    expect(queue.nextVisibleAt()).toBe(T0 + 700);
  });

  it('extends a lease while a long step runs, and not one that was lost', async () => {
    await queue.send({ jobId: 'a', version: 1 }, 0);
    const [claimed] = queue.claim(T0, 1, 1_000);
    now = T0 + 900;
    expect(queue.extend(claimed!.receipt, 5_000)).toBe(true);
    expect(queue.claim(T0 + 5_000, 1, 1_000)).toEqual([]);
    const [again] = queue.claim(T0 + 5_900, 1, 1_000);
    expect(queue.extend(claimed!.receipt, 5_000)).toBe(false);
    expect(again?.receiveCount).toBe(2);
  });

  it('takes back at once the leases of a process that is gone, and only those', async () => {
    // A pid that certainly exited: a child that has already finished.
    const dead = spawnSync(process.execPath, ['-e', '0']).pid;
    const deadOwner = `${hostname()}/${dead}/0badc0de`;
    const liveOwner = leaseOwnerOfThisProcess();
    const elsewhere = `another-host/${dead}/0badc0de`;
    for (const jobId of ['a', 'b', 'c']) await queue.send({ jobId, version: 1 }, 0);
    queue.claim(T0, 1, 60_000, deadOwner);
    queue.claim(T0, 1, 60_000, liveOwner);
    queue.claim(T0, 1, 60_000, elsewhere);
    expect(queue.leaseOwners(T0).sort()).toEqual([deadOwner, liveOwner, elsewhere].sort());
    expect(isLeaseOwnerAlive(deadOwner)).toBe(false);
    expect(isLeaseOwnerAlive(liveOwner)).toBe(true);
    expect(isLeaseOwnerAlive(elsewhere)).toBe(true);
    expect(queue.releaseOrphanedLeases()).toBe(1);
    expect(queue.claim(T0, 10, 60_000).map((c) => c.message.jobId)).toEqual(['a']);
  });

  it('does not hide a message sent by a clock two hours ahead for longer than its delay', async () => {
    const hour = 3_600_000;
    const ahead = new SqliteWorkQueue(db, { clock: { now: () => now + 2 * hour }, maxDelayMs: hour });
    await ahead.send({ jobId: 'skewed', version: 1 }, 26 * 60_000);
    const reader = new SqliteWorkQueue(db, { clock, maxDelayMs: hour });
    // Seen at T0 by a reader on the right time: it keeps its 26 minutes from then, not 146.
    expect(reader.claim(T0, 10, 1_000)).toEqual([]);
    expect(reader.claim(T0 + 26 * 60_000 - 1, 10, 1_000)).toEqual([]);
    expect(reader.claim(T0 + 26 * 60_000, 10, 1_000).map((c) => c.message.jobId)).toEqual(['skewed']);
  });

  it('holds a lease taken by a clock two hours ahead for its lease from the reader, not two hours', async () => {
    const hour = 3_600_000;
    const ahead = new SqliteWorkQueue(db, { clock: { now: () => now + 2 * hour }, maxDelayMs: hour });
    await queue.send({ jobId: 'held', version: 1 }, 0);
    const [claimed] = ahead.claim(T0 + 2 * hour, 10, 60_000, 'far/1/ab');
    expect(claimed).toBeDefined();
    expect(queue.heldAhead(T0)).toEqual([
      {
        jobId: 'held',
        version: 1,
        visibleAt: T0 + 2 * hour + 60_000,
        aheadMs: 2 * hour,
        leaseOwner: 'far/1/ab',
      },
    ]);
    // A reader on the right time re-bases the lease: one minute from its first look, not 121.
    expect(queue.claim(T0, 10, 1_000)).toEqual([]);
    expect(queue.heldAhead(T0)).toEqual([]);
    // The skewed holder, still alive, renews its lease: it keeps the message while it renews.
    now = T0 + 30_000;
    expect(ahead.extend(claimed?.receipt ?? '', 60_000)).toBe(true);
    expect(queue.claim(T0 + 70_000, 10, 1_000)).toEqual([]);
    // It stops renewing (frozen, or on another machine): one lease later a reader takes the message over.
    const [taken] = queue.claim(T0 + 70_000 + 60_000, 10, 1_000);
    expect(taken?.message.jobId).toBe('held');
    expect(ahead.extend(claimed?.receipt ?? '', 60_000)).toBe(false);
  });

  it('caps a lease at maxLeaseMs, and a visibility beyond any bound is due at once', async () => {
    const capped = new SqliteWorkQueue(db, { clock, maxDelayMs: 60_000, maxLeaseMs: 10_000 });
    await capped.send({ jobId: 'a', version: 1 }, 0);
    expect(capped.claim(T0, 10, 3_600_000)).toHaveLength(1);
    expect(capped.claim(T0 + 9_999, 10, 1_000)).toEqual([]);
    expect(capped.claim(T0 + 10_000, 10, 1_000)).toHaveLength(1);
    // A row written with a visibility far ahead and an honest-looking stamp (an older opflow).
    db.prepare('UPDATE messages SET visible_at = ?').run(T0 + 5 * 3_600_000);
    expect(capped.heldAhead(T0 + 20_000).map((held) => held.jobId)).toEqual(['a']);
    expect(capped.claim(T0 + 20_000, 10, 1_000)).toHaveLength(1);
  });

  it('keeps the delay of a release made by a clock ahead, from the reader', async () => {
    const hour = 3_600_000;
    const ahead = new SqliteWorkQueue(db, { clock: { now: () => now + 2 * hour }, maxDelayMs: hour });
    const reader = new SqliteWorkQueue(db, { clock, maxDelayMs: hour });
    await reader.send({ jobId: 'r', version: 1 }, 0);
    const [claimed] = ahead.claim(T0 + 2 * hour, 10, 60_000);
    expect(ahead.release(claimed?.receipt ?? '', 26 * 60_000)).toBe(true);
    expect(reader.claim(T0, 10, 1_000)).toEqual([]);
    expect(reader.claim(T0 + 26 * 60_000 - 1, 10, 1_000)).toEqual([]);
    expect(reader.claim(T0 + 26 * 60_000, 10, 1_000).map((c) => c.message.jobId)).toEqual(['r']);
  });
});
