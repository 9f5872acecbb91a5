import { describe, expect, it } from 'vitest';
import {
  minimumSecretBytes,
  parseSigningSecret,
  SigningSecretError,
  signingSecretProblems,
} from '../../../shared/config/signing-secrets';

const whsec = (bytes: number) => `whsec_${Buffer.alloc(bytes, 7).toString('base64')}`;

describe('signing secrets', () => {
  it.each([
    ['a whsec_ key of 24 bytes', whsec(24)],
    ['a whsec_ key of 64 bytes', whsec(64)],
    ['plain text of 24 bytes', 'x'.repeat(24)],
    ['plain text with spaces around', `  ${'y'.repeat(32)}  `],
  ])('takes %s', (_name, value) => {
    expect(parseSigningSecret(value, 'V')).toMatch(/^whsec_[A-Za-z0-9+/]+={0,2}$/);
  });

  it.each([
    ['three bytes', 'abc', /V is too short: 3 bytes; a key needs at least 24 bytes/],
    [
      'a whsec_ key of 23 bytes',
      whsec(23),
      /V is too short: its key has 23 bytes; a key needs at least 24 bytes/,
    ],
    [
      'whsec_ and not base64',
      'whsec_***not base64***',
      /V is not a usable signing secret: after "whsec_" it must be base64/,
    ],
    ['whsec_ and base64 cut short', whsec(30).slice(0, -1), /must be base64/],
    ['whsec_ and nothing', 'whsec_', /too short/],
  ])('refuses %s, naming the variable and the rule but never the value', (_name, value, message) => {
    let thrown: unknown;
    try {
      parseSigningSecret(value, 'V');
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(SigningSecretError);
    expect((thrown as Error).message).toMatch(message);
    if (value.length > 6) expect((thrown as Error).message).not.toContain(value);
  });

  it('checks every secret variable of an environment, and only those', () => {
    expect(
      signingSecretProblems({
        OPFLOW_CALLBACK_SECRET: 'abc',
        OPFLOW_CALLBACK_SECRET_ACME: whsec(32),
        OPFLOW_WEBHOOK_SECRET_TRACKER: 'whsec_!',
        OPFLOW_CALLBACK_SECRET_PREFIX: 'opflow/callback/',
        OPFLOW_WEBHOOK_SECRET_EMPTY: '',
        OPFLOW_SERVE_TOKEN: 'short',
      }),
    ).toEqual([
      expect.stringContaining('OPFLOW_CALLBACK_SECRET is too short'),
      expect.stringContaining('OPFLOW_WEBHOOK_SECRET_TRACKER is not a usable'),
    ]);
    expect(minimumSecretBytes).toBe(24);
  });
});
