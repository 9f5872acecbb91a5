/**
 * Signed, expiring tokens: the one way opflow makes and checks a bearer token it hands out (the
 * reviewers' confirmation links, the live feed's short-lived tokens). A token is
 * `<payload>.<mac>`, both base64url; the payload is JSON `{v: 1, aud, exp, c}`:
 *
 * - `aud`, the token's scope (`review`, `events`): a token made for one use is refused by another,
 *   even when both are signed with the same key;
 * - `exp`, its expiry in epoch milliseconds;
 * - `c`, the claims of its use, validated with that use's zod schema once the MAC holds.
 *
 * The MAC is HMAC-SHA-256 of the payload's text. It is compared in constant time as encoded text,
 * not as decoded bytes: base64url's last character carries two unused bits, and a token whose last
 * character differs only in those would decode to the same bytes and pass. Nothing here logs a
 * token, and no error message contains one.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import * as z from 'zod';

/** Why a token was refused. */
export type SignedTokenProblem = 'malformed' | 'tampered' | 'expired' | 'scope';

/** A token that cannot be used, with why; the message never contains the token. */
export class SignedTokenError extends Error {
  override readonly name = 'SignedTokenError';
  constructor(
    readonly problem: SignedTokenProblem,
    message: string,
    /** An expired token's claims and expiry (its MAC held), so the refusal can say which and when. */
    readonly expired?: VerifiedToken<unknown> | undefined,
  ) {
    super(message);
  }
}

/** The most characters a token's payload may have (well above any real one): longer is refused unread. */
const maxPayloadLength = 1500;

/** The shortest key accepted: HMAC-SHA-256 gains nothing from more than 32 bytes, and 16 is a floor. */
const minKeyBytes = 16;

/** A SHA-256 MAC in base64url: 43 characters. */
const tokenPattern = new RegExp(`^([A-Za-z0-9_-]{1,${maxPayloadLength}})\\.([A-Za-z0-9_-]{43})$`);

const envelopeSchema = z.strictObject({
  v: z.literal(1),
  aud: z.string().min(1).max(64),
  exp: z.number().int().positive(),
  c: z.unknown(),
});

function mac(key: Uint8Array, payload: string): string {
  if (key.byteLength < minKeyBytes)
    throw new Error(`a token signing key must be at least ${minKeyBytes} bytes`);
  return createHmac('sha256', key).update(payload).digest('base64url');
}

/** A token of `scope` carrying `claims`, valid until `expiresAt` (epoch ms), signed with `key`. */
export function signToken(
  scope: string,
  claims: unknown,
  options: { key: Uint8Array; expiresAt: number },
): string {
  const payload = Buffer.from(
    JSON.stringify({ v: 1, aud: scope, exp: Math.floor(options.expiresAt), c: claims }),
  ).toString('base64url');
  return `${payload}.${mac(options.key, payload)}`;
}

/** What a valid token carries. */
export interface VerifiedToken<C> {
  claims: C;
  /** Epoch milliseconds. */
  expiresAt: number;
}

/**
 * The claims of a token of `scope` signed with `key` and unexpired at `now`, parsed with `claims`.
 * Throws a SignedTokenError: `malformed` (not a token, or claims the schema refuses), `tampered`
 * (another key, or a changed payload or MAC), `scope` (a token of another use), `expired`.
 */
export function verifyToken<S extends z.ZodType>(
  token: string,
  options: { scope: string; key: Uint8Array; claims: S; now: number },
): VerifiedToken<z.infer<S>> {
  const match = token.length <= maxPayloadLength + 44 ? tokenPattern.exec(token) : null;
  if (!match) throw new SignedTokenError('malformed', 'the token is incomplete or damaged');
  const [, payload, given] = match as unknown as [string, string, string];
  const expected = Buffer.from(mac(options.key, payload));
  if (!timingSafeEqual(Buffer.from(given), expected))
    throw new SignedTokenError('tampered', 'the token was changed, or it was not signed with this key');
  let envelope: z.infer<typeof envelopeSchema>;
  try {
    envelope = envelopeSchema.parse(JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')));
  } catch {
    throw new SignedTokenError('malformed', 'the token is incomplete or damaged');
  }
  if (envelope.aud !== options.scope)
    throw new SignedTokenError('scope', `the token is for "${envelope.aud}", not "${options.scope}"`);
  const claims = options.claims.safeParse(envelope.c);
  if (!claims.success) throw new SignedTokenError('malformed', 'the token is incomplete or damaged');
  if (envelope.exp <= options.now)
    throw new SignedTokenError('expired', `the token expired at ${new Date(envelope.exp).toISOString()}`, {
      claims: claims.data,
      expiresAt: envelope.exp,
    });
  return { claims: claims.data, expiresAt: envelope.exp };
}
