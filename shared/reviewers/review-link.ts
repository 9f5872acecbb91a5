/**
 * The signed, expiring links of a notice. A link names one job's selection point, one recipient and
 * an expiry, signed with HMAC-SHA-256 under the reviewers' link key; it opens a confirmation page
 * (GET, which never answers: mail scanners follow links) whose form answers with a POST.
 *
 * A token is `<payload>.<signature>`, both base64url: the payload is JSON
 * `{v, j (job id), s (step), o (offered at), r (recipient), e (expiry, seconds)}`. The signature
 * is compared in constant time; a token that does not parse, is signed with another key, or is
 * past its expiry is refused with the reason, which the page says in words.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import * as z from 'zod';

export interface ReviewLinkClaims {
  jobId: string;
  step: string;
  offeredAt: number;
  /** Who the link was sent to: a mail address, or the name of the channel it was posted to. */
  recipient: string;
  /** Milliseconds since the epoch (kept at second precision). */
  expiresAt: number;
}

export type ReviewLinkProblem = 'malformed' | 'tampered' | 'expired';

/** A link that cannot be used, with why (`problem`); the message says it to a person. */
export class ReviewLinkError extends Error {
  override readonly name = 'ReviewLinkError';
  constructor(
    readonly problem: ReviewLinkProblem,
    message: string,
  ) {
    super(message);
  }
}

const payloadSchema = z.strictObject({
  v: z.literal(1),
  j: z.string().min(1).max(100),
  s: z.string().min(1).max(200),
  o: z.number().int(),
  r: z.string().min(1).max(320),
  e: z.number().int().positive(),
});

/** The most characters a token may have (well above any real one): longer is refused unread. */
const maxTokenLength = 2048;

function signature(key: Buffer, payload: string): Buffer {
  return createHmac('sha256', key).update(`opflow-review.${payload}`).digest();
}

/** The token of a link: its claims, signed with `key`. */
export function signReviewLink(claims: ReviewLinkClaims, key: Buffer): string {
  const payload = Buffer.from(
    JSON.stringify({
      v: 1,
      j: claims.jobId,
      s: claims.step,
      o: claims.offeredAt,
      r: claims.recipient,
      e: Math.floor(claims.expiresAt / 1000),
    }),
  ).toString('base64url');
  return `${payload}.${signature(key, payload).toString('base64url')}`;
}

/** The claims of a token signed with `key` and not expired at `now`; a ReviewLinkError otherwise. */
export function verifyReviewLink(token: string, key: Buffer, now: number): ReviewLinkClaims {
  const parts = token.length <= maxTokenLength ? token.split('.') : [];
  if (parts.length !== 2 || !/^[\w-]+$/.test(parts[0]!) || !/^[\w-]+$/.test(parts[1]!))
    throw new ReviewLinkError(
      'malformed',
      'This link is incomplete or damaged. Open it again from the message, whole.',
    );
  const [payload, signed] = parts as [string, string];
  // Compared as text, so a signature written another way (base64url's unused low bits of its last
  // character changed) is refused like any other change to the link.
  const expected = Buffer.from(signature(key, payload).toString('base64url'));
  const given = Buffer.from(signed);
  if (given.length !== expected.length || !timingSafeEqual(given, expected))
    throw new ReviewLinkError(
      'tampered',
      'This link is not valid: it was changed, or it was not made by this opflow.',
    );
  let parsed: z.ZodSafeParseResult<z.infer<typeof payloadSchema>>;
  try {
    parsed = payloadSchema.safeParse(JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')));
  } catch {
    throw new ReviewLinkError(
      'malformed',
      'This link is incomplete or damaged. Open it again from the message, whole.',
    );
  }
  if (!parsed.success)
    throw new ReviewLinkError(
      'malformed',
      'This link is incomplete or damaged. Open it again from the message, whole.',
    );
  const claims = parsed.data;
  if (claims.e * 1000 <= now)
    throw new ReviewLinkError(
      'expired',
      `This link expired on ${new Date(claims.e * 1000).toISOString()}. A reminder brings a new one; or answer with opflow resume ${claims.j}.`,
    );
  return {
    jobId: claims.j,
    step: claims.s,
    offeredAt: claims.o,
    recipient: claims.r,
    expiresAt: claims.e * 1000,
  };
}
