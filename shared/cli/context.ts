/**
 * What every `opflow` command works with: the process's streams and environment (injectable for
 * tests), the global options, the workflows, and how to open the chosen backend.
 */
import { JobRequestError } from '../engine/job-commands';
import type { WorkflowRegistry } from '../engine/workflow';
import { errorMessage } from '../errors/error-message';
import type { Backend } from '../runtime/backend';
import { ConfigError } from '../runtime/config-error';
import { loadLocalConfig } from '../runtime/local/config';
import { createLocalPipeline } from '../runtime/local/pipeline';
import { checkDatabasePlace, checkOutputPlace } from '../runtime/local/places';
import { missingAwsResource } from './aws-reachability';
import { CliError, ExitCode, type ExitCodeValue } from './exit-codes';

export interface CliIo {
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
  /**
   * Reads standard input (for `-`), stopping once more than `maxBytes` bytes have come (the caller
   * refuses them naming its flag); without `maxBytes`, more than 10 MB is refused (shared/cli/stdin.ts).
   */
  readStdin(maxBytes?: number): Promise<string>;
  env: Readonly<Record<string, string | undefined>>;
  /** Relative input paths are resolved against this. */
  cwd: string;
  /** Calls `handler` on Ctrl-C (SIGINT) or SIGTERM; returns the function that stops listening. */
  onInterrupt(handler: () => void): () => void;
}

/** The options every command accepts (before or after the command's name). */
export interface GlobalOptions {
  backend: 'local' | 'aws';
  json?: boolean | undefined;
  quiet?: boolean | undefined;
  db?: string | undefined;
  out?: string | undefined;
  qps?: string | undefined;
  concurrency?: string | undefined;
  baseUrl?: string | undefined;
  sandboxSpeed?: string | undefined;
  sandboxDrift?: string | undefined;
}

export interface CliContext {
  io: CliIo;
  workflows: WorkflowRegistry;
}

/** What an opened backend is good for: running steps here, or reading and changing records only. */
export type BackendPurpose = 'work' | 'records';

/** Opens the chosen backend; the caller closes it. */
export async function openBackend(
  ctx: CliContext,
  options: GlobalOptions,
  purpose: BackendPurpose,
): Promise<Backend> {
  if (options.backend === 'aws') return openAwsBackend(ctx, options);
  const config = loadLocalConfig(
    {
      dbPath: options.db,
      outDir: options.out,
      qps: options.qps,
      concurrency: options.concurrency,
      baseUrl: options.baseUrl,
      sandboxSpeed: options.sandboxSpeed,
      sandboxDrift: options.sandboxDrift,
    },
    ctx.io.env,
  );
  // Before anything is opened or called: a database or report place that cannot work is named now.
  const sourceOf = (flag: string | undefined, flagName: string, variable: string, fallback: string) => {
    if (flag !== undefined) return { name: flagName, fromFlag: true };
    if (ctx.io.env[variable]?.trim()) return { name: variable, fromFlag: false };
    return { name: `the default ${fallback}`, fromFlag: false };
  };
  checkDatabasePlace(
    config.dbPath,
    sourceOf(options.db, '--db', 'OPFLOW_DB', 'database (.opflow/opflow.db)'),
  );
  if (purpose === 'work') {
    checkOutputPlace(
      config.outDir,
      sourceOf(options.out, '--out', 'OPFLOW_OUT', 'report folder (opflow-out)'),
    );
  }
  try {
    return await createLocalPipeline({
      config,
      workflows: ctx.workflows,
      env: ctx.io.env,
      recordsOnly: purpose === 'records',
      announce: (line) => ctx.io.stderr.write(`${line}\n`),
    });
  } catch (error) {
    throw new CliError(errorMessage(error), ExitCode.environment);
  }
}

async function openAwsBackend(ctx: CliContext, options: GlobalOptions): Promise<Backend> {
  let qps: number | undefined;
  if (options.qps !== undefined) {
    qps = Number(options.qps);
    if (!(Number.isFinite(qps) && qps > 0)) {
      throw new CliError(`--qps: must be a number more than 0 (got "${options.qps}")`, ExitCode.usage);
    }
  }
  sayNodeLine(ctx.io);
  // Loaded only when asked for: the local command does not load the AWS SDK.
  const { openAwsCliBackend } = await import('../runtime/aws/cli-backend');
  try {
    return await openAwsCliBackend({ env: ctx.io.env, workflows: ctx.workflows, qps });
  } catch (error) {
    throw new CliError(`cannot open the aws backend: ${errorMessage(error)}`, ExitCode.environment);
  }
}

/** The Node line the AWS SDK asks for from January 2027 (its own check, @aws-sdk/core). */
export const sdkNodeMajor = 22;

/**
 * On a Node line the AWS SDK no longer supports, one line instead of the SDK's seven-line
 * NodeVersionSupportWarning on every aws command (silenced by the SDK's own switch,
 * AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED, unless the user set it).
 */
export function sayNodeLine(io: Pick<CliIo, 'stderr'>, version: string = process.version): void {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const major = Number(/^v(\d+)\./.exec(version)?.[1]);
  if (major < sdkNodeMajor) {
    io.stderr.write(
      `opflow: Node ${version} is past its end of life; the aws backend's SDK needs Node ${sdkNodeMajor} or later from January 2027 (supported: Node 22 and 24)\n`,
    );
  }
}

/**
 * Turns any error into the message and exit code the user sees; `env` (the command's) names the
 * stack resource an aws error is about (aws-reachability.ts).
 */
export function classifyError(
  error: unknown,
  env: Readonly<Record<string, string | undefined>> = {},
): { message: string; exitCode: ExitCodeValue } {
  if (error instanceof CliError) return { message: error.message, exitCode: error.exitCode };
  if (error instanceof ConfigError) {
    return { message: error.message, exitCode: error.fromFlags ? ExitCode.usage : ExitCode.environment };
  }
  if (error instanceof JobRequestError) {
    const exitCode =
      error.reason === 'not-found'
        ? ExitCode.notFound
        : error.reason === 'conflict'
          ? ExitCode.jobFailed
          : ExitCode.usage;
    return { message: error.message, exitCode };
  }
  const missing = missingAwsResource(error, env);
  if (missing !== undefined) return { message: missing, exitCode: ExitCode.environment };
  return { message: errorMessage(error) + localEndpointHint(error), exitCode: ExitCode.environment };
}

/** For a refused connection to this machine (an emulator endpoint of `npm run aws-local`, a local server): what to start. */
function localEndpointHint(error: unknown): string {
  const { code, address, port } = (error ?? {}) as { code?: unknown; address?: unknown; port?: unknown };
  if (code !== 'ECONNREFUSED' || !/^(127\.|::1$|localhost$)/.test(String(address))) return '';
  return `: nothing listens at ${String(address)}:${String(port)}; when that is an emulator of \`npm run aws-local\`, start it (its ports change at every start: load its aws-local.env again)`;
}

/** Writes a value as JSON (two-space indented) and a newline. */
export function writeJson(io: CliIo, value: unknown): void {
  io.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}
