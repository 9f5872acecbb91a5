import { describe, expect, it } from 'vitest';
import { createEventsTokens, EventsTokenError } from '../../../shared/http/events-token';

const secret = new Uint8Array(32).fill(7);
const t0 = 1_750_000_000_000;

function refusal(run: () => unknown): EventsTokenError {
  try {
    run();
  } catch (error) {
    if (error instanceof EventsTokenError) return error;
    throw error;
  }
  throw new Error('the token was accepted');
}

describe('events tokens', () => {
  it('carries the tenant scope and expires five minutes after it was issued', () => {
    const tokens = createEventsTokens({ secret });
    const { token, expiresAt } = tokens.issue({ tenant: 'acme' }, t0);
    expect(expiresAt).toBe(t0 + 5 * 60 * 1000);
    expect(tokens.verify(token, t0 + 299_999)).toMatchObject({ tenant: 'acme', exp: expiresAt });
    expect(refusal(() => tokens.verify(token, t0 + 300_000)).reason).toBe('expired');
  });

  it('gives an operator a token for every tenant, and two tokens of the same scope differ', () => {
    const tokens = createEventsTokens({ secret });
    const first = tokens.issue({}, t0).token;
    expect(tokens.verify(first, t0).tenant).toBeUndefined();
    expect(tokens.issue({}, t0).token).not.toBe(first);
  });

  it('refuses a token whose claims were changed (another tenant, a later expiry)', () => {
    const tokens = createEventsTokens({ secret });
    const [, signature] = tokens.issue({ tenant: 'acme' }, t0).token.split('.');
    const claims = { v: 1, exp: t0 + 10 * 3600_000, tenant: 'other', n: 'x' };
    const forged = `${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${signature}`;
    expect(refusal(() => tokens.verify(forged, t0)).reason).toBe('signature');
  });

  it("refuses another server's token and anything that is not a token", () => {
    const ours = createEventsTokens({ secret });
    const theirs = createEventsTokens();
    expect(refusal(() => ours.verify(theirs.issue({}, t0).token, t0)).reason).toBe('signature');
    for (const bad of ['', 'abc', 'a.b', `${'x'.repeat(2000)}.${'y'.repeat(43)}`])
      expect(refusal(() => ours.verify(bad, t0)).reason).toBe('malformed');
  });

  it('refuses a secret too short to sign with', () => {
    expect(() => createEventsTokens({ secret: new Uint8Array(16) })).toThrow(/at least 32 bytes/);
  });
});
