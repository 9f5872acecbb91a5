/**
 * The event-stream reader of the chat operations (ai07, ai50, ai20, ai68-2).
 *
 * The platform does not publish its frame format, so this accepts exactly the variants that have
 * been seen, and refuses anything else with a protocol error rather than guessing:
 * - `data:` lines holding a whole envelope whose `data.output.content` is either the next piece
 *   (a delta) or the whole text so far (cumulative), `data.output.status` going from `running` to
 *   `finished`/`stop`/`length`, tokens in `data.output.usage`, references in `data.references` or
 *   `data.output.references`; an envelope with status false is the platform's error;
 * - OpenAI-like frames: `choices[].delta.content`, `choices[].finish_reason`, `usage`
 *   (`prompt_tokens`, `completion_tokens`, `total_tokens`), `chat_id` / `chat_item_id`, bare or
 *   as the `data` of an envelope;
 * - a `[DONE]` terminator, and keep-alive comments (`: ping`).
 * A stream must finish (a finishing status, a finish_reason or `[DONE]`): one that just stops is a
 * protocol error, because the text would be silently cut. One that finished but keeps the connection
 * open is read until it has been idle for the idle timeout, then kept whole.
 */
import { createParser, type EventSourceMessage, type ParseError } from 'eventsource-parser';
import * as z from 'zod';
import { errorMessage } from '../errors/error-message';
import { type Envelope, errorFromAnswer, parseEnvelopeValue } from './envelope';
import { OpenPlatformError } from './errors';
import { lenientInt, lenientString } from './lenient';
import type { StreamReference, StreamResult, TokenUsage } from './types';

/** The assembled answer, before the client adds what the call cost. */
export type AssembledStream = Omit<StreamResult, 'usage'>;

/** What one frame said, whichever variant carried it. */
export interface StreamFrame {
  variant: 'envelope' | 'openai';
  content?: string | undefined;
  /** OpenAI-like frames always carry deltas; envelope frames may carry the text so far. */
  contentIs: 'delta' | 'delta-or-cumulative';
  finishReason?: string | undefined;
  tokens?: Partial<TokenUsage> | undefined;
  references: StreamReference[];
  ids: Record<string, string>;
}

export type FrameReading =
  | { kind: 'frame'; frame: StreamFrame }
  | { kind: 'error-envelope'; envelope: Envelope }
  | { kind: 'problem'; problem: string };

const finishingStatuses = new Set(['finished', 'stop', 'length']);
const runningStatuses = new Set(['running', '']);

/*
 * The frames' schemas are built on first use (`z.lazy`), not at module load: the step worker loads
 * the client at every cold start, and only a stream step reads frames.
 */
const tokenCount = z.lazy(() => lenientInt.nullish());

const reference = z.lazy(() =>
  z.looseObject({
    type: lenientString.nullish(),
    text: lenientString.nullish(),
    value: lenientString.nullish(),
    link: lenientString.nullish(),
  }),
);

const envelopeOutput = z.lazy(() =>
  z.looseObject({
    content: lenientString.nullish(),
    status: lenientString.nullish(),
    usage: z
      .looseObject({ input_tokens: tokenCount, output_tokens: tokenCount, total_tokens: tokenCount })
      .nullish(),
    references: z.array(reference).nullish(),
  }),
);

const envelopeData = z.lazy(() =>
  z.looseObject({
    output: envelopeOutput.nullish(),
    references: z.array(reference).nullish(),
  }),
);

const openAiFrame = z.lazy(() =>
  z.looseObject({
    choices: z.array(
      z.looseObject({
        index: lenientInt.nullish(),
        delta: z.looseObject({ content: lenientString.nullish() }).nullish(),
        finish_reason: lenientString.nullish(),
      }),
    ),
    usage: z
      .looseObject({ prompt_tokens: tokenCount, completion_tokens: tokenCount, total_tokens: tokenCount })
      .nullish(),
  }),
);

/** Interpret one decoded `data:` payload (already JSON-parsed). */
export function interpretFrame(value: unknown): FrameReading {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { kind: 'problem', problem: `a frame is ${describeValue(value)}, not an object` };
  }
  const record = value as Record<string, unknown>;
  if ('choices' in record) return interpretOpenAiFrame(record);
  if ('status' in record || 'error_code' in record) return interpretEnvelopeFrame(record);
  return {
    kind: 'problem',
    problem: `a frame has an unknown shape (fields: ${Object.keys(record).slice(0, 10).join(', ') || 'none'})`,
  };
}

function interpretEnvelopeFrame(record: Record<string, unknown>): FrameReading {
  const parsed = parseEnvelopeValue(record);
  if (!parsed.ok) return { kind: 'problem', problem: `a frame is ${parsed.problem}` };
  const { envelope } = parsed;
  if (!envelope.status) return { kind: 'error-envelope', envelope };
  // OpenAI-like chunks may come wrapped in the platform's envelope.
  if (typeof envelope.data === 'object' && envelope.data !== null && 'choices' in envelope.data) {
    return interpretOpenAiFrame(envelope.data as Record<string, unknown>);
  }
  const data = envelopeData.safeParse(envelope.data);
  if (!data.success || (data.data.output == null && data.data.references == null)) {
    return {
      kind: 'problem',
      problem: 'an envelope frame has neither data.output nor data.references',
    };
  }
  const output = data.data.output ?? undefined;
  const status = output?.status?.trim().toLowerCase();
  if (status !== undefined && !finishingStatuses.has(status) && !runningStatuses.has(status)) {
    return {
      kind: 'problem',
      problem: `an envelope frame has the unknown output status "${clip(status, 40)}"`,
    };
  }
  const usage = output?.usage ?? undefined;
  return {
    kind: 'frame',
    frame: {
      variant: 'envelope',
      content: output?.content ?? undefined,
      contentIs: 'delta-or-cumulative',
      finishReason: status !== undefined && finishingStatuses.has(status) ? status : undefined,
      tokens: usage
        ? {
            input: usage.input_tokens ?? undefined,
            output: usage.output_tokens ?? undefined,
            total: usage.total_tokens ?? undefined,
          }
        : undefined,
      references: [...(data.data.references ?? []), ...(output?.references ?? [])].map(toReference),
      ids: { ...idsIn(envelope.data), ...idsIn(output) },
    },
  };
}

function interpretOpenAiFrame(record: Record<string, unknown>): FrameReading {
  const parsed = openAiFrame.safeParse(record);
  if (!parsed.success) return { kind: 'problem', problem: 'an OpenAI-like frame has malformed choices' };
  // Only the first choice is the answer; others (n > 1) would interleave.
  const choices = parsed.data.choices.filter((choice) => (choice.index ?? 0) === 0);
  const content = choices.map((choice) => choice.delta?.content ?? '').join('');
  const finishReason = choices
    .map((choice) => choice.finish_reason)
    .find((reason) => reason != null && reason !== '');
  const usage = parsed.data.usage ?? undefined;
  return {
    kind: 'frame',
    frame: {
      variant: 'openai',
      content,
      contentIs: 'delta',
      finishReason: finishReason ?? undefined,
      tokens: usage
        ? {
            input: usage.prompt_tokens ?? undefined,
            output: usage.completion_tokens ?? undefined,
            total: usage.total_tokens ?? undefined,
          }
        : undefined,
      references: [],
      ids: idsIn(record),
    },
  };
}

/** Identifiers announced at one level of a frame: `chat_id`, `chat_item_id`, `session_id`, `id`, ... */
function idsIn(value: unknown): Record<string, string> {
  const ids: Record<string, string> = {};
  if (typeof value !== 'object' || value === null) return ids;
  for (const [key, item] of Object.entries(value)) {
    if (!/^(id|[a-z0-9_]*_id)$/i.test(key)) continue;
    if (typeof item === 'string' && item !== '') ids[key] = item;
    else if (typeof item === 'number' && Number.isFinite(item)) ids[key] = String(item);
  }
  return ids;
}

function toReference(value: z.output<typeof reference>): StreamReference {
  const result: StreamReference = {};
  for (const [key, item] of Object.entries(value))
    if (item !== null && item !== undefined) result[key] = item;
  return result;
}

/**
 * Puts the frames of one stream together: the text (deciding whether envelope content is delta or
 * cumulative), the finish, the latest token counts, the references (without repeats) and the ids.
 */
export class StreamAssembler {
  text = '';
  finishReason: string | undefined;
  done = false;
  events = 0;
  readonly references: StreamReference[] = [];
  readonly ids: Record<string, string> = {};
  private tokens: Partial<TokenUsage> = {};
  private mode: 'undecided' | 'delta' | 'cumulative' = 'undecided';
  private readonly referenceKeys = new Set<string>();

  /** Add one frame; returns the new text it contributed (possibly empty) or a problem. */
  add(frame: StreamFrame): { delta: string } | { problem: string } {
    this.events += 1;
    let delta = '';
    const content = frame.content ?? '';
    if (content !== '') {
      const isCumulative = this.contentIsCumulative(frame, content);
      if (isCumulative === 'went-back') {
        return {
          problem: 'a cumulative stream sent text that does not continue the text so far',
        };
      }
      delta = isCumulative ? content.slice(this.text.length) : content;
      this.text += delta;
    }
    if (frame.finishReason !== undefined) this.finishReason = frame.finishReason;
    if (frame.tokens) this.tokens = { ...this.tokens, ...defined(frame.tokens) };
    for (const item of frame.references) {
      const key = JSON.stringify(item);
      if (this.referenceKeys.has(key)) continue;
      this.referenceKeys.add(key);
      this.references.push(item);
    }
    Object.assign(this.ids, frame.ids);
    return { delta };
  }

  /**
   * "Cumulative" when the content starts with the text assembled so far. Once a stream showed
   * itself cumulative it must stay so; once it showed deltas, a delta that happens to repeat the
   * text so far (a repeated token) is still a delta.
   */
  private contentIsCumulative(frame: StreamFrame, content: string): boolean | 'went-back' {
    if (frame.contentIs === 'delta' || this.mode === 'delta') return false;
    const continues = content.startsWith(this.text);
    if (this.mode === 'cumulative') return continues ? true : 'went-back';
    if (this.text === '') return false;
    this.mode = continues ? 'cumulative' : 'delta';
    return continues;
  }

  /** The `[DONE]` terminator. */
  terminate(): void {
    this.done = true;
  }

  get finished(): boolean {
    return this.done || this.finishReason !== undefined;
  }

  result(): AssembledStream {
    const input = this.tokens.input ?? 0;
    const output = this.tokens.output ?? 0;
    return {
      text: this.text,
      references: this.references,
      tokens: { input, output, total: this.tokens.total ?? input + output },
      finishReason: this.finishReason ?? 'done',
      ids: this.ids,
      events: this.events,
    };
  }
}

/**
 * Hand a new piece of text to the caller's `onText`. A callback that throws stops the stream with
 * an `invalid-request` error that says so (its error as `cause`), not with a misleading transport
 * error; the answer was already sent (and billed), so it is not retryable.
 */
export function deliverText(
  onText: ((delta: string) => void) | undefined,
  delta: string,
  operationId: string,
): void {
  if (delta === '' || !onText) return;
  try {
    onText(delta);
  } catch (error) {
    const reason = errorMessage(error);
    throw new OpenPlatformError({
      kind: 'invalid-request',
      message: `${operationId}: the onText callback failed (${clip(reason, 200)}); reading the answer stopped`,
      operationId,
      retryable: false,
      cause: error,
    });
  }
}

/** Where the stream came from, so its errors can say so. */
export interface StreamErrorContext {
  operationId: string;
  httpStatus: number;
  correlationId?: string | undefined;
  /** Whether a stall may be retried: false for operations that create something (the default). */
  retryableAfterSend?: boolean | undefined;
}

export interface ReadEventStreamOptions {
  context: StreamErrorContext;
  /** Called with each new piece of text. */
  onText?: ((delta: string) => void) | undefined;
  /** Give up when no `data:` frame arrived for this long (keep-alive comments do not count). */
  idleTimeoutMs: number;
  /** Stop the source (called on idle timeout and on the first error). */
  abort?: (() => void) | undefined;
  /** Largest single frame accepted, in characters (default 8 MiB). */
  maxFrameChars?: number | undefined;
  /** Largest whole stream accepted, in bytes (default 64 MiB): a stream that never finishes must not fill memory. */
  maxBytes?: number | undefined;
}

const DEFAULT_MAX_STREAM_BYTES = 64 * 1024 * 1024;

/**
 * Read an event stream to its end and assemble the answer. Throws {@link OpenPlatformError}:
 * `protocol` for anything not in the accepted variants or a stream that stops before finishing,
 * `timeout` when idle too long, and the mapped kind for an error envelope inside the stream.
 */
export async function readEventStream(
  source: AsyncIterable<Uint8Array | string>,
  options: ReadEventStreamOptions,
): Promise<AssembledStream> {
  const { context } = options;
  const assembler = new StreamAssembler();
  let failure: OpenPlatformError | undefined;
  const protocol = (problem: string) =>
    new OpenPlatformError({
      kind: 'protocol',
      message: `${context.operationId} stream is not readable: ${problem}${where(context)}`,
      operationId: context.operationId,
      httpStatus: context.httpStatus,
      correlationId: context.correlationId,
    });

  let lastFrameAt = Date.now();
  const onEvent = (event: EventSourceMessage) => {
    if (failure || assembler.done) return;
    lastFrameAt = Date.now();
    const payload = event.data.trim();
    if (payload === '') return;
    if (payload === '[DONE]') {
      assembler.terminate();
      return;
    }
    let value: unknown;
    try {
      value = JSON.parse(payload);
    } catch {
      failure = protocol(
        `a frame is not JSON (${payload.length} characters, starting "${clip(payload, 40)}")`,
      );
      return;
    }
    const reading = interpretFrame(value);
    if (reading.kind === 'problem') {
      failure = protocol(reading.problem);
      return;
    }
    if (reading.kind === 'error-envelope') {
      failure = errorFromAnswer({
        operationId: context.operationId,
        httpStatus: context.httpStatus,
        envelope: reading.envelope,
        correlationId: context.correlationId,
      });
      return;
    }
    const added = assembler.add(reading.frame);
    if ('problem' in added) {
      failure = protocol(added.problem);
      return;
    }
    deliverText(options.onText, added.delta, context.operationId);
  };
  const parser = createParser({
    onEvent,
    onError: (error: ParseError) => {
      if (failure) return;
      failure = protocol(
        error.type === 'max-buffer-size-exceeded'
          ? 'a frame is larger than the accepted maximum'
          : `a line is not an event-stream field${error.field ? ` ("${clip(error.field, 40)}")` : ''}`,
      );
    },
    maxBufferSize: options.maxFrameChars ?? 8 * 1024 * 1024,
  });

  const decoder = new TextDecoder('utf-8');
  const iterator = source[Symbol.asyncIterator]();
  let idleTimer: NodeJS.Timeout | undefined;
  // Kept across idle checks: a second next() while one is pending could lose a chunk.
  let pending: Promise<IteratorResult<Uint8Array | string>> | undefined;
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_STREAM_BYTES;
  let received = 0;
  let stoppedEarly = false;
  try {
    for (;;) {
      pending ??= iterator.next();
      const waitMs = Math.max(0, lastFrameAt + options.idleTimeoutMs - Date.now());
      const idle = new Promise<'idle'>((resolve) => {
        idleTimer = setTimeout(() => resolve('idle'), waitMs);
      });
      const next = await Promise.race([pending, idle]);
      clearTimeout(idleTimer);
      if (next === 'idle') {
        if (Date.now() - lastFrameAt < options.idleTimeoutMs) continue;
        // The answer finished but the connection stayed open: the answer is whole, keep it.
        if (assembler.finished) {
          stoppedEarly = true;
          break;
        }
        throw new OpenPlatformError({
          kind: 'timeout',
          message: `${context.operationId} stream stalled: no frame for ${options.idleTimeoutMs} ms${where(context)}`,
          operationId: context.operationId,
          httpStatus: context.httpStatus,
          correlationId: context.correlationId,
          retryable: context.retryableAfterSend ?? false,
        });
      }
      pending = undefined;
      if (next.done) break;
      received += typeof next.value === 'string' ? next.value.length : next.value.byteLength;
      if (received > maxBytes) throw protocol(`the stream is longer than the accepted ${maxBytes} bytes`);
      parser.feed(typeof next.value === 'string' ? next.value : decoder.decode(next.value, { stream: true }));
      if (failure) throw failure;
      if (assembler.done) {
        stoppedEarly = true;
        break;
      }
    }
    if (!stoppedEarly) {
      // A last event without its blank line still counts; a cut-off line becomes a frame problem.
      parser.feed(`${decoder.decode()}\n\n`);
      if (failure) throw failure;
    }
    if (!assembler.finished) throw protocol('stream ended before finishing');
    if (stoppedEarly) {
      // Finished ([DONE], or idle after the finish) while the connection is open: stop reading.
      options.abort?.();
      pending?.catch(() => undefined);
      void iterator.return?.()?.catch(() => undefined);
    }
    return assembler.result();
  } catch (error) {
    clearTimeout(idleTimer);
    options.abort?.();
    pending?.catch(() => undefined);
    void iterator.return?.()?.catch(() => undefined);
    throw error;
  }
}

function where(context: StreamErrorContext): string {
  return context.correlationId === undefined ? '' : ` [correlation id ${context.correlationId}]`;
}

function defined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, item]) => item !== undefined)) as Partial<T>;
}

function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}…`;
}
