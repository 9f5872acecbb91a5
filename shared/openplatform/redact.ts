/**
 * Keeps API keys and link credentials out of everything opflow writes down: log lines, logged URLs,
 * error messages and the `cause` chains of errors thrown by the HTTP stack (which may quote the URL,
 * and so an `apikey=` query parameter).
 */

const MASK = '***';

/**
 * Query parameters whose values are credentials: the platform's `apikey`, and the signatures and
 * tokens of presigned download links (S3, OSS, GCS and generic ones).
 */
const credentialParameters = [
  'apikey',
  'api_key',
  'access_token',
  'token',
  'signature',
  'sig',
  'x-amz-signature',
  'x-amz-credential',
  'x-amz-security-token',
  'security-token',
  'ossaccesskeyid',
  'awsaccesskeyid',
  'googleaccessid',
  'x-goog-signature',
  'x-goog-credential',
];

const credentialParameterPattern = new RegExp(
  `([?&;](?:${credentialParameters.map((name) => name.replace(/[-]/g, '\\-')).join('|')})=)[^&#\\s"'<>]*`,
  'gi',
);

/** `scheme://user:password@host` */
const userInfoPattern = /(\b[a-z][a-z0-9+.-]*:\/\/)[^/@\s"'<>]+@/gi;

/**
 * The URL as it may be logged: the value of `apikey=` (and of the signature and token parameters of
 * presigned links, and any `user:password@`) replaced by `***`. Works on absolute and relative URLs
 * and on text that merely contains URLs.
 */
export function redactUrl(url: string | URL): string {
  return String(url).replace(credentialParameterPattern, `$1${MASK}`).replace(userInfoPattern, `$1${MASK}@`);
}

/**
 * `text` with every occurrence of each secret replaced by `***`, in its plain form and in its
 * URL-encoded forms (as it appears in a query string). Empty secrets are ignored. URL credentials
 * (see {@link redactUrl}) are masked as well.
 */
export function redactSecret(text: string, secrets: readonly (string | undefined)[]): string {
  let result = text;
  for (const secret of secrets) {
    if (!secret) continue;
    const forms = new Set([
      secret,
      encodeURIComponent(secret),
      new URLSearchParams({ s: secret }).toString().slice(2),
      JSON.stringify(secret).slice(1, -1),
    ]);
    for (const form of forms) {
      if (form) result = result.split(form).join(MASK);
    }
  }
  return redactUrl(result);
}

/** An error copied from another with its text redacted; keeps `name`, `code`, `errno` and `syscall`. */
export class RedactedError extends Error {
  code?: string | undefined;
  errno?: number | undefined;
  syscall?: string | undefined;
  errors?: RedactedError[] | undefined;

  constructor(source: unknown, secrets: readonly (string | undefined)[], depth = 0) {
    const record = (typeof source === 'object' && source !== null ? source : {}) as Record<string, unknown>;
    const message =
      source instanceof Error ? source.message : typeof source === 'string' ? source : safeString(source);
    const cause =
      depth < 8 && record['cause'] !== undefined
        ? new RedactedError(record['cause'], secrets, depth + 1)
        : undefined;
    super(redactSecret(message, secrets), cause === undefined ? undefined : { cause });
    this.name = typeof record['name'] === 'string' ? redactSecret(record['name'], secrets) : 'Error';
    if (typeof record['code'] === 'string') this.code = redactSecret(record['code'], secrets);
    if (typeof record['errno'] === 'number') this.errno = record['errno'];
    if (typeof record['syscall'] === 'string') this.syscall = record['syscall'];
    // Happy-eyeballs connection failures arrive as an AggregateError of one error per address.
    if (Array.isArray(record['errors']) && depth < 8) {
      this.errors = record['errors'].slice(0, 8).map((inner) => new RedactedError(inner, secrets, depth + 1));
    }
    this.stack =
      source instanceof Error && typeof source.stack === 'string'
        ? redactSecret(source.stack, secrets)
        : `${this.name}: ${this.message}`;
  }
}

/** A copy of `error` and its whole `cause` chain with every secret and URL credential masked. */
export function redactError(error: unknown, secrets: readonly (string | undefined)[]): RedactedError {
  return new RedactedError(error, secrets);
}

/** Every field value of a log record, redacted (strings directly, anything else through JSON). */
export function redactFields(
  fields: Record<string, unknown>,
  secrets: readonly (string | undefined)[],
): Record<string, unknown> {
  const result: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(fields)) {
    if (value === undefined || value === null || typeof value === 'number' || typeof value === 'boolean') {
      result[name] = value;
    } else if (typeof value === 'string') {
      result[name] = redactSecret(value, secrets);
    } else {
      try {
        result[name] = JSON.parse(redactSecret(JSON.stringify(value) ?? 'null', secrets)) as unknown;
      } catch {
        result[name] = redactSecret(safeString(value), secrets);
      }
    }
  }
  return result;
}

function safeString(value: unknown): string {
  try {
    return String(value);
  } catch {
    return '[unprintable]';
  }
}
