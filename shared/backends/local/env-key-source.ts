/**
 * The local KeySource: API keys from the environment. `OPFLOW_API_KEY_<TENANT>` for one tenant
 * (the tenant upper-cased, anything but letters and digits turned into `_`), else `OPFLOW_API_KEY`.
 * The environment is read on every call, so `refresh` has nothing to forget.
 */
import type { KeySource } from '../../engine/ports';

export interface EnvKeySourceOptions {
  /** Where to read from. Default: `process.env`. */
  env?: NodeJS.ProcessEnv | Readonly<Record<string, string | undefined>> | undefined;
  /** Used when the environment has no key, e.g. the sandbox's key when opflow started the sandbox. */
  fallbackKey?: string | undefined;
}

/** The variable holding one tenant's key, e.g. `OPFLOW_API_KEY_ACME_LABS` for `acme-labs`. */
export function tenantKeyVariable(tenant: string): string {
  return `OPFLOW_API_KEY_${tenant.toUpperCase().replace(/[^A-Z0-9]/g, '_')}`;
}

export class EnvKeySource implements KeySource {
  readonly #env: Readonly<Record<string, string | undefined>>;
  readonly #fallbackKey: string | undefined;

  constructor(options: EnvKeySourceOptions = {}) {
    this.#env = options.env ?? process.env;
    this.#fallbackKey = nonEmpty(options.fallbackKey);
  }

  async getKey(tenant: string): Promise<string | undefined> {
    return (
      nonEmpty(this.#env[tenantKeyVariable(tenant)]) ??
      nonEmpty(this.#env.OPFLOW_API_KEY) ??
      this.#fallbackKey
    );
  }

  async refresh(tenant: string): Promise<string | undefined> {
    return this.getKey(tenant);
  }
}

function nonEmpty(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed ? trimmed : undefined;
}
