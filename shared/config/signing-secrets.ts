/**
 * Signing secrets from the environment, checked where they are read: the webhook sources'
 * (OPFLOW_WEBHOOK_SECRET_<SOURCE>) and the callbacks' (OPFLOW_CALLBACK_SECRET, and
 * OPFLOW_CALLBACK_SECRET_<TENANT>). A secret is `whsec_` and the base64 of the key, or any other
 * text taken as the key's bytes; either way the key must have at least 24 bytes (the Standard
 * Webhooks guidance: 24 to 64), so a short or malformed one stops the command that reads it, naming
 * the variable and the rule, never the value.
 */
import { normalizeSecret } from '../callbacks/secret-format';

/** The fewest bytes a signing key may have. */
export const minimumSecretBytes = 24;

/** A signing secret that cannot be used, naming its variable (or secret name) and the rule. */
export class SigningSecretError extends Error {
  override readonly name = 'SigningSecretError';
}

const base64Pattern = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const suggestion = 'e.g. whsec_$(openssl rand -base64 32)';

/** The key's bytes of a secret, or a SigningSecretError naming `where` (a variable or secret name). */
export function signingKey(value: string, where: string): Buffer {
  const text = value.trim();
  if (text.startsWith('whsec_')) {
    const encoded = text.slice('whsec_'.length);
    if (!base64Pattern.test(encoded)) {
      throw new SigningSecretError(
        `${where} is not a usable signing secret: after "whsec_" it must be base64 (${suggestion})`,
      );
    }
    const key = Buffer.from(encoded, 'base64');
    if (key.byteLength < minimumSecretBytes) {
      throw new SigningSecretError(
        `${where} is too short: its key has ${key.byteLength} bytes; a key needs at least ${minimumSecretBytes} bytes (${suggestion})`,
      );
    }
    return key;
  }
  const key = Buffer.from(text, 'utf8');
  if (key.byteLength < minimumSecretBytes) {
    throw new SigningSecretError(
      `${where} is too short: ${key.byteLength} bytes; a key needs at least ${minimumSecretBytes} bytes (${suggestion})`,
    );
  }
  return key;
}

/** The `whsec_` form of a usable secret; a SigningSecretError naming `where` otherwise. */
export function parseSigningSecret(value: string, where: string): string {
  signingKey(value, where);
  return normalizeSecret(value);
}

/** Variables read as signing secrets. The aws prefix variable is a setting, not a secret. */
const secretVariable = /^OPFLOW_(WEBHOOK_SECRET_.+|CALLBACK_SECRET(_.+)?)$/;
const notSecrets = new Set(['OPFLOW_CALLBACK_SECRET_PREFIX', 'OPFLOW_WEBHOOK_SECRET_PREFIX']);

/** What is wrong with each signing secret set in the environment (an empty value is unset). */
export function signingSecretProblems(env: Readonly<Record<string, string | undefined>>): string[] {
  const problems: string[] = [];
  for (const [name, value] of Object.entries(env)) {
    if (!secretVariable.test(name) || notSecrets.has(name) || !value?.trim()) continue;
    try {
      signingKey(value, name);
    } catch (error) {
      if (!(error instanceof SigningSecretError)) throw error;
      problems.push(error.message);
    }
  }
  return problems.sort();
}
