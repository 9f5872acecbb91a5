/**
 * The grant log of the aws backend, without a write of its own: every write of a key's bucket item
 * that gives a token carries that grant in a small attribute (`grant`: who, when its call asked, the
 * token's time, and how it was given: `name=value` fields, versioned), replaced by the next write and absent from a write that gives
 * none. The item's `seq` (the write's condition, one more each write) is the grant order, and the job
 * table's stream (NEW_AND_OLD_IMAGES, kept 24 hours) holds every version of the item: read back
 * from it (`grantsOfStream`), the versions are the key's grant log, as the SQLite limiter's
 * `rate_grants` is locally, so a priority job's wait is counted in tokens (`tokensWaited`). The cost
 * is the attribute's bytes in each such write (under 64 bytes; a write unit is a KB of the item), and no
 * request more: the stream's records are there anyway. Read only by tests and benches: the
 * functions' bundles hold only the writer (`encodeGrant`, dynamodb-rate-limiter.ts).
 */
import * as z from 'zod';
import type { TokenGrant } from '../../engine/admission/priority-lane';
import type { ItemGrant } from './dynamodb-rate-limiter';

const kindOfCode: Record<string, ItemGrant['kind']> = { g: 'granted', r: 'reserved', c: 'cut-in' };

const base36 = (signed: boolean) =>
  z
    .string()
    .regex(signed ? /^-?[0-9a-z]{1,12}$/ : /^[0-9a-z]{1,12}$/)
    .transform((text) => Number.parseInt(text, 36));

/** The fields of a `grant` of version 2 (`encodeGrant`); fields a later version adds are ignored. */
const grantSchema = z.object({
  v: z.literal('2'),
  k: z.enum(['g', 'r', 'c']),
  a: base36(false),
  t: base36(true),
  j: z.string().regex(/^\S+$/).optional(),
});

/**
 * The positional form written before the version (`<kind> <ask> <token after ask> <job>`), on
 * 28 November 2026, unreleased: a deployment of main that day may hold such items (and their
 * stream records, 24 hours), so they are still read.
 */
const positionalGrant = /^([grc]) ([0-9a-z]{1,12}) (-?[0-9a-z]{1,12}) ?(\S*)$/;

/**
 * The grant of an item's `grant` attribute (written by `encodeGrant`, dynamodb-rate-limiter.ts, or
 * in the positional form before it); undefined for anything else (an item's older shape, a later
 * version).
 */
export function decodeGrant(value: unknown): ItemGrant | undefined {
  if (typeof value !== 'string') return undefined;
  const old = positionalGrant.exec(value);
  if (old) return grantOf(old[1]!, Number.parseInt(old[2]!, 36), Number.parseInt(old[3]!, 36), old[4]);
  const fields = Object.fromEntries(
    value.split(' ').map((field) => {
      const at = field.indexOf('=');
      return at < 0 ? [field, ''] : [field.slice(0, at), field.slice(at + 1)];
    }),
  );
  const parsed = grantSchema.safeParse(fields);
  if (!parsed.success) return undefined;
  return grantOf(parsed.data.k, parsed.data.a, parsed.data.t, parsed.data.j);
}

function grantOf(
  kind: string,
  askedAt: number,
  after: number,
  by: string | undefined,
): ItemGrant | undefined {
  const named = kindOfCode[kind];
  if (!named || !Number.isSafeInteger(askedAt) || !Number.isSafeInteger(after)) return undefined;
  return { kind: named, askedAt, tokenAt: askedAt + after, ...(by ? { by } : {}) };
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
