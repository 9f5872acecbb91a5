/**
 * The short-lived tokens of the live feed. A browser's EventSource cannot send an Authorization
 * header, so a caller first asks `POST /events/token` with its normal credentials and opens
 * `GET /events?token=…` with the answer: an HMAC-SHA256 signed claim of an expiry (five minutes by
 * default) and the caller's tenant scope. The API key or the server's own token never travels in a
 * URL, and a token seen in a proxy's log is useless minutes later. Tokens are never logged.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import * as z from 'zod';

/** How long a feed token is accepted by default. */
export const defaultEventsTokenTtlMs = 5 * 60 * 1000;

const claimsSchema = z.strictObject({
  /** Format version. */
  v: z.literal(1),
  /** Expiry, epoch milliseconds. */
  exp: z.number().int().positive(),
  /** The tenant the holder may read; absent: every tenant (an operator's token). */
  tenant: z.string().min(1).max(200).optional(),
  /** Makes two tokens of the same claims differ. */
  n: z.string().min(1).max(64),
});

export type EventsTokenClaims = z.infer<typeof claimsSchema>;

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

/**
 * Tokens signed with `secret` (at least 32 bytes; a random one per process when omitted, so tokens
 * die with the server that issued them).
 */
export function createEventsTokens(
  options: { secret?: Uint8Array | undefined; ttlMs?: number | undefined } = {},
): EventsTokens {
  const secret = options.secret ?? randomBytes(32);
  if (secret.byteLength < 32) throw new Error('the events token secret must be at least 32 bytes');
  const ttlMs = options.ttlMs ?? defaultEventsTokenTtlMs;
  const sign = (payload: string) => createHmac('sha256', secret).update(payload).digest();
  return {
    issue(scope, now) {
      const claims: EventsTokenClaims = {
        v: 1,
        exp: now + ttlMs,
        ...(scope.tenant === undefined ? {} : { tenant: scope.tenant }),
        n: randomBytes(9).toString('base64url'),
      };
      const payload = Buffer.from(JSON.stringify(claims)).toString('base64url');
      return { token: `${payload}.${sign(payload).toString('base64url')}`, expiresAt: claims.exp };
    },
    verify(token, now) {
      const match = /^([A-Za-z0-9_-]{1,1000})\.([A-Za-z0-9_-]{43})$/.exec(token);
      if (!match) throw new EventsTokenError('malformed', 'the events token is not one this server issues');
      const [, payload, signature] = match as unknown as [string, string, string];
      if (!timingSafeEqual(Buffer.from(signature, 'base64url'), sign(payload)))
        throw new EventsTokenError('signature', 'the events token is not signed by this server');
      let claims: EventsTokenClaims;
      try {
        claims = claimsSchema.parse(JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')));
      } catch {
        throw new EventsTokenError('malformed', 'the events token is not one this server issues');
      }
      if (claims.exp <= now)
        throw new EventsTokenError(
          'expired',
          'the events token has expired: ask POST /events/token for a new one',
        );
      return claims;
    },
  };
}
