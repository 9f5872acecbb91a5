/**
 * RateLimiter on DynamoDB: one token bucket item per API key (`RATE#<fingerprint>`), so every
 * worker of every Lambda draws from the same budget. Each change is a read followed by a Put
 * conditioned on the `seq` read, so two workers can never spend the same token; a loser reads
 * again. The arithmetic is the engine's (shared/engine/admission/rate-bucket.ts), shared with the local
 * limiter. `take()` never waits: without a token it says when to come back. The tokens reserved
 * ahead and those a `high` job's call took over are the item's lane (dynamodb-rate-lane.ts), so a
 * priority call cuts in ahead of a line that every worker shares. A write that gives a token names
 * it (`grant`, dynamodb-rate-grants.ts): the table's stream is then the key's grant log.
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { type DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { ShareWeights } from '../../engine/admission/fair-share';
import type { TokenGrant } from '../../engine/admission/priority-lane';
import {
  bucketBudget,
  initialBucket,
  lineIsLong,
  type RateBucketConfig,
  type RateBucketOptions,
  type RateBucketState,
  rateBucketConfig,
  reserveAhead,
  succeeded,
  take,
  throttled,
} from '../../engine/admission/rate-bucket';
import type { RateDecision, RateLimiter, ShareClaim } from '../../engine/ports';
import {
  chooseCut,
  decodeLane,
  emptyLane,
  encodeLane,
  laneCut,
  laneHolds,
  laneReserved,
  maxShareCuts,
  pruneLane,
  type RateLane,
} from './dynamodb-rate-lane';
import type { ShareLedger } from './dynamodb-share-ledger';
import { AwsConfigError } from './errors';
import { rateBucketKey } from './table';

export interface DynamoDbRateLimiterOptions extends RateBucketOptions {
  client: DynamoDBDocumentClient;
  tableName: string;
  /** Read-and-write rounds one call may lose to other workers before giving up (default 8). */
  maxContention?: number | undefined;
  /** Buckets are removed by TTL after this long without use (default one day). */
  idleSeconds?: number | undefined;
  /**
   * The tenants' weights of fair shares, or the `OPFLOW_SHARES` text (fair-share.ts `parseShares`,
   * parsed when the ledger's module loads): the item then keeps the key's ledger, charged in the
   * write that gives each token to a `share` claim (dynamodb-share-ledger.ts, a chunk loaded on
   * first use: out of the functions' cold starts). Absent, or `off`: fair shares are off.
   */
  shares?: ShareWeights | string | undefined;
}

/** What a change of the bucket reads and writes: the bucket, its priority lane and its shares. */
interface BucketItem {
  state: RateBucketState;
  lane: RateLane;
  ledger: ShareLedger;
  /** The token this write gives, if any (the item's `grant`, `encodeGrant`). */
  grant?: string | undefined;
}

interface StoredBucket extends BucketItem {
  /** The `seq` of the item read, or undefined when there was no item or it had none. */
  seq: number | undefined;
}

/** One token given by a write of the bucket item (`TokenGrant` without its order, which is `seq`). */
export type ItemGrant = Omit<TokenGrant, 'seq' | 'kind'> & { kind: 'granted' | 'reserved' | 'cut-in' };

/**
 * The `grant` attribute of a write that gives a token (read back, with zod, by
 * dynamodb-rate-grants.ts `decodeGrant`): space-separated `name=value` fields, so a reader names
 * what it reads and a later version may add fields: `v=2` (the format's version), `k` its kind
 * (`g`ranted, `r`eserved, `c`ut-in), `a` the call's ask (ms, base 36), `t` the token's time after
 * the ask (ms, base 36, signed) and `j` the job (absent for a caller that named none). Short (under
 * 64 bytes for a 30-character job id): the step worker's bundle is at its budget, and the item's
 * size is its writes' cost.
 */
export function encodeGrant(
  kind: 'g' | 'r' | 'c',
  by: string | undefined,
  askedAt: number,
  tokenAt: number,
): string {
  const asked = Math.round(askedAt);
  return `v=2 k=${kind} a=${asked.toString(36)} t=${(Math.round(tokenAt) - asked).toString(36)}${by ? ` j=${by}` : ''}`;
}

export class DynamoDbRateLimiter implements RateLimiter {
  private readonly client: DynamoDBDocumentClient;
  private readonly tableName: string;
  private readonly config: RateBucketConfig;
  private readonly maxContention: number;
  private readonly idleSeconds: number;
  /** The last rate seen per bucket: lets `succeeded()` skip the write when already at the ceiling. */
  private readonly lastRate = new Map<string, number>();
  /** When this worker was last refused a token, per bucket (`saturated()`). */
  private readonly refusedAt = new Map<string, number>();
  private readonly sharesOption: ShareWeights | string | undefined;
  /** The ledger's module and the weights, once loaded (`loadShares`). */
  private sharesKit: SharesKit | undefined;
  private sharesLoading: Promise<SharesKit> | undefined;
  readonly keepsShares: boolean;

  constructor(options: DynamoDbRateLimiterOptions) {
    if (!options.tableName) throw new AwsConfigError('DynamoDbRateLimiter needs a table name');
    this.client = options.client;
    this.tableName = options.tableName;
    this.config = rateBucketConfig(options);
    this.maxContention = options.maxContention ?? 8;
    this.idleSeconds = options.idleSeconds ?? 24 * 3600;
    this.sharesOption = options.shares;
    this.keepsShares =
      typeof options.shares === 'string' ? options.shares.trim() !== 'off' : options.shares !== undefined;
  }

  /** The ledger's module and weights, loaded once (a failed load is tried again). */
  private async loadShares(): Promise<SharesKit | undefined> {
    if (!this.keepsShares) return undefined;
    if (this.sharesKit) return this.sharesKit;
    this.sharesLoading ??= import('./dynamodb-share-ledger').then((ledger) => {
      const option = this.sharesOption;
      const weights = typeof option === 'string' ? ledger.weightsOfSetting(option) : option;
      this.sharesKit = { ledger, weights: weights ?? { tenants: {} } };
      return this.sharesKit;
    });
    this.sharesLoading.catch(() => {
      this.sharesLoading = undefined;
    });
    return this.sharesLoading;
  }

  /** The claim, when this limiter keeps shares. */
  private claimOf(share: ShareClaim | undefined): ShareClaim | undefined {
    return this.keepsShares ? share : undefined;
  }

  /** The ledger after the claim's job was given the token at `at`. */
  private charged(ledger: ShareLedger, claim: ShareClaim | undefined, now: number, at: number): ShareLedger {
    const kit = this.sharesKit;
    return claim && kit ? kit.ledger.ledgerCharged(ledger, claim, kit.weights, now, at) : ledger;
  }

  /** The claim's job asks (its flows have work) and where it stands; none without shares. */
  private asks(ledger: ShareLedger, claim: ShareClaim | undefined, now: number) {
    const kit = this.sharesKit;
    return claim && kit ? kit.ledger.ledgerAsks(ledger, claim, now) : undefined;
  }

  async take(
    bucket: string,
    now: number,
    options?: { reserveWithinMs?: number; share?: ShareClaim | undefined },
  ): Promise<RateDecision> {
    let decision: RateDecision | undefined;
    let rate = this.config.ceiling;
    const claim = this.claimOf(options?.share);
    const by = options?.share?.jobId;
    const written = await this.update(bucket, now, ({ state, lane, ledger }) => {
      // With shares kept here: the call's tenant and batch have work, and where they stand sets
      // its horizon (ahead: stands back; behind: steps up), read on the version this write replaces.
      const asked = this.asks(ledger, claim, now);
      // A call that may cut in (its job named) takes its share back by cutting in at the leaders'
      // tokens at its share's pace (`shareCut`), not by reserving the line's next 15 s: that
      // would put all of its tokens first and the leaders' after them.
      const standing = asked?.standing === 'behind' && claim?.jobId !== undefined ? 'even' : asked?.standing;
      const withinMs = standing && claim?.horizonFor ? claim.horizonFor(standing) : options?.reserveWithinMs;
      const result = take(state, this.config, now, withinMs);
      decision =
        !result.decision.granted && asked && claim?.horizonFor
          ? { ...result.decision, withinMs }
          : result.decision;
      rate = result.state.rate;
      const askedLedger = asked?.ledger ?? ledger;
      if (result.decision.granted)
        return {
          state: result.state,
          lane,
          ledger: this.charged(askedLedger, claim, now, now),
          grant: encodeGrant('g', by, now, now),
        };
      // Behind another tenant (or batch), the call takes over that one's token reserved sooner
      // than the line's next free token, beyond its horizon too (`shareCut`).
      const cut =
        asked !== undefined
          ? this.shareCut({ state, lane, ledger: askedLedger }, claim, now, now, result.decision.retryAtMs)
          : undefined;
      if (cut) {
        decision = { granted: false, retryAtMs: cut.at, reserved: true, withinMs };
        return { ...cut.item, grant: encodeGrant('c', by, now, cut.at) };
      }
      if (!result.decision.reserved) {
        // Without a token (and no reservation) the bucket has nothing worth writing (the refill is
        // recomputed on every read). Its flows' having work is, now and then: others stand back.
        return claim && this.sharesKit?.ledger.askWorthWriting(ledger, claim, now)
          ? { state, lane, ledger: askedLedger }
          : undefined;
      }
      const at = result.decision.retryAtMs;
      return {
        state: result.state,
        lane: laneReserved(lane, at),
        ledger: this.charged(askedLedger, claim, now, at),
        grant: encodeGrant('r', by, now, at),
      };
    });
    if (written === 'contended' || !decision) {
      // Other workers keep winning: they are spending the budget, so come back in one token's time.
      this.refusedAt.set(bucket, now);
      return { granted: false, retryAtMs: now + Math.ceil(1000 / this.config.ceiling) };
    }
    if (lineIsLong(decision, rate, now)) this.refusedAt.set(bucket, now);
    return decision;
  }

  /**
   * Reserves the token of a call due at `at`: the line's next token when the line reaches past
   * `at`, else a token booked at or after `at` (kept in the item's `booked` list until the line
   * reaches it), one conditional write like `take`; undefined, with nothing written, when no token
   * is within `withinMs` of `at`, other workers keep winning (the call takes one when it comes), or
   * a job `sentBack` finds two tenants or more with work in the ledger.
   */
  async reserveAhead(
    bucket: string,
    now: number,
    options: { at: number; withinMs: number; share?: ShareClaim | undefined; sentBack?: boolean | undefined },
  ): Promise<number | undefined> {
    let reservedAt: number | undefined;
    const claim = this.claimOf(options.share);
    // The call asks when it is due (a booking is made ahead of that).
    const by = options.share?.jobId;
    const askedAt = Math.max(now, options.at);
    const written = await this.update(bucket, now, ({ state, lane, ledger }) => {
      // A job sent back books nothing while tenants share the key (`RateLimiter.reserveAhead`).
      const kit = this.sharesKit;
      if (options.sentBack && kit && kit.ledger.tenantsWithWork(ledger, now) >= 2) return undefined;
      const result = reserveAhead(state, this.config, now, options.at, options.withinMs);
      const asking = this.asks(ledger, claim, now);
      // Behind another tenant (or batch), the call takes over that one's token reserved sooner
      // than the one it would book (`shareCut`).
      const cut =
        asking !== undefined
          ? this.shareCut(
              { state, lane, ledger: asking.ledger },
              claim,
              now,
              options.at,
              result.reservedAt ?? Number.POSITIVE_INFINITY,
            )
          : undefined;
      if (cut) {
        reservedAt = cut.at;
        return { ...cut.item, grant: encodeGrant('c', by, askedAt, cut.at) };
      }
      reservedAt = result.reservedAt;
      if (reservedAt === undefined) return undefined;
      return {
        state: result.state,
        lane: laneReserved(lane, reservedAt),
        ledger: this.charged(asking?.ledger ?? ledger, claim, now, reservedAt),
        grant: encodeGrant('r', by, askedAt, reservedAt),
      };
    });
    return written === 'written' ? reservedAt : undefined;
  }

  /**
   * The token a call whose tenant or batch is behind another takes over (in the write that would
   * have reserved one): among the lane's tokens reserved for a tenant ahead of its own by more than
   * a token of each, or a batch of its own tenant so far ahead (dynamodb-share-ledger.ts
   * `ledgerCuttable`), those from a
   * moment ahead and not before the call is due (`dueAt`) and before `before` (the token it would
   * get otherwise, or its horizon's end), the one `chooseCut` picks. The owner is given back its
   * charge and the claim charged; the bucket is unchanged (the token was already counted). Its
   * holder finds it gone when its message comes (`stillHeld`) and takes a new one, standing back.
   * Undefined without shares, a job, such a token, or room for another cut.
   */
  private shareCut(
    item: BucketItem,
    claim: ShareClaim | undefined,
    now: number,
    dueAt: number,
    before: number,
  ): { at: number; item: BucketItem } | undefined {
    const kit = this.sharesKit;
    if (!kit || !claim?.jobId) return undefined;
    const takes = kit.ledger.ledgerCuttable(item.ledger, claim, kit.weights);
    if (!takes) return undefined;
    // From when its tenant is owed its next token: its takings spread at its share's pace.
    const from = kit.ledger.ledgerCutFrom(item.ledger, claim, kit.weights, now, item.state.rate);
    // At most `shareCutAheadMs` ahead (share-cut.ts): the leader's lead, not its far line.
    const until = Math.min(before, now + kit.ledger.shareCutAheadMs);
    const at = chooseCut(item.lane, now, Math.max(dueAt, from), until, { limit: maxShareCuts, takes });
    if (at === undefined) return undefined;
    const refunded = kit.ledger.ledgerRefunded(item.ledger, kit.weights, at);
    return {
      at,
      item: {
        state: item.state,
        lane: laneCut(item.lane, at, claim.jobId),
        ledger: this.charged(refunded, claim, now, at),
      },
    };
  }

  /**
   * A `high` job's call (`by`) takes over a token reserved ahead (dynamodb-rate-lane.ts
   * `chooseCut`: from a moment ahead, not before the call is due at `options.at`, and before the
   * line's next free token), in one conditional write; undefined when the line has a token as soon
   * (or none reserved to take), and nothing is written then.
   */
  async cutIn(
    bucket: string,
    now: number,
    by: string,
    options?: { at?: number; share?: ShareClaim | undefined },
  ): Promise<number | undefined> {
    let cutAt: number | undefined;
    const claim = this.claimOf(options?.share);
    const written = await this.update(bucket, now, ({ state, lane, ledger }) => {
      const peek = take(state, this.config, now).decision;
      if (peek.granted) return undefined;
      // A call due after the line's end finds a token free when it comes (or books one then).
      const dueAt = options?.at ?? now;
      cutAt = chooseCut(lane, now, dueAt, Math.max(peek.retryAtMs, dueAt));
      if (cutAt === undefined) return undefined;
      // The token's holder is given back its charge (it takes, and is charged, a new one); the
      // cut-in's tenant and batch are charged for it.
      const kit = this.sharesKit;
      const refunded = kit ? kit.ledger.ledgerRefunded(ledger, kit.weights, cutAt) : ledger;
      const asked = this.asks(refunded, claim, now)?.ledger ?? refunded;
      return {
        state,
        lane: laneCut(lane, cutAt, by),
        ledger: this.charged(asked, claim, now, cutAt),
        grant: encodeGrant('c', by, Math.max(now, dueAt), cutAt),
      };
    });
    return written === 'written' ? cutAt : undefined;
  }

  /**
   * How calls of the key's tenants are owed its next tokens (`RateLimiter.shareOrder`): one
   * consistent read of the bucket item, nothing written; its ledger (parsed with zod: one that does
   * not parse is empty) ordered by dynamodb-share-ledger.ts `ledgerOrder`. Undefined when shares
   * are off or the ledger holds fewer than two tenants.
   */
  async shareOrder(
    bucket: string,
    now: number,
  ): Promise<((tenants: readonly string[]) => number[]) | undefined> {
    if (!this.keepsShares) return undefined;
    // The read loads the ledger's module (`loadShares`).
    const { ledger } = await this.read(rateBucketKey(bucket), now);
    const kit = this.sharesKit;
    if (!kit || Object.keys(ledger.flows).filter((flow) => flow.startsWith('t:')).length < 2)
      return undefined;
    return (tenants) => kit.ledger.ledgerOrder(ledger, kit.weights, tenants);
  }

  /**
   * Whether the token reserved for `at` is still `by`'s: one consistent read of the bucket's item,
   * false when a priority call took it over (the holder then takes a new one).
   */
  async stillHeld(bucket: string, at: number, by: string): Promise<boolean> {
    const stored = await this.read(rateBucketKey(bucket), at);
    return laneHolds(stored.lane, at, by);
  }

  /**
   * The bucket now, without taking anything: one consistent read, no write. Tokens below zero are
   * reserved ahead (the key's line reaches past now).
   */
  async budget(bucket: string, now: number): Promise<{ tokens: number; ratePerSecond: number }> {
    const stored = await this.read(rateBucketKey(bucket), now);
    return bucketBudget(stored.state, this.config, now);
  }

  /** Whether this worker was refused a token of the bucket in the last two seconds. */
  async saturated(bucket: string, now: number): Promise<boolean> {
    return now - (this.refusedAt.get(bucket) ?? Number.NEGATIVE_INFINITY) < 2_000;
  }

  async throttled(bucket: string, now: number): Promise<void> {
    await this.update(bucket, now, ({ state, lane, ledger }) => ({
      state: throttled(state, this.config, now),
      lane,
      ledger,
    }));
  }

  async succeeded(bucket: string, now: number): Promise<void> {
    if ((this.lastRate.get(bucket) ?? this.config.ceiling) >= this.config.ceiling) return;
    await this.update(bucket, now, ({ state, lane, ledger }) =>
      state.rate >= this.config.ceiling
        ? undefined
        : { state: succeeded(state, this.config, now), lane, ledger },
    );
  }

  /**
   * Read the bucket, let `change` compute the next state (undefined: nothing to write), and write
   * it if nobody else wrote in between; otherwise start over, at most `maxContention` times.
   */
  private async update(
    bucket: string,
    now: number,
    change: (item: BucketItem) => BucketItem | undefined,
  ): Promise<'written' | 'unchanged' | 'contended'> {
    const key = rateBucketKey(bucket);
    for (let round = 0; round < this.maxContention; round++) {
      const stored = await this.read(key, now);
      this.lastRate.set(bucket, stored.state.rate);
      const lane = pruneLane(stored.lane, now);
      const changed = change({
        state: stored.state,
        lane,
        ledger: this.sharesKit?.ledger.ledgerPruned(stored.ledger, lane.reserved) ?? stored.ledger,
      });
      if (!changed) return 'unchanged';
      const next = changed.state;
      try {
        await this.client.send(
          new PutCommand({
            TableName: this.tableName,
            Item: {
              ...key,
              tokens: next.tokens,
              rate: next.rate,
              updatedAt: next.updatedAt,
              ...(next.decreasedAt !== undefined ? { decreasedAt: next.decreasedAt } : {}),
              ...(next.knownLimit !== undefined ? { knownLimit: next.knownLimit } : {}),
              ...(next.lastTokenAt !== undefined ? { lastTokenAt: next.lastTokenAt } : {}),
              ...(next.booked !== undefined && next.booked.length > 0 ? { booked: next.booked } : {}),
              ...(next.windowStart !== undefined
                ? {
                    windowStart: next.windowStart,
                    windowOk: next.windowOk ?? 0,
                    lastWindowOk: next.lastWindowOk ?? 0,
                    windowThrottled: next.windowThrottled ?? 0,
                    lastWindowThrottled: next.lastWindowThrottled ?? 0,
                  }
                : {}),
              ...encodeLane(changed.lane),
              ...this.encodeShares(changed, now),
              grant: changed.grant,
              seq: (stored.seq ?? 0) + 1,
              expiresAt: Math.floor(next.updatedAt / 1000) + this.idleSeconds,
            },
            ...(stored.seq === undefined
              ? { ConditionExpression: 'attribute_not_exists(seq)' }
              : { ConditionExpression: 'seq = :seq', ExpressionAttributeValues: { ':seq': stored.seq } }),
          }),
        );
        this.lastRate.set(bucket, next.rate);
        return 'written';
      } catch (error) {
        const lost =
          error instanceof ConditionalCheckFailedException ||
          (error as { name?: string }).name === 'ConditionalCheckFailedException';
        if (!lost) throw error;
      }
    }
    return 'contended';
  }

  /** The item's `shares` attribute: the ledger, its owners in the lane's order (none kept: none). */
  private encodeShares(item: BucketItem, now: number): { shares?: string } {
    if (!this.sharesKit) return {};
    const shares = this.sharesKit.ledger.encodeLedger(item.ledger, item.lane.reserved, now);
    return shares === undefined ? {} : { shares };
  }

  private async read(key: { PK: string; SK: string }, now: number): Promise<StoredBucket> {
    await this.loadShares();
    const answer = await this.client.send(
      new GetCommand({ TableName: this.tableName, Key: key, ConsistentRead: true }),
    );
    const item = answer.Item;
    if (
      !item ||
      typeof item.seq !== 'number' ||
      typeof item.tokens !== 'number' ||
      typeof item.rate !== 'number' ||
      typeof item.updatedAt !== 'number'
    ) {
      // No bucket yet (or an unreadable one, which the conditional write then replaces): a full one.
      return {
        state: initialBucket(this.config, now),
        lane: emptyLane(),
        ledger: noLedger(),
        seq: typeof item?.seq === 'number' ? item.seq : undefined,
      };
    }
    const lane = decodeLane(item.lane, item.cuts, item.cutl);
    return {
      state: {
        tokens: item.tokens,
        rate: item.rate,
        updatedAt: item.updatedAt,
        decreasedAt: typeof item.decreasedAt === 'number' ? item.decreasedAt : undefined,
        knownLimit: typeof item.knownLimit === 'number' ? item.knownLimit : undefined,
        lastTokenAt: typeof item.lastTokenAt === 'number' ? item.lastTokenAt : undefined,
        booked: bookedOf(item.booked),
        windowStart: typeof item.windowStart === 'number' ? item.windowStart : undefined,
        windowOk: typeof item.windowOk === 'number' ? item.windowOk : undefined,
        lastWindowOk: typeof item.lastWindowOk === 'number' ? item.lastWindowOk : undefined,
        windowThrottled: typeof item.windowThrottled === 'number' ? item.windowThrottled : undefined,
        lastWindowThrottled:
          typeof item.lastWindowThrottled === 'number' ? item.lastWindowThrottled : undefined,
      },
      lane,
      ledger: this.sharesKit
        ? this.sharesKit.ledger.decodeLedger(item.shares, lane.reserved, this.sharesKit.weights, now)
        : noLedger(),
      seq: item.seq,
    };
  }
}

/** The ledger's module (a chunk of its own) and the tenants' weights. */
interface SharesKit {
  ledger: typeof import('./dynamodb-share-ledger');
  weights: ShareWeights;
}

/** No ledger (fair shares off, or none stored). */
function noLedger(): ShareLedger {
  return { flows: {}, owners: new Map() };
}

/** The booked token times of a bucket item (a list of numbers), ascending; undefined for none. */
function bookedOf(value: unknown): number[] | undefined {
  if (!Array.isArray(value)) return undefined;
  const times = value.filter((time): time is number => typeof time === 'number' && Number.isFinite(time));
  return times.length > 0 ? times.sort((a, b) => a - b) : undefined;
}
