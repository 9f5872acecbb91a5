// DynamoDbRateLimiter on DynamoDB Local: one budget shared by many concurrent callers and by
// separate limiter instances (separate Lambda workers), and a bucket item that names no API key.
import { GetCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AwsEmulators, startAwsEmulators } from '../../../../scripts/emulators/aws-emulators';
import { DynamoDbRateLimiter, rateBucketKey } from '../../../../shared/backends/aws';
import { decodeGrant } from '../../../../shared/backends/aws/dynamodb-rate-grants';
import { cutHolder, decodeLane } from '../../../../shared/backends/aws/dynamodb-rate-lane';
import { shareHorizonMs } from '../../../../shared/engine/admission/acquire-token';
import { keyFingerprint } from '../../../../shared/engine/runner';

const T0 = 1_750_000_000_000;
let emulators: AwsEmulators;
beforeAll(async () => {
  emulators = await startAwsEmulators({ sqsAndS3: false, secretsManager: false });
});
afterAll(async () => {
  await emulators?.stop();
});

/** `count` workers' limiters on one new table (separate Lambda workers sharing one bucket item). */
async function limiters(
  count: number,
  options: {
    ratePerSecond: number;
    burst: number;
    maxContention?: number;
    shares?: ConstructorParameters<typeof DynamoDbRateLimiter>[0]['shares'];
  },
) {
  const tableName = await emulators.createTable();
  const make = () => new DynamoDbRateLimiter({ client: emulators.clients.documents, tableName, ...options });
  return { tableName, all: Array.from({ length: count }, make) };
}

describe('DynamoDbRateLimiter', () => {
  it('never grants more than the budget to many concurrent callers', async () => {
    const { all } = await limiters(4, { ratePerSecond: 5, burst: 5, maxContention: 50 });
    const bucket = keyFingerprint('sk-shared');
    const decisions = await Promise.all(
      Array.from({ length: 40 }, (_, i) => all[i % all.length]!.take(bucket, T0)),
    );
    expect(decisions.filter((decision) => decision.granted)).toHaveLength(5);
    for (const decision of decisions) {
      if (!decision.granted) expect(decision.retryAtMs).toBeGreaterThan(T0);
    }
    // A second later, the bucket has refilled at 5 per second: five more, not one more.
    const later = await Promise.all(
      Array.from({ length: 20 }, (_, i) => all[i % 4]!.take(bucket, T0 + 1_000)),
    );
    expect(later.filter((decision) => decision.granted)).toHaveLength(5);
  });

  it('gives up rather than waits when other workers keep winning, and still never overspends', async () => {
    const { tableName, all } = await limiters(8, { ratePerSecond: 100, burst: 100, maxContention: 1 });
    const decisions = await Promise.all(all.map((limiter) => limiter.take('bucket', T0)));
    const granted = decisions.filter((decision) => decision.granted).length;
    expect(granted).toBeGreaterThanOrEqual(1);
    for (const decision of decisions) if (!decision.granted) expect(decision.retryAtMs).toBe(T0 + 10);
    // Exactly the granted tokens were spent.
    const item = await emulators.clients.documents.send(
      new GetCommand({ TableName: tableName, Key: rateBucketKey('bucket') }),
    );
    expect(item.Item?.tokens).toBe(100 - granted);
  });

  it('slows every worker down when one of them is throttled', async () => {
    const { all } = await limiters(2, { ratePerSecond: 4, burst: 1 });
    const [a, b] = all as [DynamoDbRateLimiter, DynamoDbRateLimiter];
    expect(await a.take('k', T0)).toEqual({ granted: true });
    await a.throttled('k', T0);
    // Worker b sees the halved rate: the next token comes after 1 / 2 s, not 1 / 4 s.
    expect(await b.take('k', T0)).toEqual({ granted: false, retryAtMs: T0 + 500 });
    expect(await b.take('k', T0 + 500)).toEqual({ granted: true });
  });

  it('keys the bucket by the API key fingerprint, never by the key itself', async () => {
    const { tableName, all } = await limiters(1, { ratePerSecond: 1, burst: 1 });
    const fingerprint = keyFingerprint('sk-live-abcdef');
    await all[0]!.take(fingerprint, T0);
    const item = await emulators.clients.documents.send(
      new GetCommand({ TableName: tableName, Key: { PK: `RATE#${fingerprint}`, SK: 'BUCKET' } }),
    );
    expect(item.Item).toMatchObject({ tokens: 0, rate: 1, updatedAt: T0, seq: 1 });
    // A raw key passed by mistake lands in the same bucket, hashed: the key itself is never stored.
    await all[0]!.take('sk-live-abcdef', T0 + 1_000);
    const scan = await emulators.clients.documents.send(new ScanCommand({ TableName: tableName }));
    expect(scan.Items?.map((stored) => stored.PK)).toEqual([`RATE#${fingerprint}`]);
    expect(scan.Items?.[0]?.seq).toBe(2);
    expect(JSON.stringify(scan.Items)).not.toContain('sk-live');
  });

  it('reserves ahead in line or booked past its end, each token once and 1/rate apart across workers', async () => {
    const { tableName, all } = await limiters(4, { ratePerSecond: 2, burst: 1, maxContention: 50 });
    const bucket = keyFingerprint('sk-ahead');
    const stored = async () =>
      (
        await emulators.clients.documents.send(
          new GetCommand({ TableName: tableName, Key: rateBucketKey(bucket) }),
        )
      ).Item;
    // Due now: the free token is the caller's, at once.
    expect(await all[0]!.reserveAhead(bucket, T0, { at: T0, withinMs: 15_000 })).toBe(T0);
    // Twelve calls due now, scheduled together by four workers: each gets its own token, 500 ms apart,
    // in line after the one above, as far as the 5 s horizon reaches (ten of them); two get none.
    const ahead = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        all[i % all.length]!.reserveAhead(bucket, T0, { at: T0, withinMs: 5_000 }),
      ),
    );
    const times = ahead.filter((at): at is number => at !== undefined).sort((a, b) => a - b);
    expect(times).toEqual(Array.from({ length: 10 }, (_, i) => T0 + 500 * (i + 1)));
    // The line ends at T0 + 5 s. Six calls due at T0 + 8 s, from four workers at once: booked from
    // then on, 500 ms apart, nothing taken from the line yet.
    const booked = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        all[i % all.length]!.reserveAhead(bucket, T0, { at: T0 + 8_000, withinMs: 15_000 }),
      ),
    );
    expect(booked.sort((a, b) => a! - b!)).toEqual(Array.from({ length: 6 }, (_, i) => T0 + 8_000 + 500 * i));
    expect((await stored())?.tokens).toBe(1 - 11);
    // A call due at T0 + 4 s gets the line's next token, T0 + 5.5 s; the line then goes on through the
    // free tokens before the booked ones, and past them: takes now wait in line for T0 + 6 s, 6.5, 7,
    // 7.5, then T0 + 11 s, after the last token booked.
    expect(await all[1]!.reserveAhead(bucket, T0, { at: T0 + 4_000, withinMs: 15_000 })).toBe(T0 + 5_500);
    const takes = [];
    for (let i = 0; i < 5; i++) takes.push(await all[i % 4]!.take(bucket, T0, { reserveWithinMs: 60_000 }));
    expect(takes.map((decision) => (decision.granted ? T0 : decision.retryAtMs))).toEqual([
      T0 + 6_000,
      T0 + 6_500,
      T0 + 7_000,
      T0 + 7_500,
      T0 + 11_000,
    ]);
    // Exactly the tokens handed out were spent: 1 + 10 + 6 + 1 + 5 from a bucket of 1 at T0, and the
    // last token's time is kept, so every worker spaces the next one 1/rate after it.
    const item = await stored();
    expect(item?.tokens).toBe(1 - 23);
    expect(item?.booked).toBeUndefined();
    expect(item?.lastTokenAt).toBe(T0 + 11_000);
  });

  it('books nothing farther than the horizon from the call, and writes nothing then', async () => {
    const { all } = await limiters(1, { ratePerSecond: 2, burst: 1 });
    const [limiter] = all as [DynamoDbRateLimiter];
    expect(await limiter.reserveAhead('k', T0, { at: T0 + 3_000, withinMs: 0 })).toBe(T0 + 3_000);
    expect(await limiter.reserveAhead('k', T0, { at: T0 + 3_000, withinMs: 400 })).toBeUndefined();
    expect(await limiter.reserveAhead('k', T0, { at: T0 + 3_000, withinMs: 500 })).toBe(T0 + 3_500);
  });

  it("hands a high call of one worker a token another worker's job reserved; its holder finds it gone", async () => {
    const { tableName, all } = await limiters(2, { ratePerSecond: 5, burst: 1 });
    const [batch, urgent] = all as [DynamoDbRateLimiter, DynamoDbRateLimiter];
    const bucket = keyFingerprint('sk-lane');
    expect((await batch.take(bucket, T0)).granted).toBe(true);
    const reserved: number[] = [];
    for (let i = 0; i < 10; i++) {
      const decision = await batch.take(bucket, T0, { reserveWithinMs: 15_000 });
      if (!decision.granted && decision.reserved) reserved.push(decision.retryAtMs);
    }
    // A booked token past the line's end is in the lane too.
    expect(await batch.reserveAhead(bucket, T0, { at: T0 + 5_000, withinMs: 1_000 })).toBe(T0 + 5_000);
    expect(reserved).toEqual(Array.from({ length: 10 }, (_, i) => T0 + 200 * (i + 1)));
    // The soonest token at least 250 ms ahead is T0 + 400 ms; its message would come back at T0 + 1 s,
    // so the latest token by then is taken: T0 + 1 s, spent on time.
    expect(await urgent.cutIn(bucket, T0, 'urgent')).toBe(T0 + 1_000);
    expect(await batch.stillHeld(bucket, T0 + 1_000, 'holder')).toBe(false);
    expect(await batch.stillHeld(bucket, T0 + 1_000, 'urgent')).toBe(true);
    expect(await batch.stillHeld(bucket, T0 + 800, 'holder')).toBe(true);
    // Taken once: the next cut-in takes another token; a call due later, one from its due time.
    expect(await urgent.cutIn(bucket, T0, 'second')).toBe(T0 + 800);
    expect(await urgent.cutIn(bucket, T0, 'due', { at: T0 + 1_500 })).toBe(T0 + 2_000);
    // Due past the line's end (T0 + 2.2 s), a call finds a free token when it comes: no cut-in.
    expect(await urgent.cutIn(bucket, T0, 'later', { at: T0 + 4_500 })).toBeUndefined();
    expect(await batch.stillHeld(bucket, T0 + 5_000, 'holder')).toBe(true);
    // The lane's item stays small: ten reserved tokens in a short string.
    const item = (
      await emulators.clients.documents.send(
        new GetCommand({ TableName: tableName, Key: rateBucketKey(bucket) }),
      )
    ).Item;
    expect(String(item?.lane).length).toBeLessThan(40);
    // The cuts in a short string too: each time's gap and a hash of the job that cut in.
    expect(item?.cuts).toBeUndefined();
    expect(decodeLane(undefined, undefined, item?.cutl).cuts).toEqual(
      new Map([
        [T0 + 800, cutHolder('second')],
        [T0 + 1_000, cutHolder('urgent')],
        [T0 + 2_000, cutHolder('due')],
      ]),
    );
    expect(String(item?.cutl).length).toBeLessThan(40);
    // An idle key has a token now: no cut-in, nothing written.
    expect(await urgent.cutIn(keyFingerprint('sk-idle'), T0, 'urgent')).toBeUndefined();
    // Past its line the key has free tokens again: no cut-in.
    expect(await urgent.cutIn(bucket, T0 + 60_000, 'late')).toBeUndefined();
  });

  it('names the token each write gives in the item (the grant log the stream keeps), and only then', async () => {
    const { tableName, all } = await limiters(1, { ratePerSecond: 5, burst: 1 });
    const [limiter] = all as [DynamoDbRateLimiter];
    const bucket = keyFingerprint('sk-grants');
    const grantOf = async () => {
      const item = (
        await emulators.clients.documents.send(
          new GetCommand({ TableName: tableName, Key: rateBucketKey(bucket), ConsistentRead: true }),
        )
      ).Item;
      return { grant: decodeGrant(item?.grant), raw: item?.grant as string | undefined, seq: item?.seq };
    };
    const share = (jobId: string) => ({ tenant: 'default', jobId });
    expect((await limiter.take(bucket, T0, { share: share('first') })).granted).toBe(true);
    expect((await grantOf()).grant).toEqual({ kind: 'granted', by: 'first', askedAt: T0, tokenAt: T0 });
    await limiter.take(bucket, T0 + 10, { reserveWithinMs: 15_000, share: share('second') });
    expect((await grantOf()).grant).toEqual({
      kind: 'reserved',
      by: 'second',
      askedAt: T0 + 10,
      tokenAt: T0 + 200,
    });
    for (let i = 0; i < 8; i++)
      await limiter.take(bucket, T0 + 20, { reserveWithinMs: 15_000, share: share(`b${i}`) });
    // A booking's call asks when it is due; a cut-in's as well.
    expect(
      await limiter.reserveAhead(bucket, T0 + 20, { at: T0 + 5_000, withinMs: 1_000, share: share('later') }),
    ).toBe(T0 + 5_000);
    expect((await grantOf()).grant).toEqual({
      kind: 'reserved',
      by: 'later',
      askedAt: T0 + 5_000,
      tokenAt: T0 + 5_000,
    });
    const cutAt = await limiter.cutIn(bucket, T0 + 20, 'a-high-job-id-0123456789abcdef');
    const cut = await grantOf();
    expect(cut.grant).toEqual({
      kind: 'cut-in',
      by: 'a-high-job-id-0123456789abcdef',
      askedAt: T0 + 20,
      tokenAt: cutAt,
    });
    // Small: the attribute of a grant to a 30-character job id is under 64 bytes.
    expect(cut.raw?.length).toBeLessThan(64);
    // A refusal writes nothing (no new version); a write that gives no token names none.
    expect((await limiter.take(bucket, T0 + 30, { share: share('refused') })).granted).toBe(false);
    expect((await grantOf()).seq).toBe(cut.seq);
    await limiter.throttled(bucket, T0 + 40);
    expect(await grantOf()).toMatchObject({ grant: undefined, seq: (cut.seq as number) + 1 });
  });

  it('writes nothing for a success while the rate is already at the ceiling', async () => {
    const { tableName, all } = await limiters(1, { ratePerSecond: 2, burst: 2 });
    await all[0]!.take('k', T0);
    for (let i = 0; i < 5; i++) await all[0]!.succeeded('k', T0 + i);
    const item = await emulators.clients.documents.send(
      new GetCommand({ TableName: tableName, Key: rateBucketKey('k') }),
    );
    expect(item.Item?.seq).toBe(1);
  });

  describe('fair shares kept in the bucket item', () => {
    const shares = { tenants: { alpha: 3 } };
    const ledgerOf = async (tableName: string, bucket: string) => {
      const item = await emulators.clients.documents.send(
        new GetCommand({ TableName: tableName, Key: rateBucketKey(bucket) }),
      );
      const stored = JSON.parse(String(item.Item?.shares)) as { f: [string, number, string][] };
      return Object.fromEntries(stored.f.map(([name, virtual]) => [name, virtual]));
    };

    it('charges every token given, by any worker and any way, in the write that takes it', async () => {
      const { tableName, all } = await limiters(4, {
        ratePerSecond: 5,
        burst: 1,
        maxContention: 200,
        shares,
      });
      const bucket = keyFingerprint('sk-fair');
      const claims = [
        { tenant: 'alpha', batchId: 'b1' },
        { tenant: 'beta' },
        { tenant: 'gamma', batchId: 'g' },
      ];
      // 24 concurrent calls over four workers: takes reserving 15 s ahead, and bookings.
      const given = await Promise.all(
        Array.from({ length: 24 }, async (_, i) => {
          const limiter = all[i % 4]!;
          const share = claims[i % 3]!;
          if (i % 2 === 0) {
            const decision = await limiter.take(bucket, T0, { reserveWithinMs: 15_000, share });
            return decision.granted || decision.reserved ? share.tenant : undefined;
          }
          const at = await limiter.reserveAhead(bucket, T0, {
            at: T0 + 20_000 + i * 10,
            withinMs: 60_000,
            share,
          });
          return at === undefined ? undefined : share.tenant;
        }),
      );
      const count = (tenant: string) => given.filter((t) => t === tenant).length;
      expect(count('alpha') + count('beta') + count('gamma')).toBeGreaterThan(12);
      const ledger = await ledgerOf(tableName, bucket);
      // A batch's virtual time moves 1 a token (each is alone in its tenant, so never levelled up):
      // none lost to a lost write, none charged twice. A tenant's moves 1/weight a token, from
      // where it started level with the others' service.
      expect(ledger['b:alpha:b1']).toBe(count('alpha'));
      expect(ledger['b:beta:']).toBe(count('beta'));
      expect(ledger['b:gamma:g']).toBe(count('gamma'));
      expect(ledger['t:alpha']! * 3).toBeGreaterThanOrEqual(count('alpha') - 0.01);
      expect(ledger['t:beta']).toBeGreaterThanOrEqual(count('beta'));
    });

    it('sets the horizon where the tenant stands, and gives a cut token back to its holder', async () => {
      const { tableName, all } = await limiters(1, { ratePerSecond: 5, burst: 1, shares: { tenants: {} } });
      const limiter = all[0]!;
      const bucket = keyFingerprint('sk-stand');
      const seen: string[] = [];
      const horizonFor = (standing: 'ahead' | 'even' | 'behind') => {
        seen.push(standing);
        return standing === 'ahead' ? 2_000 : 15_000;
      };
      // alpha takes the line's first ten tokens (3 s ahead at 5/s, 2 s ahead: one reserved token each).
      for (let i = 0; i < 10; i++)
        await limiter.take(bucket, T0, { reserveWithinMs: 15_000, share: { tenant: 'alpha' } });
      // beta comes: level with the key's service so far (none of alpha's tokens has come), so
      // alpha's reserved line is its lead: beta steps up, alpha stands back.
      const beta = await limiter.take(bucket, T0, { share: { tenant: 'beta', horizonFor } });
      expect(seen).toEqual(['behind']);
      expect(beta).toMatchObject({ granted: false, reserved: true, withinMs: 15_000 });
      const alpha = await limiter.take(bucket, T0, { share: { tenant: 'alpha', horizonFor } });
      expect(seen).toEqual(['behind', 'ahead']);
      expect(alpha).toMatchObject({ granted: false, withinMs: 2_000 });
      expect(alpha.granted === false && alpha.reserved).toBeFalsy();
      const before = await ledgerOf(tableName, bucket);
      expect(before['t:alpha']).toBe(10);
      // A high job of gamma takes over one of alpha's tokens: alpha is given it back, gamma charged.
      const cut = await limiter.cutIn(bucket, T0, 'urgent', { share: { tenant: 'gamma' } });
      expect(cut).toBeDefined();
      const after = await ledgerOf(tableName, bucket);
      expect(after['t:alpha']).toBe(9);
      // gamma started level with the key's service (alpha's one token come), then was charged one.
      expect(after['t:gamma']).toBe(2);
    });

    it("orders the tenants owed the key's next tokens from one read, and books no sent-back job's token while two tenants have work", async () => {
      const { tableName, all } = await limiters(1, { ratePerSecond: 5, burst: 1, shares });
      const limiter = all[0]!;
      const bucket = keyFingerprint('sk-order');
      const seqOf = async () =>
        (
          await emulators.clients.documents.send(
            new GetCommand({ TableName: tableName, Key: rateBucketKey(bucket), ConsistentRead: true }),
          )
        ).Item?.seq;
      // No ledger yet, then one tenant: no order to follow (the releaser reads no jobs then).
      expect(await limiter.shareOrder(bucket, T0)).toBeUndefined();
      for (let i = 0; i < 12; i++)
        await limiter.take(bucket, T0, { reserveWithinMs: 15_000, share: { tenant: 'alpha' } });
      expect(await limiter.shareOrder(bucket, T0)).toBeUndefined();
      // alpha alone: a sent-back job books its return's token as before.
      const alone = await limiter.reserveAhead(bucket, T0, {
        at: T0 + 20_000,
        withinMs: 2_000,
        share: { tenant: 'alpha' },
        sentBack: true,
      });
      expect(alone).toBeGreaterThanOrEqual(T0 + 20_000);
      // beta asks (refused: its horizon ends before the line's), level with the key's service.
      await limiter.take(bucket, T0, { reserveWithinMs: 0, share: { tenant: 'beta' } });
      const ledger = await ledgerOf(tableName, bucket);
      expect(ledger['t:alpha']! - ledger['t:beta']!).toBeGreaterThan(3);
      const seq = await seqOf();
      // beta's calls first, gamma (not in the ledger) level with beta after beta's first, then alpha's.
      const owed = await limiter.shareOrder(bucket, T0);
      expect(owed?.(['alpha', 'alpha', 'beta', 'beta', 'gamma'])).toEqual([2, 4, 3, 0, 1]);
      // Two tenants with work: a sent-back job books nothing (nothing written); a release's booking does.
      expect(
        await limiter.reserveAhead(bucket, T0, {
          at: T0 + 25_000,
          withinMs: 2_000,
          share: { tenant: 'alpha' },
          sentBack: true,
        }),
      ).toBeUndefined();
      expect(await seqOf()).toBe(seq);
      expect(
        await limiter.reserveAhead(bucket, T0, {
          at: T0 + 25_000,
          withinMs: 2_000,
          share: { tenant: 'beta' },
        }),
      ).toBeGreaterThanOrEqual(T0 + 25_000);
      // Shares off: no order, and a sent-back job books.
      const { all: off } = await limiters(1, { ratePerSecond: 5, burst: 1 });
      expect(await off[0]!.shareOrder(bucket, T0)).toBeUndefined();
      expect(
        await off[0]!.reserveAhead(bucket, T0, { at: T0 + 5_000, withinMs: 2_000, sentBack: true }),
      ).toBeDefined();
    });

    /**
     * Three tenants (weights 5, 3, 2) submit 100, 60 and 40 one-call jobs in that order, in one
     * instant, on a 5 calls/s key, through two workers, as the api and the step worker ask: each
     * job's call takes its token (new jobs' first calls within 2 s; a tenant behind its share
     * within 15 s), or is sent back with a spread and books its return's token (up to 30 s out);
     * when its token comes, its holder asks whether it still holds it (`stillHeld`) and otherwise
     * takes a new one. Returns each job's spent token, and each token the lane handed out.
     */
    async function firstSeconds() {
      const { all: workers } = await limiters(2, {
        ratePerSecond: 5,
        burst: 1,
        maxContention: 50,
        shares: { tenants: { alpha: 5, beta: 3, gamma: 2 } },
      });
      const bucket = keyFingerprint('sk-first');
      let seed = 7;
      const random = () => {
        seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
        return seed / 2_147_483_648;
      };
      const jobs = (['alpha', 'beta', 'gamma'] as const).flatMap((tenant, t) =>
        Array.from({ length: [100, 60, 40][t]! }, (_, i) => ({ id: `${tenant}-${i}`, tenant })),
      );
      const events = jobs.map((job, order) => ({
        at: T0,
        order,
        job,
        held: undefined as number | undefined,
      }));
      const spent: { at: number; tenant: string; id: string }[] = [];
      let order = jobs.length;
      let step = 0;
      while (events.length > 0) {
        events.sort((a, b) => a.at - b.at || a.order - b.order);
        const { at: now, job, held } = events.shift()!;
        const worker = workers[step++ % 2]!;
        if (held !== undefined && (await worker.stillHeld(bucket, held, job.id))) {
          spent.push({ at: held, tenant: job.tenant, id: job.id });
          continue;
        }
        const share = {
          tenant: job.tenant,
          jobId: job.id,
          horizonFor: (standing: 'ahead' | 'even' | 'behind') => shareHorizonMs(standing, 2_000, 15_000),
        };
        const decision = await worker.take(bucket, now, { reserveWithinMs: 2_000, share });
        if (decision.granted) {
          spent.push({ at: now, tenant: job.tenant, id: job.id });
          continue;
        }
        if (decision.reserved) {
          events.push({ at: decision.retryAtMs, order: order++, job, held: decision.retryAtMs });
          continue;
        }
        const waitMs = Math.max(1, decision.retryAtMs - now);
        const back = now + waitMs + Math.floor(random() * Math.min(30_000, 4 * waitMs));
        const booked = await worker.reserveAhead(bucket, now, {
          at: back,
          withinMs: decision.withinMs ?? 2_000,
          share,
          sentBack: true,
        });
        events.push({ at: booked ?? back, order: order++, job, held: booked });
      }
      return spent.sort((a, b) => a.at - b.at);
    }

    const shareOf = (spent: { at: number; tenant: string }[], tenant: string, from: number, to: number) => {
      const inWindow = spent.filter((s) => s.at >= from && s.at < to);
      return inWindow.filter((s) => s.tenant === tenant).length / inWindow.length;
    };

    it("gives each tenant its share from the first 20 s: a tenant behind takes over a leading tenant's booked tokens", async () => {
      const spent = await firstSeconds();
      // Every job called once, on its own token: never two calls on one token, never over 5 in a second.
      expect(new Set(spent.map((s) => s.id)).size).toBe(200);
      expect(spent).toHaveLength(200);
      expect(new Set(spent.map((s) => s.at)).size).toBe(200);
      const crowded = spent.filter((s, i) => i >= 5 && s.at - spent[i - 5]!.at < 1_000);
      expect(crowded).toEqual([]);
      // The first 20 s window: each tenant within 5 points of 50/30/20.
      const first = { alpha: 0.5, beta: 0.3, gamma: 0.2 };
      for (const [tenant, goal] of Object.entries(first))
        expect(Math.abs(shareOf(spent, tenant, T0, T0 + 20_000) - goal)).toBeLessThanOrEqual(0.05);
    }, 90_000);
  });
});
