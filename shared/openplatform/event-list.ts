/**
 * Reads an event stream whose frames are not chat text (t001's pipeline events: `{step, status,
 * content, task_id}`) into the list of its frames. Each `data:` line is JSON, bare or inside an
 * envelope; an envelope with status false is the platform's error; keep-alive comments and `[DONE]`
 * are skipped. The stream ends when the server closes it.
 */
import { createParser } from 'eventsource-parser';
import { errorFromAnswer, parseEnvelopeValue } from './envelope';
import { OpenPlatformError } from './errors';
import type { StreamErrorContext } from './stream';

export async function readEventList(
  source: AsyncIterable<Uint8Array | string>,
  context: StreamErrorContext,
  maxBytes: number,
): Promise<unknown[]> {
  const frames: unknown[] = [];
  let failure: OpenPlatformError | undefined;
  const protocol = (problem: string) =>
    new OpenPlatformError({
      kind: 'protocol',
      message: `${context.operationId} stream is not readable: ${problem}`,
      operationId: context.operationId,
      httpStatus: context.httpStatus,
      correlationId: context.correlationId,
    });
  const parser = createParser({
    onEvent: (event) => {
      const payload = event.data.trim();
      if (failure || payload === '' || payload === '[DONE]') return;
      let value: unknown;
      try {
        value = JSON.parse(payload);
      } catch {
        failure = protocol(`a frame is not JSON (${payload.length} characters)`);
        return;
      }
      const record = typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
      if ('error_code' in record && ('data' in record || typeof record['status'] === 'boolean')) {
        const envelope = parseEnvelopeValue(value);
        if (envelope.ok && !envelope.envelope.status) {
          failure = errorFromAnswer({ ...context, envelope: envelope.envelope });
          return;
        }
        if (envelope.ok) {
          frames.push(envelope.envelope.data);
          return;
        }
      }
      frames.push(value);
    },
  });
  const decoder = new TextDecoder('utf-8');
  let total = 0;
  for await (const chunk of source) {
    total += typeof chunk === 'string' ? chunk.length : chunk.byteLength;
    if (total > maxBytes) throw protocol(`the stream is larger than the accepted ${maxBytes} bytes`);
    parser.feed(typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true }));
    if (failure) throw failure;
  }
  parser.feed(decoder.decode());
  if (failure) throw failure;
  return frames;
}
