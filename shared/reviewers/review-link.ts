/**
 * The signed, expiring links of a notice. A link names one job's selection point, one recipient and
 * an expiry, signed with HMAC-SHA-256 under the reviewers' link key; it opens a confirmation page
 * (GET, which never answers: mail scanners follow links) whose form answers with a POST.
 *
 * A token is a signed token of scope `review` (shared/http/signed-token.ts) whose claims are
 * `{j (job id), s (step), o (offered at), r (recipient)}`; its expiry is kept at second precision.
 * A token that does not parse, is signed with another key or for another use, or is past its
 * expiry is refused with the reason, which the page says in words.
 */
import * as z from 'zod';
import { SignedTokenError, signToken, verifyToken } from '../http/signed-token';

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

const reviewScope = 'review';

const claimsSchema = z.strictObject({
  j: z.string().min(1).max(100),
  s: z.string().min(1).max(200),
  o: z.number().int(),
  r: z.string().min(1).max(320),
});

/** The token of a link: its claims, signed with `key`. */
export function signReviewLink(claims: ReviewLinkClaims, key: Buffer): string {
  return signToken(
    reviewScope,
    { j: claims.jobId, s: claims.step, o: claims.offeredAt, r: claims.recipient },
    { key, expiresAt: Math.floor(claims.expiresAt / 1000) * 1000 },
  );
}

const damaged = 'This link is incomplete or damaged. Open it again from the message, whole.';

/** The claims of a token signed with `key` and not expired at `now`; a ReviewLinkError otherwise. */
export function verifyReviewLink(token: string, key: Buffer, now: number): ReviewLinkClaims {
  try {
    const { claims, expiresAt } = verifyToken(token, { scope: reviewScope, key, claims: claimsSchema, now });
    return { jobId: claims.j, step: claims.s, offeredAt: claims.o, recipient: claims.r, expiresAt };
  } catch (error) {
    if (!(error instanceof SignedTokenError)) throw error;
    if (error.problem === 'malformed') throw new ReviewLinkError('malformed', damaged);
    if (error.problem === 'expired' && error.expired) {
      const { claims, expiresAt } = error.expired as {
        claims: z.infer<typeof claimsSchema>;
        expiresAt: number;
      };
      throw new ReviewLinkError(
        'expired',
        `This link expired on ${new Date(expiresAt).toISOString()}. A reminder brings a new one; or answer with opflow resume ${claims.j}.`,
      );
    }
    throw new ReviewLinkError(
      'tampered',
      'This link is not valid: it was changed, or it was not made by this opflow.',
    );
  }
}
