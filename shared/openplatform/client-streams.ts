/**
 * Streams: a streaming operation's event stream (or the whole JSON answer a server may send
 * instead) assembled into one result, text delivered as it arrives.
 */
import { catalogue, isOperationId, type OperationEntry } from './catalogue';
import {
  errorFromResponse,
  failAttempt,
  limitSignal,
  protocolError,
  startAttempt,
  succeedAttempt,
  successEnvelope,
  unknownOperation,
  validateBody,
} from './client-attempt';
import { type ClientContext, defaultStreamTimeoutMs, parseCallOptions } from './client-settings';
import { readAnswerText, send, type TransportResponse } from './client-transport';
import { correlationIdOf, headerValue } from './envelope';
import { OpenPlatformError } from './errors';
import type { RequestOf } from './schemas/requests';
import {
  type AssembledStream,
  deliverText,
  interpretFrame,
  readEventStream,
  StreamAssembler,
} from './stream';
import type { StreamOperationId, StreamOptions, StreamResult } from './types';

const chatStreams = new Set([
  'ai07ChatCcGptStream',
  'ai50ChatPatGptStream',
  'ai20ChatPharmGptStream',
  'ai68-2ChatAiLsStream',
]);
export const isChatStream = (operationId: string) => chatStreams.has(operationId);

/** One streaming call: its frames assembled into text, tokens and finish reason. */
export async function streamCall(
  ctx: ClientContext,
  operationId: StreamOperationId,
  body: RequestOf<StreamOperationId>,
  streamOptions?: StreamOptions,
): Promise<StreamResult> {
  const entry = isOperationId(operationId) ? (catalogue[operationId] as OperationEntry) : undefined;
  if (!entry) throw unknownOperation(String(operationId));
  const opts = parseCallOptions(entry.operationId, streamOptions);
  const attempt = startAttempt(ctx, entry, entry.operationId, opts);
  let limit: ReturnType<typeof limitSignal> | undefined;
  try {
    if (!entry.stream) {
      throw new OpenPlatformError({
        kind: 'invalid-request',
        message: `${entry.operationId} is not a streaming operation; use call()`,
        operationId: entry.operationId,
      });
    }
    const validBody = validateBody(entry, body, attempt);
    limit = limitSignal(
      attempt,
      opts.timeoutMs ?? ctx.settings.streamTimeoutMs ?? ctx.settings.timeoutMs ?? defaultStreamTimeoutMs,
    );
    const response = await send(
      ctx,
      entry,
      validBody,
      attempt,
      limit.signal,
      'text/event-stream, application/json',
    );
    if (response.statusCode < 200 || response.statusCode > 299) {
      throw await errorFromResponse(ctx, entry, response);
    }
    const contentType = headerValue(response.headers, 'content-type') ?? '';
    const context = {
      operationId: entry.operationId,
      httpStatus: response.statusCode,
      correlationId: correlationIdOf(response.headers),
      retryableAfterSend: attempt.repeatable,
    };
    let assembled: AssembledStream;
    if (/\bjson\b/i.test(contentType)) {
      const text = await readAnswerText(response.body, ctx.settings.maxAnswerBytes, entry.operationId);
      assembled = assemblePlainAnswer(entry, text, response, opts.onText, ctx.settings.now());
    } else {
      assembled = await readEventStream(response.body, {
        context,
        onText: opts.onText,
        idleTimeoutMs: ctx.settings.streamIdleTimeoutMs,
        maxBytes: ctx.settings.maxAnswerBytes,
        abort: () => response.body.destroy(),
      });
    }
    const usage = succeedAttempt(ctx, attempt, {
      events: assembled.events,
      finishReason: assembled.finishReason,
      tokens: assembled.tokens.total,
    });
    return { ...assembled, usage };
  } catch (error) {
    throw failAttempt(ctx, attempt, error);
  } finally {
    limit?.release();
  }
}

/** A complete JSON answer from a streaming operation (the server chose not to stream). */
function assemblePlainAnswer(
  entry: OperationEntry,
  text: string,
  response: TransportResponse,
  onText: ((delta: string) => void) | undefined,
  nowMs: number,
): AssembledStream {
  const correlationId = correlationIdOf(response.headers);
  successEnvelope(entry, text, response, nowMs);
  const reading = interpretFrame(JSON.parse(text));
  if (reading.kind !== 'frame') {
    const problem = reading.kind === 'problem' ? reading.problem : 'an error envelope';
    throw protocolError(entry.operationId, response.statusCode, correlationId, problem);
  }
  const assembler = new StreamAssembler();
  const added = assembler.add(reading.frame);
  if ('problem' in added)
    throw protocolError(entry.operationId, response.statusCode, correlationId, added.problem);
  deliverText(onText, added.delta, entry.operationId);
  const result = assembler.result();
  // A whole answer is finished by nature, even without a status.
  return { ...result, finishReason: reading.frame.finishReason ?? 'finished' };
}
