/**
 * The `grant` attribute of the aws key bucket's writes (dynamodb-rate-limiter.ts `encodeGrant`),
 * read back from the table's stream (dynamodb-rate-grants.ts).
 */
import { describe, expect, it } from 'vitest';
import { decodeGrant, grantsOfStream } from '../../../../shared/backends/aws/dynamodb-rate-grants';
import { encodeGrant } from '../../../../shared/backends/aws/dynamodb-rate-limiter';

const T0 = 1_750_000_000_000;

describe('the grant attribute', () => {
  it('names its fields and version, and reads back what it wrote', () => {
    const text = encodeGrant('c', 'a-high-job-id-0123456789abcdef', T0 + 20, T0 + 400);
    expect(text).toMatch(/^v=2 k=c a=[0-9a-z]+ t=[0-9a-z]+ j=a-high-job-id-0123456789abcdef$/);
    expect(text.length).toBeLessThan(64);
    expect(decodeGrant(text)).toEqual({
      kind: 'cut-in',
      by: 'a-high-job-id-0123456789abcdef',
      askedAt: T0 + 20,
      tokenAt: T0 + 400,
    });
    // A booking asked when it is due, after its token was set: the token's offset is negative.
    expect(decodeGrant(encodeGrant('r', 'job', T0 + 5_000, T0 + 4_800))).toEqual({
      kind: 'reserved',
      by: 'job',
      askedAt: T0 + 5_000,
      tokenAt: T0 + 4_800,
    });
    expect(decodeGrant(encodeGrant('g', undefined, T0, T0))).toEqual({
      kind: 'granted',
      askedAt: T0,
      tokenAt: T0,
    });
  });

  it('still reads an item written in the positional form before the version', () => {
    // As a deployment of main on 28 November wrote it (and its stream keeps for 24 hours).
    const old = `c ${(T0 + 20).toString(36)} ${(380).toString(36)} a-job`;
    expect(decodeGrant(old)).toEqual({ kind: 'cut-in', by: 'a-job', askedAt: T0 + 20, tokenAt: T0 + 400 });
    expect(decodeGrant(`g ${T0.toString(36)} 0 `)).toEqual({ kind: 'granted', askedAt: T0, tokenAt: T0 });
    const stream = [old, encodeGrant('r', 'b-job', T0 + 30, T0 + 600)].map((grant, i) => ({
      dynamodb: { NewImage: { PK: { S: 'RATE#k' }, seq: { N: String(i + 1) }, grant: { S: grant } } },
    }));
    expect(
      grantsOfStream(stream)
        .get('RATE#k')
        ?.map((grant) => grant.by),
    ).toEqual(['a-job', 'b-job']);
  });

  it('reads nothing from what is not a grant: a later version, a field missing or malformed', () => {
    for (const text of [
      `v=3 k=g a=${T0.toString(36)} t=0`,
      `v=2 k=g t=0 j=job`,
      `v=2 k=x a=${T0.toString(36)} t=0`,
      `v=2 k=g a=${T0.toString(36)} t=0.5`,
      `v=2 k=g a=-${T0.toString(36)} t=0`,
      'granted',
      '',
    ])
      expect(decodeGrant(text), text).toBeUndefined();
    expect(decodeGrant(42)).toBeUndefined();
    // Fields a later version adds beside v=2's are ignored.
    expect(decodeGrant(`v=2 k=g a=${T0.toString(36)} t=0 j=job x=1`)).toEqual({
      kind: 'granted',
      by: 'job',
      askedAt: T0,
      tokenAt: T0,
    });
  });
});
