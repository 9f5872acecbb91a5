/**
 * `opflow call <operationId or short id> [--body <file|->] [--query name=value ...]`: one call of
 * any of the platform's operations, printing its data, or its error with kind, code and correlation
 * id. The same key, base URL and built-in sandbox as `opflow run`; one attempt, no retries (a job of
 * the `call` workflow gets the engine's retries, rate limit and records).
 */
import path from 'node:path';
import { errorMessage } from '../../errors/error-message';
import { describeFileError, readRegularFile, tooLarge } from '../../files/bounded-read';
import { isOpenPlatformError, type OpenPlatformError } from '../../openplatform/errors';
import { loadShapeTables } from '../../openplatform/operation-schemas';
import type { OperationRow, Shape } from '../../openplatform/operation-types';
import { lookupOperation } from '../../openplatform/operations';
import type { OperationCallResult } from '../../openplatform/types';
import { type CliContext, type GlobalOptions, openBackend, writeJson } from '../context';
import { CliError, ExitCode, type ExitCodeValue } from '../exit-codes';

export interface CallOptions extends GlobalOptions {
  body?: string | undefined;
  query: string[];
  tenant: string;
}

export async function callCommand(
  ctx: CliContext,
  name: string,
  options: CallOptions,
): Promise<ExitCodeValue> {
  const found = lookupOperation(name);
  if (!found.ok) throw new CliError(found.message, ExitCode.usage);
  const row = found.operation;
  const parameters = parseParameters(options.query);
  let body = options.body === undefined ? undefined : await readBody(ctx, options.body);
  if (row.bodyEncoding === 'multipart' && body !== undefined) body = await attachFiles(ctx, row, body);

  const backend = await openBackend(ctx, options, 'work');
  try {
    const apiKey = await backend.deps.keys.getKey(options.tenant);
    if (!apiKey) {
      throw new CliError(
        `no API key for tenant "${options.tenant}": set OPFLOW_API_KEY${options.tenant === 'default' ? '' : `_${options.tenant.toUpperCase()}`}`,
        ExitCode.environment,
      );
    }
    const live = chatStream(row) && !options.json;
    let result: OperationCallResult;
    try {
      result = await backend.deps.client.request(
        row.operationId,
        { parameters, body },
        { apiKey, ...(live ? { onText: (text: string) => ctx.io.stdout.write(text) } : {}) },
      );
    } catch (error) {
      if (!isOpenPlatformError(error)) throw error;
      return reportFailure(ctx, error, options);
    }
    printResult(ctx, result, options, live);
    return ExitCode.ok;
  } finally {
    await backend.close();
  }
}

function chatStream(row: OperationRow): boolean {
  return row.stream && row.operationId !== 't001TaskAicc';
}

/** `name=value` pairs; a name given twice becomes a list. */
export function parseParameters(pairs: readonly string[]): Record<string, unknown> {
  const parameters: Record<string, unknown> = {};
  for (const pair of pairs) {
    const at = pair.indexOf('=');
    if (at <= 0) throw new CliError(`--query: expected name=value, got "${pair}"`, ExitCode.usage);
    const key = pair.slice(0, at).trim();
    const value = pair.slice(at + 1);
    const previous = parameters[key];
    parameters[key] =
      previous === undefined ? value : Array.isArray(previous) ? [...previous, value] : [previous, value];
  }
  return parameters;
}

/** The largest request body read (a file or standard input): request bodies are a few KB. */
export const maxBodyBytes = 10 * 1024 * 1024;
/** The largest file uploaded in a multipart field. */
export const maxUploadBytes = 50 * 1024 * 1024;

/** A UTF-8 text file under the bounded-read rule; refusals name `flag` and the file. */
async function readTextFile(file: string, shownAs: string, maxBytes: number, flag: string): Promise<string> {
  let bytes: Buffer;
  try {
    bytes = await readRegularFile(file, { maxBytes, shownAs });
  } catch (error) {
    throw new CliError(`${flag}: cannot read ${shownAs}: ${describeFileError(error)}`, ExitCode.usage);
  }
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new CliError(`${flag}: ${shownAs} is not UTF-8 text`, ExitCode.usage);
  }
}

/** The body from a file, standard input (`-`) or inline JSON; a JSON object or a clear error. */
async function readBody(ctx: CliContext, source: string): Promise<unknown> {
  let text: string;
  let where: string;
  if (source === '-') {
    // Reading stops past the limit: `yes | opflow call p002 --body -` ends at once.
    text = await ctx.io.readStdin(maxBodyBytes + 1);
    where = 'standard input';
    if (Buffer.byteLength(text) > maxBodyBytes)
      throw new CliError(`--body -: standard input is ${tooLarge(0, maxBodyBytes, true)}`, ExitCode.usage);
    if (text.trim() === '') throw new CliError('--body -: standard input is empty', ExitCode.usage);
  } else if (/^\s*[{[]/.test(source)) {
    text = source;
    where = 'the inline --body';
  } else {
    where = source;
    text = await readTextFile(path.resolve(ctx.io.cwd, source), source, maxBodyBytes, '--body');
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new CliError(`--body: ${where} is not valid JSON (${errorMessage(error)})`, ExitCode.usage);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new CliError(`--body: ${where} must hold a JSON object`, ExitCode.usage);
  }
  return value;
}

/** Multipart file fields hold local paths: read each file into the body. */
async function attachFiles(ctx: CliContext, row: OperationRow, body: unknown): Promise<unknown> {
  const tables = await loadShapeTables();
  let shape: Shape | undefined = tables.operationShapes[row.operationId]?.body;
  while (shape && typeof shape === 'object' && 'ref' in shape) shape = tables.definitions[shape.ref];
  if (!shape || typeof shape !== 'object' || !('props' in shape)) return body;
  const copy = { ...(body as Record<string, unknown>) };
  for (const [name, fieldShape] of Object.entries(shape.props)) {
    const isFile = fieldShape === 'file';
    const isFiles = typeof fieldShape === 'object' && 'array' in fieldShape && fieldShape.array === 'file';
    if (!isFile && !isFiles) continue;
    const value = copy[name];
    if (value === undefined) continue;
    const paths = Array.isArray(value) ? value : [value];
    const files = await Promise.all(
      paths.map(async (item) => {
        if (typeof item !== 'string')
          throw new CliError(`--body: ${name} must be a file path`, ExitCode.usage);
        const file = path.resolve(ctx.io.cwd, item);
        try {
          const bytes = await readRegularFile(file, { maxBytes: maxUploadBytes, shownAs: item });
          return new File([new Uint8Array(bytes)], path.basename(file));
        } catch (error) {
          throw new CliError(
            `--body: ${name}: cannot read ${item}: ${describeFileError(error)}`,
            ExitCode.usage,
          );
        }
      }),
    );
    copy[name] = isFiles ? files : files[0];
  }
  return copy;
}

function printResult(
  ctx: CliContext,
  result: OperationCallResult,
  options: GlobalOptions,
  streamed: boolean,
): void {
  const { usage } = result;
  if (options.json) {
    writeJson(ctx.io, { operationId: result.operation.operationId, data: result.data, usage });
    return;
  }
  if (streamed) ctx.io.stdout.write('\n');
  else ctx.io.stdout.write(`${JSON.stringify(result.data, null, 2)}\n`);
  if (!options.quiet) {
    const units = usage.billedUnits === 1 ? '1 unit' : `${usage.billedUnits} units`;
    ctx.io.stderr.write(
      `opflow: ${usage.operationId} answered in ${usage.durationMs} ms, ${units} billed${
        usage.correlationId ? `, correlation id ${usage.correlationId}` : ''
      }\n`,
    );
  }
}

function reportFailure(ctx: CliContext, error: OpenPlatformError, options: GlobalOptions): ExitCodeValue {
  const exitCode =
    error.kind === 'invalid-request' && error.httpStatus === undefined
      ? ExitCode.usage
      : error.kind === 'network' || error.kind === 'timeout'
        ? ExitCode.environment
        : ExitCode.jobFailed;
  const details = {
    operationId: error.operationId,
    kind: error.kind,
    code: error.code,
    httpStatus: error.httpStatus,
    correlationId: error.correlationId,
    retryable: error.retryable,
    message: error.message,
  };
  if (options.json) writeJson(ctx.io, { error: { ...details, exitCode } });
  const facts = [
    `kind ${error.kind}`,
    error.code === undefined ? undefined : `code ${error.code}`,
    error.httpStatus === undefined ? undefined : `HTTP ${error.httpStatus}`,
    error.correlationId === undefined ? undefined : `correlation id ${error.correlationId}`,
    error.retryable ? 'worth retrying later' : undefined,
  ].filter(Boolean);
  const hint =
    exitCode === ExitCode.usage && error.operationId
      ? `\n  opflow operations ${error.operationId} shows its parameters and fields`
      : '';
  ctx.io.stderr.write(`opflow: ${error.message}\n  (${facts.join(', ')})${hint}\n`);
  return exitCode;
}
