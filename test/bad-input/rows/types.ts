/** One bad input at one boundary, and what opflow must answer. */
export interface CliRow {
  name: string;
  /** Arguments after `opflow`. `{dir}` is replaced by the case's temporary folder. */
  args: string[];
  /** Extra environment (merged over the suite's: its own database and report folder). */
  env?: Record<string, string> | undefined;
  /** Standard input. */
  stdin?: string | undefined;
  /** Files to make first, relative to the case's folder: content, or a special kind. */
  files?: Record<string, FileSpec> | undefined;
  exit: number;
  /** What the message (standard error, or the JSON error) must contain: the flag, field, line or file. */
  names: (string | RegExp)[];
  /** Text that must not appear anywhere in the output (a secret). */
  never?: string[] | undefined;
  /**
   * Where `names` must appear: standard error (the default: a refused command), or anywhere in the
   * output (a command that reports bad records in its result and goes on with the rest).
   */
  namesIn?: 'stderr' | 'output' | undefined;
  /** What standard output must contain without --json: the valid rest still taken. */
  stdout?: (string | RegExp)[] | undefined;
  /** What the --json answer (the last JSON document on stdout) must match (toMatchObject). */
  json?: Record<string, unknown> | undefined;
}

export type FileSpec = string | Buffer | { fifo: true } | { symlink: string } | { folder: true };

export interface HttpRow {
  name: string;
  method: string;
  /** Path and query, e.g. `/jobs?limit=0`. `{job}` is a queued job's id, `{succeeded}` a finished one's. */
  path: string;
  headers?: Record<string, string> | undefined;
  /** A string or Buffer is sent as is; an object as JSON (content-type application/json unless headers say otherwise). */
  body?: string | Buffer | object | undefined;
  status: number;
  /** What the answer's error message must contain (the field path, header or parameter). */
  names: (string | RegExp)[];
}

export interface LambdaRow {
  name: string;
  /** The raw event (anything at all). */
  event: unknown;
  status: number;
  /** What the answer body must contain. */
  names: (string | RegExp)[];
}

export interface SqsRow {
  name: string;
  /** The raw event given to the step worker. */
  event: unknown;
  /** Message ids that must be reported as failed (for SQS to deliver again or dead-letter). */
  failed: string[];
  /** What the log lines must contain. */
  logs: (string | RegExp)[];
}
