/**
 * The local runtime's configuration, from command-line flags and the environment (flags win),
 * validated up front with messages that name the flag or variable at fault.
 */
import * as z from 'zod';
import { signingSecretProblems } from '../../config/signing-secrets';
import { redactUrl } from '../../openplatform/redact';
import { ConfigError } from '../config-error';

/** Where each setting comes from: its flag and its environment variable. */
export const localConfigSources = {
  /** No flag on purpose: a key on the command line ends up in shell history and `ps`. */
  apiKey: { flag: undefined, env: 'OPFLOW_API_KEY' },
  baseUrl: { flag: '--base-url', env: 'OPFLOW_BASE_URL' },
  qps: { flag: '--qps', env: 'OPFLOW_QPS' },
  concurrency: { flag: '--concurrency', env: 'OPFLOW_CONCURRENCY' },
  dbPath: { flag: '--db', env: 'OPFLOW_DB' },
  outDir: { flag: '--out', env: 'OPFLOW_OUT' },
  sandboxSpeed: { flag: '--sandbox-speed', env: 'OPFLOW_SANDBOX_SPEED' },
  sandboxDrift: { flag: '--sandbox-drift', env: 'OPFLOW_SANDBOX_DRIFT' },
  /** No flag: a tuning knob (and what tests shorten). */
  inFlightAllowanceMs: { flag: undefined, env: 'OPFLOW_IN_FLIGHT_ALLOWANCE_MS' },
  /** No flag: a tuning knob (and what tests shorten). */
  leaseMs: { flag: undefined, env: 'OPFLOW_LEASE_MS' },
} as const;

export type LocalConfigKey = keyof typeof localConfigSources;

const number = (what: string) =>
  z.coerce
    .number({ error: `must be a number (${what})` })
    .refine(Number.isFinite, `must be a number (${what})`);

const fieldSchemas = {
  apiKey: z.string().trim().min(1, 'must not be empty').optional(),
  baseUrl: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).optional(),
  qps: number('calls per second').pipe(z.number().positive('must be more than 0').max(10_000)).default(5),
  concurrency: number('steps at once')
    .pipe(
      z.number().int('must be a whole number').min(1, 'must be at least 1').max(256, 'must be at most 256'),
    )
    .default(8),
  dbPath: z.string().trim().min(1, 'must not be empty').default('.opflow/opflow.db'),
  outDir: z.string().trim().min(1, 'must not be empty').default('opflow-out'),
  sandboxSpeed: number('how many times faster the sandbox runs')
    .pipe(z.number().min(1, 'must be at least 1').max(100_000))
    .optional(),
  sandboxDrift: z.preprocess(
    (value) => (typeof value === 'string' && value.trim().toLowerCase() === 'off' ? undefined : value),
    z.coerce
      .number({ error: "must be a whole-number seed or 'off'" })
      .int("must be a whole-number seed or 'off'")
      .optional(),
  ),
  inFlightAllowanceMs: number('milliseconds')
    .pipe(
      z
        .number()
        .int('must be a whole number')
        .min(2_000, 'must be at least 2000')
        .max(3_600_000, 'must be at most 3600000'),
    )
    .optional(),
  leaseMs: number('milliseconds')
    .pipe(
      z
        .number()
        .int('must be a whole number')
        .min(3_000, 'must be at least 3000')
        .max(600_000, 'must be at most 600000'),
    )
    .optional(),
} satisfies Record<LocalConfigKey, z.ZodType>;

export interface LocalRuntimeConfig {
  /** The API key; absent with no base URL means "use the built-in sandbox". */
  apiKey?: string | undefined;
  /** The Open Platform's base URL; absent means the real platform (with a key) or the sandbox. */
  baseUrl?: string | undefined;
  /** Upstream calls per second per API key (the adaptive limit's ceiling). Default: 5. */
  qps: number;
  /** Steps run at once. Default: 8. */
  concurrency: number;
  /** The database file. Default: `.opflow/opflow.db`. */
  dbPath: string;
  /** Where reports are written. Default: `opflow-out`. */
  outDir: string;
  /**
   * How many times faster than the real platform the sandbox's tasks finish; the workflows' poll
   * schedules shrink to match. Default: 30 for the built-in sandbox (the examples run in about a
   * minute), 1 for a sandbox at a loopback OPFLOW_BASE_URL (`opflow sandbox --speed N` there).
   * Ignored when talking to a real platform (an API key is set).
   */
  sandboxSpeed?: number | undefined;
  /**
   * The built-in sandbox's drift seed: counts, references and answers move between runs of the same
   * request (seeded), so scheduled reports show changes. Off (undefined) by default.
   */
  sandboxDrift?: number | undefined;
  /**
   * How long a paid call may go without a heartbeat (sent every quarter of it) before another
   * process takes its job for stranded. Default: 60 s (the engine's `inFlightAllowanceMs`).
   */
  inFlightAllowanceMs?: number | undefined;
  /**
   * How long a step's claimed queue message stays hidden from other workers, renewed every third of
   * it while the step runs; a process that stops renewing (frozen, or dead without being seen as
   * gone) loses it that long after. Default: 60 s. At most 10 minutes (the local queue's longest).
   */
  leaseMs?: number | undefined;
}

/** The built-in sandbox's speed when none is configured. */
export const defaultBuiltInSandboxSpeed = 30;

type Raw = Partial<
  Record<Exclude<LocalConfigKey, 'apiKey' | 'inFlightAllowanceMs' | 'leaseMs'>, string | number | undefined>
>;

/**
 * Reads the configuration: each setting from its flag when given, else its environment variable,
 * else its default. Throws a ConfigError listing every wrong value.
 */
export function loadLocalConfig(
  flags: Raw = {},
  env: Readonly<Record<string, string | undefined>> = process.env,
) {
  const problems: string[] = [];
  let fromFlags = false;
  const config: Record<string, unknown> = {};
  for (const key of Object.keys(fieldSchemas) as LocalConfigKey[]) {
    const source = localConfigSources[key];
    const fromFlag =
      key === 'apiKey' || key === 'inFlightAllowanceMs' || key === 'leaseMs' ? undefined : flags[key];
    const envValue = env[source.env];
    const raw = fromFlag ?? (envValue === undefined || envValue.trim() === '' ? undefined : envValue);
    const parsed = fieldSchemas[key].safeParse(raw);
    if (parsed.success) {
      config[key] = parsed.data;
      continue;
    }
    const where = fromFlag !== undefined && source.flag ? source.flag : source.env;
    if (where === source.flag) fromFlags = true;
    const message = parsed.error.issues[0]?.message ?? 'is not valid';
    // Never echo a key back, even a malformed one.
    const shown = key === 'apiKey' ? '' : ` (got ${JSON.stringify(redactUrl(String(raw)))})`;
    problems.push(`${where}: ${message}${shown}`);
  }
  problems.push(...signingSecretProblems(env));
  if (problems.length > 0) throw new ConfigError(`invalid configuration: ${problems.join('; ')}`, fromFlags);
  return config as unknown as LocalRuntimeConfig;
}

/** Whether this configuration talks to the built-in sandbox started in-process. */
export function usesBuiltInSandbox(config: Pick<LocalRuntimeConfig, 'apiKey' | 'baseUrl'>): boolean {
  return config.apiKey === undefined && config.baseUrl === undefined;
}
