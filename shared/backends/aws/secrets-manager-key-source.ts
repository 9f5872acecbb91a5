/**
 * KeySource on Secrets Manager: tenant `t`'s API key is the secret `<prefix>t`, holding either the
 * key itself or JSON `{"apiKey": "..."}`. Values are cached by Powertools' SecretsProvider for a
 * bounded time; `refresh()` reads the secret again (once, however many callers ask at the same
 * time), so a rotated key is picked up after the upstream answers 401. The key never appears in a
 * log line or an error message.
 */

import type { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import * as z from 'zod';
import type { KeySource } from '../../engine/ports';
import { AwsConfigError, InvalidSecretError } from './errors';
import { SecretTextReader } from './secrets-provider';

/** Characters Secrets Manager allows in a name. */
const secretNamePattern = /^[A-Za-z0-9/_+=.@-]+$/;
const jsonSecretSchema = z.object({ apiKey: z.string() });

export interface SecretsManagerKeySourceOptions {
  client: SecretsManagerClient;
  /** Secrets are named `<prefix><tenant>`, e.g. `opflow/api-key/` + `default`. */
  prefix: string;
  /** How long a key is reused before it is read again (default 300 seconds). */
  maxAgeSeconds?: number | undefined;
}

/**
 * The API key inside a secret's text: the text itself, or the `apiKey` of a JSON object. An empty
 * secret (blank text, or a blank `apiKey`) holds no key: undefined, as for a missing secret, so the
 * job fails saying its tenant has no key. Anything else unreadable is an InvalidSecretError.
 */
export function apiKeyFromSecret(secretName: string, text: string): string | undefined {
  const trimmed = text.trim();
  if (trimmed.length === 0) return undefined;
  if (!trimmed.startsWith('{')) return trimmed;
  let value: unknown;
  try {
    value = JSON.parse(trimmed);
  } catch {
    throw new InvalidSecretError(`secret ${secretName} starts with "{" but is not valid JSON`);
  }
  const parsed = jsonSecretSchema.safeParse(value);
  if (!parsed.success) {
    throw new InvalidSecretError(`secret ${secretName} is JSON without a string "apiKey"`);
  }
  return parsed.data.apiKey.trim() || undefined;
}

export class SecretsManagerKeySource implements KeySource {
  private readonly secrets: SecretTextReader;
  private readonly prefix: string;
  private readonly refreshing = new Map<string, Promise<string | undefined>>();

  constructor(options: SecretsManagerKeySourceOptions) {
    if (!secretNamePattern.test(options.prefix)) {
      throw new AwsConfigError(
        `secret prefix ${JSON.stringify(options.prefix)} may only hold letters, digits and /_+=.@-`,
      );
    }
    this.secrets = new SecretTextReader(options.client, options.maxAgeSeconds ?? 300);
    this.prefix = options.prefix;
  }

  /**
   * The tenant's API key (cached for `maxAgeSeconds`), or undefined when the secret does not exist,
   * has no value yet (as the stack creates it) or is empty.
   */
  getKey(tenant: string): Promise<string | undefined> {
    return this.read(tenant, false);
  }

  /** Read the tenant's secret again now; concurrent calls share one read. */
  refresh(tenant: string): Promise<string | undefined> {
    const inFlight = this.refreshing.get(tenant);
    if (inFlight) return inFlight;
    const reading = this.read(tenant, true).finally(() => this.refreshing.delete(tenant));
    this.refreshing.set(tenant, reading);
    return reading;
  }

  private async read(tenant: string, forceFetch: boolean): Promise<string | undefined> {
    const name = this.secretName(tenant);
    const text = await this.secrets.read(name, forceFetch);
    return text === undefined ? undefined : apiKeyFromSecret(name, text);
  }

  private secretName(tenant: string): string {
    const name = this.prefix + tenant;
    if (tenant.length === 0 || !secretNamePattern.test(name) || name.length > 512) {
      throw new AwsConfigError(
        `tenant ${JSON.stringify(tenant.slice(0, 64))} cannot be part of a secret name`,
      );
    }
    return name;
  }
}
