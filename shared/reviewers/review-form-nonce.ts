/**
 * The confirmation form's nonce, checked on every POST in addition to the link's token: a request
 * answers only when it comes from the form this server just showed, in the browser it showed it to.
 *
 * Each GET of the page sets a fresh random nonce in a cookie (`HttpOnly`, `SameSite=Strict`, its name
 * derived from the link, so two links open in two tabs keep their own) and puts a signed form token
 * in a hidden field: scope `review-form`, the link's digest and the nonce's digest, valid for
 * `formLifetimeMs`. A POST must carry both, and they must match. A page of another site cannot make
 * a browser send a Strict cookie, nor read the hidden field, so a leaked or guessed link is not enough
 * to answer from elsewhere; a scanner that replays the link's POST without the page is refused too.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import * as z from 'zod';
import { SignedTokenError, signToken, verifyToken } from '../http/signed-token';

/** The hidden field that carries the form token. */
export const formFieldName = 'form';

/** How long a shown form can be sent: 2 hours (a reviewer may read the details first). */
export const formLifetimeMs = 2 * 60 * 60 * 1000;

const formScope = 'review-form';

const claimsSchema = z.strictObject({ l: z.string().length(22), n: z.string().length(22) });

/** A short digest (22 base64url characters, 132 bits) of `text`. */
const digest = (text: string) => createHash('sha256').update(text).digest('base64url').slice(0, 22);

/** The cookie of the link `linkToken`: its own name, so each link's form has its nonce. */
export const nonceCookieName = (linkToken: string) =>
  `opflow-review-${digest(`cookie:${linkToken}`).slice(0, 12)}`;

/** What a GET of the page hands out: the hidden field's value and the `Set-Cookie` header. */
export interface IssuedForm {
  field: string;
  setCookie: string;
}

/**
 * A new nonce for the form of `linkToken`: its form token, signed with `key`, and its cookie.
 * `secure` (the page is served over https) adds `Secure`. The cookie has no `Path`, so it belongs to
 * the folder of the page's address (`/review`, under any stage prefix).
 */
export function issueFormNonce(
  linkToken: string,
  key: Buffer,
  now: number,
  options: { secure: boolean; nonce?: string | undefined },
): IssuedForm {
  const nonce = options.nonce ?? randomBytes(24).toString('base64url');
  const field = signToken(
    formScope,
    { l: digest(linkToken), n: digest(nonce) },
    { key, expiresAt: now + formLifetimeMs },
  );
  const attributes = [
    `${nonceCookieName(linkToken)}=${nonce}`,
    `Max-Age=${formLifetimeMs / 1000}`,
    'HttpOnly',
    'SameSite=Strict',
    ...(options.secure ? ['Secure'] : []),
  ];
  return { field, setCookie: attributes.join('; ') };
}

/** The value of cookie `name` in a `Cookie` header (`a=1; b=2`), if any. */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(/;\s*|,\s*/)) {
    const at = part.indexOf('=');
    if (at > 0 && part.slice(0, at).trim() === name) return part.slice(at + 1).trim();
  }
  return undefined;
}

/** Why a POST's form is refused. */
export type FormNonceProblem = 'missing' | 'expired' | 'mismatch';

/**
 * Whether a POST to the link `linkToken` carries the form this server showed (`field`, the hidden
 * field) with the nonce of its cookie (`cookieHeader`); undefined when it does, else why not.
 */
export function checkFormNonce(
  linkToken: string,
  key: Buffer,
  now: number,
  field: string | null | undefined,
  cookieHeader: string | undefined,
): FormNonceProblem | undefined {
  const nonce = cookieValue(cookieHeader, nonceCookieName(linkToken));
  if (!field || !nonce) return 'missing';
  let claims: z.infer<typeof claimsSchema>;
  try {
    ({ claims } = verifyToken(field, { scope: formScope, key, claims: claimsSchema, now }));
  } catch (error) {
    if (!(error instanceof SignedTokenError)) throw error;
    return error.problem === 'expired' ? 'expired' : 'mismatch';
  }
  const same = (a: string, b: string) => timingSafeEqual(Buffer.from(a), Buffer.from(b));
  return same(claims.l, digest(linkToken)) && same(claims.n, digest(nonce)) ? undefined : 'mismatch';
}
