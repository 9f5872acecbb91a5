import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { type SignedTokenProblem, signToken, verifyToken } from '../../../shared/http/signed-token';

const key = Buffer.from('a-token-key-of-at-least-sixteen-bytes');
const claims = z.strictObject({ job: z.string(), tenant: z.string().optional() });
const t0 = 1_750_000_000_000;
const sign = (scope = 'review', body: unknown = { job: '01J0' }, expiresAt = t0 + 60_000) =>
  signToken(scope, body, { key, expiresAt });
const verify = (token: string, options: { scope?: string; now?: number; key?: Buffer } = {}) =>
  verifyToken(token, { scope: 'review', claims, key, now: t0, ...options });

function problemOf(run: () => unknown): SignedTokenProblem | 'accepted' {
  try {
    run();
  } catch (error) {
    if (error instanceof Error && 'problem' in error) return error.problem as SignedTokenProblem;
    throw error;
  }
  return 'accepted';
}

const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

describe('signed tokens', () => {
  it('gives back the claims and the expiry of its own token, until the expiry', () => {
    const token = sign();
    expect(verify(token)).toEqual({ claims: { job: '01J0' }, expiresAt: t0 + 60_000 });
    expect(verify(token, { now: t0 + 59_999 }).claims.job).toBe('01J0');
    expect(problemOf(() => verify(token, { now: t0 + 60_000 }))).toBe('expired');
    expect(() => verify(token, { now: t0 + 60_000 })).toThrow(
      'the token expired at 2025-06-15T15:07:40.000Z',
    );
  });

  it('refuses a token of another scope signed with the same key', () => {
    expect(problemOf(() => verify(sign('events')))).toBe('scope');
    expect(() => verify(sign('events'))).toThrow('the token is for "events", not "review"');
  });

  it('refuses a changed payload, a changed MAC, another key, and a MAC written another way', () => {
    const [payload, mac] = sign().split('.') as [string, string];
    const later = sign('review', { job: '01J0' }, t0 + 86_400_000).split('.')[0]!;
    expect(problemOf(() => verify(`${later}.${mac}`))).toBe('tampered');
    const otherJob = sign('review', { job: '01J1' }).split('.')[0]!;
    expect(problemOf(() => verify(`${otherJob}.${mac}`))).toBe('tampered');
    expect(problemOf(() => verify(`${payload}.${mac.slice(0, -2)}AA`))).toBe('tampered');
    expect(problemOf(() => verify(sign(), { key: Buffer.from('another-key-of-sixteen-bytes') }))).toBe(
      'tampered',
    );
    // A 32-byte MAC's last base64url character has two unused bits: flipping one leaves the bytes.
    const twin = `${mac.slice(0, -1)}${alphabet[alphabet.indexOf(mac.at(-1)!) ^ 1]}`;
    expect(Buffer.from(twin, 'base64url')).toEqual(Buffer.from(mac, 'base64url'));
    expect(problemOf(() => verify(`${payload}.${twin}`))).toBe('tampered');
  });

  it('refuses what is not a token, a payload too long, and claims its schema refuses', () => {
    for (const bad of ['', 'abc', 'a.b', `${'x'.repeat(1501)}.${'y'.repeat(43)}`, `${sign()}.x`])
      expect(problemOf(() => verify(bad))).toBe('malformed');
    expect(problemOf(() => verify(sign('review', { job: 7 })))).toBe('malformed');
    expect(problemOf(() => verify(sign('review', { job: '01J0', extra: true })))).toBe('malformed');
    const notJson = Buffer.from('{"v":1,').toString('base64url');
    const signedNotJson = `${notJson}.${createHmac('sha256', key).update(notJson).digest('base64url')}`;
    expect(problemOf(() => verify(signedNotJson))).toBe('malformed');
  });

  it('refuses to sign or check with a key shorter than 16 bytes', () => {
    expect(() => signToken('review', {}, { key: Buffer.alloc(8), expiresAt: t0 })).toThrow(
      /at least 16 bytes/,
    );
  });
});
