import { describe, expect, it } from 'vitest';
import {
  checkFormNonce,
  cookieValue,
  formLifetimeMs,
  issueFormNonce,
  nonceCookieName,
} from '../../../shared/reviewers/review-form-nonce';

const key = Buffer.from('review-link-key-of-the-unit-test-0123456789');
const link = 'eyJ2IjoxfQ.abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG';
const now = Date.parse('2026-11-27T10:00:00Z');

/** The Cookie header a browser sends back after the page set `setCookie`. */
const cookieOf = (setCookie: string) => setCookie.split(';')[0]!;

describe('the confirmation form nonce', () => {
  it('sets an HttpOnly, SameSite=Strict cookie named after the link, Secure over https only', () => {
    const plain = issueFormNonce(link, key, now, { secure: false });
    expect(plain.setCookie).toMatch(
      new RegExp(`^${nonceCookieName(link)}=[\\w-]{32}; Max-Age=7200; HttpOnly; SameSite=Strict$`),
    );
    expect(issueFormNonce(link, key, now, { secure: true }).setCookie).toMatch(/; Secure$/);
    expect(nonceCookieName('another-link')).not.toBe(nonceCookieName(link));
  });

  it('takes the form it handed out, with its cookie, until it is 2 hours old', () => {
    const issued = issueFormNonce(link, key, now, { secure: false });
    const cookie = `other=1; ${cookieOf(issued.setCookie)}`;
    expect(checkFormNonce(link, key, now + 1000, issued.field, cookie)).toBeUndefined();
    expect(checkFormNonce(link, key, now + formLifetimeMs, issued.field, cookie)).toBe('expired');
  });

  it('refuses a POST without the field or the cookie, with another nonce, link or key', () => {
    const issued = issueFormNonce(link, key, now, { secure: false });
    const cookie = cookieOf(issued.setCookie);
    expect(checkFormNonce(link, key, now, undefined, cookie)).toBe('missing');
    expect(checkFormNonce(link, key, now, issued.field, undefined)).toBe('missing');
    expect(checkFormNonce(link, key, now, issued.field, `${nonceCookieName(link)}=guessed`)).toBe('mismatch');
    // Another page's form and cookie (another tab, another link) do not answer this link.
    const other = issueFormNonce('another-link', key, now, { secure: false });
    expect(checkFormNonce(link, key, now, other.field, cookie)).toBe('mismatch');
    expect(
      checkFormNonce(
        link,
        key,
        now,
        other.field,
        `${nonceCookieName(link)}=${cookieValue(other.setCookie, nonceCookieName('another-link'))}`,
      ),
    ).toBe('mismatch');
    const forged = issueFormNonce(link, Buffer.from('another-key-of-sixteen-bytes-or-more'), now, {
      secure: false,
      nonce: cookie.split('=')[1],
    });
    expect(checkFormNonce(link, key, now, forged.field, cookie)).toBe('mismatch');
    expect(checkFormNonce(link, key, now, 'not a token', cookie)).toBe('mismatch');
  });

  it('reads a cookie from a header of several', () => {
    expect(cookieValue('a=1; b=two=2;c=3', 'b')).toBe('two=2');
    expect(cookieValue('a=1', 'b')).toBeUndefined();
    expect(cookieValue(undefined, 'a')).toBeUndefined();
  });
});
