/**
 * The short-lived tokens of the live feed. A browser's EventSource cannot send an Authorization
 * header, so a caller first asks `POST /events/token` with its normal credentials and opens
 * `GET /events?token=…` with the answer: an HMAC-SHA256 signed claim of an expiry (five minutes by
 * default) and the caller's tenant scope, made and checked by ./signed-token.ts. The API key or the server's own token never travels in a
 * URL, and a token seen in a proxy's log is useless minutes later. Tokens are never logged.
 */
import { randomBytes } from 'node:crypto';
import * as z from 'zod';
import { SignedTokenError, signToken, verifyToken } from './signed-token';

/** How long a feed token is accepted by default. */
export const defaultEventsTokenTtlMs = 5 * 60 * 1000;

/** The scope (`aud`) of a feed token: a review link, signed with the same key, is refused here. */
const eventsScope = 'events';

const claimsSchema = z.strictObject({
  /** The tenant the holder may read; absent: every tenant (an operator's token). */
  tenant: z.string().min(1).max(200).optional(),
  /** Makes two tokens of the same claims differ. */
  n: z.string().min(1).max(64),
});

export type EventsTokenClaims = z.infer<typeof claimsSchema> & {
  /** Expiry, epoch milliseconds. */
  exp: number;
};

/** Why a token was refused (the message says it to the caller; never the token itself). */
export class EventsTokenError extends Error {
  override readonly name = 'EventsTokenError';
  constructor(
    readonly reason: 'malformed' | 'signature' | 'expired',
    message: string,
  ) {
    super(message);
  }
}

export interface EventsTokens {
  /** A token for `tenant` (undefined: every tenant) valid for the TTL from `now`. */
  issue(scope: { tenant?: string | undefined }, now: number): { token: string; expiresAt: number };
  /** The claims of a valid token; throws EventsTokenError when it is malformed, forged or expired. */
  verify(token: string, now: number): EventsTokenClaims;
}

/** A signed-token refusal in the feed's words. */
function feedRefusal(error: SignedTokenError): EventsTokenError {
  if (error.problem === 'expired')
    return new EventsTokenError(
      'expired',
      'the events token has expired: ask POST /events/token for a new one',
    );
  if (error.problem === 'malformed')
    return new EventsTokenError('malformed', 'the events token is not one this server issues');
  return new EventsTokenError('signature', 'the events token is not signed by this server');
}

/**
 * Tokens signed with `secret` (at least 32 bytes; a random one per process when omitted, so tokens
 * die with the server that issued them).
 */
export function createEventsTokens(
  options: { secret?: Uint8Array | undefined; ttlMs?: number | undefined } = {},
): EventsTokens {
  const key = options.secret ?? randomBytes(32);
  if (key.byteLength < 32) throw new Error('the events token secret must be at least 32 bytes');
  const ttlMs = options.ttlMs ?? defaultEventsTokenTtlMs;
  return {
    issue(scope, now) {
      const expiresAt = now + ttlMs;
      const claims = {
        ...(scope.tenant === undefined ? {} : { tenant: scope.tenant }),
        n: randomBytes(9).toString('base64url'),
      };
      return { token: signToken(eventsScope, claims, { key, expiresAt }), expiresAt };
    },
    verify(token, now) {
      try {
        const verified = verifyToken(token, { scope: eventsScope, key, claims: claimsSchema, now });
        return { ...verified.claims, exp: verified.expiresAt };
      } catch (error) {
        throw error instanceof SignedTokenError ? feedRefusal(error) : error;
      }
    },
  };
}
