/**
 * The typed Open Platform client on Node's http/https: one keep-alive connection pool per client, one attempt
 * per call (the engine owns retries), every body validated before it is sent and billed, every
 * answer parsed leniently, every failure an {@link OpenPlatformError} that tells the caller whether
 * retrying is safe, and every call's cost reported. The API key never reaches a log line, an error
 * or a logged URL.
 */

import { formatIssues } from '../errors/zod-issues';
import { catalogue, findOperation, isOperationId, type OperationEntry, type OperationId } from './catalogue';
import {
  errorFromResponse,
  failAttempt,
  limitSignal,
  parseSuccess,
  startAttempt,
  succeedAttempt,
  unknownOperation,
  validateBody,
} from './client-attempt';
import { fetchDocument } from './client-documents';
import { nodeHttpTransport } from './client-node-http';
import { requestOperation } from './client-operations';
import {
  type ClientContext,
  clientContext,
  clientOptionsSchema,
  type OpenPlatformClientOptions,
  parseCallOptions,
} from './client-settings';
import { streamCall } from './client-streams';
import { type HttpTransport, readAnswerText, send } from './client-transport';
import { OpenPlatformError } from './errors';
import { type RequestOf, requestSchemas } from './schemas/requests';
import type { DataOf } from './schemas/responses';
import type { CallOptions, CallResult, OpenPlatformClient } from './types';

export { fileNameFromDisposition } from './client-documents';
export { type NodeHttpTransportOptions, nodeHttpTransport } from './client-node-http';
export type { OpenPlatformClientOptions } from './client-settings';
export {
  type HttpTransport,
  type ResponseBody,
  TransportError,
  type TransportRequest,
  type TransportResponse,
} from './client-transport';

/**
 * Create a client. Options are validated up front (an invalid option throws an `invalid-request`
 * {@link OpenPlatformError} naming it); see {@link OpenPlatformClientOptions} for the defaults.
 */
export function createOpenPlatformClient(options: OpenPlatformClientOptions = {}): OpenPlatformClient {
  const parsed = clientOptionsSchema.safeParse(options);
  if (!parsed.success) {
    throw new OpenPlatformError({
      kind: 'invalid-request',
      message: `invalid Open Platform client options: ${formatIssues(parsed.error)}`,
    });
  }
  const settings = parsed.data;
  const own =
    settings.transport === undefined
      ? nodeHttpTransport({ connections: settings.connections, connectTimeoutMs: settings.connectTimeoutMs })
      : undefined;
  let closed = false;

  const ctx = clientContext(settings, settings.transport ?? (own as HttpTransport), () => closed);

  const callByName = async (idOrRef: string, body: unknown, callOptions?: CallOptions) => {
    const entry = typeof idOrRef === 'string' ? findOperation(idOrRef.trim()) : undefined;
    if (!entry) throw unknownOperation(String(idOrRef));
    return callOperation(ctx, entry.operationId as OperationId, body as never, callOptions) as Promise<
      CallResult<OperationId>
    >;
  };

  const close = async () => {
    if (closed) return;
    closed = true;
    await own?.close();
  };

  return {
    call: (operationId, body, callOptions) => callOperation(ctx, operationId, body, callOptions),
    callByName,
    request: (idOrRef, input, callOptions) => requestOperation(ctx, idOrRef, input, callOptions),
    stream: (operationId, body, streamOptions) => streamCall(ctx, operationId, body, streamOptions),
    fetchDocument: (url, callOptions) => fetchDocument(ctx, url, callOptions),
    close,
  };
}

/** One call of a workflow operation: body checked, one attempt, the typed data of its answer. */
async function callOperation<Op extends OperationId>(
  ctx: ClientContext,
  operationId: Op,
  body: RequestOf<Op>,
  callOptions?: CallOptions,
): Promise<CallResult<Op>> {
  const entry = isOperationId(operationId) ? (catalogue[operationId] as OperationEntry) : undefined;
  if (!entry) throw unknownOperation(String(operationId));
  const opts = parseCallOptions(entry.operationId, callOptions);
  const attempt = startAttempt(ctx, entry, entry.operationId, opts);
  let limit: ReturnType<typeof limitSignal> | undefined;
  try {
    const validBody = validateBody(entry, body, attempt);
    // An event stream cannot be read as one envelope; refuse before it is sent and billed.
    if (entry.stream && validBody['stream'] !== false) {
      throw new OpenPlatformError({
        kind: 'invalid-request',
        message: `${entry.operationId} answers with an event stream: use stream()${
          'stream' in requestSchemas[entry.operationId as OperationId].shape
            ? ', or call() with stream: false'
            : ''
        }; nothing was sent`,
        operationId: entry.operationId,
      });
    }
    limit = limitSignal(attempt, opts.timeoutMs ?? ctx.overallTimeoutMs);
    const response = await send(ctx, entry, validBody, attempt, limit.signal, 'application/json');
    if (response.statusCode < 200 || response.statusCode > 299) {
      throw await errorFromResponse(ctx, entry, response);
    }
    const text = await readAnswerText(response.body, ctx.settings.maxAnswerBytes, entry.operationId);
    const data = parseSuccess(entry, text, response, ctx.settings.now());
    const usage = succeedAttempt(ctx, attempt);
    return { data: data as DataOf<Op>, usage };
  } catch (error) {
    throw failAttempt(ctx, attempt, error);
  } finally {
    limit?.release();
  }
}
