/**
 * The grant log of the aws backend, without a write of its own: every write of a key's bucket item
 * that gives a token carries that grant in a small attribute (`grant`: who, when its call asked, the
 * token's time, and how it was given), replaced by the next write and absent from a write that gives
 * none. The item's `seq` (the write's condition, one more each write) is the grant order, and the job
 * table's stream (NEW_AND_OLD_IMAGES, kept 24 hours) holds every version of the item: read back
 * from it (`grantsOfStream`), the versions are the key's grant log, as the SQLite limiter's
 * `rate_grants` is locally, so a priority job's wait is counted in tokens (`tokensWaited`). The cost
 * is the attribute's bytes in each such write (under 50 bytes; a write unit is a KB of the item), and no
 * request more: the stream's records are there anyway. Read only by tests and benches: the
 * functions' bundles hold only the writer (`encodeGrant`, dynamodb-rate-limiter.ts).
 */
import type { TokenGrant } from '../../engine/admission/priority-lane';
import type { ItemGrant } from './dynamodb-rate-limiter';

const kindOfCode: Record<string, ItemGrant['kind']> = { g: 'granted', r: 'reserved', c: 'cut-in' };

/**
 * The grant of an item's `grant` attribute (written by `encodeGrant`, dynamodb-rate-limiter.ts);
 * undefined for anything else (an item's older shape).
 */
export function decodeGrant(value: unknown): ItemGrant | undefined {
  if (typeof value !== 'string') return undefined;
  const match = /^([grc]) ([0-9a-z]+) (-?[0-9a-z]+) ?(\S*)$/.exec(value);
  if (!match) return undefined;
  const askedAt = Number.parseInt(match[2]!, 36);
  const after = Number.parseInt(match[3]!, 36);
  if (!Number.isFinite(askedAt) || !Number.isFinite(after)) return undefined;
  return {
    kind: kindOfCode[match[1]!]!,
    askedAt,
    tokenAt: askedAt + after,
    ...(match[4] ? { by: match[4] } : {}),
  };
}

/** A stream record as Lambda and DynamoDB Streams hand it (the part read here). */
export interface BucketStreamRecord {
  dynamodb?:
    | {
        NewImage?: Record<string, { S?: string | undefined; N?: string | undefined } | undefined> | undefined;
      }
    | undefined;
}

/**
 * The grant log of every key bucket whose writes `records` hold (the job table's stream, in any
 * order, repeats allowed), by the item's partition key (`RATE#<name>`), in grant order (`seq`).
 */
export function grantsOfStream(records: readonly BucketStreamRecord[]): Map<string, TokenGrant[]> {
  const bySeq = new Map<string, Map<number, TokenGrant>>();
  for (const record of records) {
    const image = record.dynamodb?.NewImage;
    const pk = image?.PK?.S;
    if (!image || pk === undefined || !pk.startsWith('RATE#')) continue;
    const grant = decodeGrant(image.grant?.S);
    const seq = Number(image.seq?.N);
    if (!grant || !Number.isInteger(seq)) continue;
    const grants = bySeq.get(pk) ?? new Map<number, TokenGrant>();
    grants.set(seq, { seq, ...grant });
    bySeq.set(pk, grants);
  }
  return new Map([...bySeq].map(([pk, grants]) => [pk, [...grants.values()].sort((a, b) => a.seq - b.seq)]));
}
