import type { ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import {
  interpretFrame,
  OpenPlatformError,
  readEventStream,
  StreamAssembler,
  type StreamFrame,
} from '../../../shared/openplatform';
import { answerJson, scriptedServerForFile, writeSlowly } from './scripted-server';

const KEY = 'stream-key-42';
const { server, client: clientFor } = await scriptedServerForFile(KEY);

const envelopeFrame = (output: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
  `data: ${JSON.stringify({ data: { output, ...extra }, status: true, error_code: 0 })}\n\n`;
const openAiFrame = (body: Record<string, unknown>) => `data: ${JSON.stringify(body)}\n\n`;

/** Serve an event stream: the frames joined, then cut into small pieces that split lines. */
function serveStream(
  frames: string[],
  options: { pieceSize?: number; end?: boolean; contentType?: string } = {},
) {
  server.handle(async (_request, response: ServerResponse) => {
    response.writeHead(200, {
      'content-type': options.contentType ?? 'text/event-stream',
      'x-correlation-id': 'stream-corr',
      'x-openapi-amount': '1',
    });
    const text = frames.join('');
    const size = options.pieceSize ?? 7;
    const pieces: string[] = [];
    for (let index = 0; index < text.length; index += size) pieces.push(text.slice(index, index + size));
    await writeSlowly(response, pieces, 1);
    if (options.end !== false) response.end();
  });
}

async function streamFailure(promise: Promise<unknown>): Promise<OpenPlatformError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(OpenPlatformError);
    return error as OpenPlatformError;
  }
  throw new Error('expected the stream to fail');
}

describe('stream variants (served over real HTTP, split mid-line)', () => {
  it('assembles envelope deltas running→finished, with usage, references and ids', async () => {
    serveStream([
      envelopeFrame({ status: 'running', content: 'Hello' }, { chat_id: 'chat-1' }),
      ': keep-alive\n\n',
      envelopeFrame({ status: 'running', content: ', wor' }),
      envelopeFrame({ status: 'running', content: 'ld' }),
      envelopeFrame(
        {
          status: 'finished',
          content: '',
          usage: { input_tokens: '12', output_tokens: 3, total_tokens: 15 },
        },
        { references: [{ type: 'patent', text: 'A hinge', value: 'US123' }] },
      ),
    ]);
    const pieces: string[] = [];
    const result = await clientFor().stream(
      'ai50ChatPatGptStream',
      { query: 'hinges?' },
      { onText: (delta) => pieces.push(delta) },
    );
    expect(pieces).toEqual(['Hello', ', wor', 'ld']);
    expect(result).toMatchObject({
      text: 'Hello, world',
      finishReason: 'finished',
      tokens: { input: 12, output: 3, total: 15 },
      references: [{ type: 'patent', text: 'A hinge', value: 'US123' }],
      ids: { chat_id: 'chat-1' },
      events: 4,
    });
    expect(result.usage).toMatchObject({
      operationId: 'ai50ChatPatGptStream',
      ok: true,
      billedUnits: 1,
      correlationId: 'stream-corr',
      httpStatus: 200,
    });
    const [request] = server.requests;
    expect(request?.method).toBe('POST');
    expect(request?.headers['content-type']).toBe('application/json');
    expect(request?.headers['accept']).toContain('text/event-stream');
    expect(JSON.parse(request?.body ?? '')).toEqual({ query: 'hinges?' });
  });

  it('assembles cumulative envelope content (the text so far), references under output, status stop', async () => {
    serveStream([
      envelopeFrame({ status: 'running', content: 'The' }),
      envelopeFrame({ status: 'running', content: 'The answer' }),
      envelopeFrame({
        status: 'running',
        content: 'The answer is 42',
        references: [{ type: 'paper', value: 'p1' }],
      }),
      envelopeFrame({
        status: 'stop',
        content: 'The answer is 42.',
        references: [{ type: 'paper', value: 'p1' }],
      }),
    ]);
    const pieces: string[] = [];
    const result = await clientFor().stream(
      'ai07ChatCcGptStream',
      { prompt: 'why?' },
      { onText: (delta) => pieces.push(delta) },
    );
    expect(pieces).toEqual(['The', ' answer', ' is 42', '.']);
    expect(result.text).toBe('The answer is 42.');
    expect(result.finishReason).toBe('stop');
    expect(result.references).toEqual([{ type: 'paper', value: 'p1' }]);
  });

  it('assembles OpenAI-like frames with finish_reason, usage, chat ids and [DONE], over CRLF lines', async () => {
    serveStream(
      [
        openAiFrame({
          chat_id: 'c9',
          chat_item_id: 'i9',
          choices: [{ index: 0, delta: { content: 'Aspirin ' } }],
        }),
        openAiFrame({ choices: [{ index: 0, delta: { content: 'inhibits COX.' }, finish_reason: null }] }),
        openAiFrame({ choices: [{ index: 0, delta: {}, finish_reason: 'length' }] }),
        openAiFrame({ choices: [], usage: { prompt_tokens: 5, completion_tokens: 4, total_tokens: 9 } }),
        'data: [DONE]\n\n',
      ].map((frame) => frame.replace(/\n/g, '\r\n')),
    );
    const result = await clientFor().stream('ai68-2ChatAiLsStream', { chat_id: 'c9', chat_item_id: 'i9' });
    expect(result).toMatchObject({
      text: 'Aspirin inhibits COX.',
      finishReason: 'length',
      tokens: { input: 5, output: 4, total: 9 },
      ids: { chat_id: 'c9', chat_item_id: 'i9' },
    });
  });

  it('assembles OpenAI-like frames wrapped in the envelope', async () => {
    const wrapped = (chunk: Record<string, unknown>) =>
      `data: ${JSON.stringify({ data: chunk, status: true, error_code: 0 })}\n\n`;
    serveStream([
      wrapped({ id: 'chatcmpl-1', choices: [{ index: 0, delta: { role: 'assistant', content: 'Two ' } }] }),
      wrapped({
        id: 'chatcmpl-1',
        choices: [{ index: 0, delta: { content: 'parts' }, finish_reason: 'stop' }],
      }),
      wrapped({
        id: 'chatcmpl-1',
        choices: [],
        usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 },
      }),
      'data: [DONE]\n\n',
    ]);
    const result = await clientFor().stream('ai20ChatPharmGptStream', { query: 'q' });
    expect(result).toMatchObject({
      text: 'Two parts',
      finishReason: 'stop',
      tokens: { total: 3 },
      ids: { id: 'chatcmpl-1' },
    });
  });

  it('accepts [DONE] as the only finish, between keep-alive comments', async () => {
    serveStream([
      ': ping\n\n',
      openAiFrame({ choices: [{ delta: { content: 'ok' } }] }),
      ': ping\n\n',
      'data: [DONE]\n\n',
    ]);
    const result = await clientFor().stream('ai20ChatPharmGptStream', { query: 'q' });
    expect(result.text).toBe('ok');
    expect(result.finishReason).toBe('done');
  });

  it('accepts a last frame without its blank line', async () => {
    serveStream([envelopeFrame({ status: 'running', content: 'a' }), 'data: [DONE]']);
    expect((await clientFor().stream('ai20ChatPharmGptStream', { query: 'q' })).text).toBe('a');
  });

  it('accepts a plain JSON answer when the server does not stream', async () => {
    server.handle((_request, response) =>
      answerJson(response, {
        data: { output: { content: 'whole answer', usage: { input_tokens: 1, output_tokens: 2 } } },
        status: 'true',
        error_code: '0',
      }),
    );
    const pieces: string[] = [];
    const result = await clientFor().stream(
      'ai07ChatCcGptStream',
      { prompt: 'p', stream: false },
      { onText: (delta) => pieces.push(delta) },
    );
    expect(pieces).toEqual(['whole answer']);
    expect(result).toMatchObject({ text: 'whole answer', finishReason: 'finished', tokens: { total: 3 } });
  });
});

describe('stream failures', () => {
  it('maps an error envelope inside the stream', async () => {
    serveStream([
      envelopeFrame({ status: 'running', content: 'par' }),
      `data: ${JSON.stringify({ data: null, status: 'false', error_code: '68300008', error_msg: 'busy' })}\n\n`,
    ]);
    const error = await streamFailure(clientFor().stream('ai50ChatPatGptStream', { query: 'q' }));
    expect(error).toMatchObject({
      kind: 'busy',
      code: 68300008,
      operationId: 'ai50ChatPatGptStream',
      correlationId: 'stream-corr',
    });
    expect(error.usage).toMatchObject({ ok: false, errorKind: 'busy', billedUnits: 1 });
  });

  it.each([
    ['a frame that is not JSON', ['data: {"choices": [\n\n'], 'not JSON'],
    ['a frame of unknown shape', ['data: {"text":"hi"}\n\n'], 'unknown shape'],
    ['a JSON string frame', ['data: "hi"\n\n'], 'not an object'],
    ['a line that is not an event-stream field', ['{"data":{"output":{}}}\n\n'], 'not an event-stream field'],
    [
      'an envelope without output',
      [`data: ${JSON.stringify({ data: { foo: 1 }, status: true })}\n\n`],
      'neither',
    ],
    [
      'an unknown output status',
      [envelopeFrame({ status: 'exploded', content: 'x' })],
      'unknown output status',
    ],
    [
      'cumulative text that goes back',
      [
        envelopeFrame({ status: 'running', content: 'ab' }),
        envelopeFrame({ status: 'running', content: 'abc' }),
        envelopeFrame({ status: 'running', content: 'xyz' }),
      ],
      'does not continue',
    ],
  ])('refuses %s as a protocol error', async (_what, frames, words) => {
    serveStream(frames);
    const error = await streamFailure(clientFor().stream('ai07ChatCcGptStream', { prompt: 'p' }));
    expect(error).toMatchObject({ kind: 'protocol', retryable: false, httpStatus: 200 });
    expect(error.message).toContain(words);
  });

  it('stops with an error naming the onText callback when it throws, for a stream and a whole answer', async () => {
    const throwing = () => {
      throw new Error('screen gone');
    };
    serveStream([
      envelopeFrame({ status: 'running', content: 'a' }),
      envelopeFrame({ status: 'finished', content: 'b' }),
    ]);
    const streamed = await streamFailure(
      clientFor().stream('ai07ChatCcGptStream', { prompt: 'p' }, { onText: throwing }),
    );
    server.handle((_request, response) =>
      answerJson(response, { data: { output: { content: 'whole' } }, status: true, error_code: 0 }),
    );
    const whole = await streamFailure(
      clientFor().stream('ai07ChatCcGptStream', { prompt: 'p', stream: false }, { onText: throwing }),
    );
    for (const error of [streamed, whole]) {
      expect(error).toMatchObject({ kind: 'invalid-request', retryable: false, httpStatus: 200 });
      expect(error.message).toContain('the onText callback failed (screen gone)');
      expect((error.cause as Error).message).toBe('screen gone');
    }
  });

  it('refuses a stream that stops without finishing', async () => {
    serveStream([envelopeFrame({ status: 'running', content: 'half an ans' })]);
    const error = await streamFailure(clientFor().stream('ai07ChatCcGptStream', { prompt: 'p' }));
    expect(error.kind).toBe('protocol');
    expect(error.message).toContain('stream ended before finishing');
  });

  it('refuses a stream cut in the middle of a frame', async () => {
    serveStream([envelopeFrame({ status: 'running', content: 'abc' }), 'data: {"data":{"output":{"con']);
    const error = await streamFailure(clientFor().stream('ai07ChatCcGptStream', { prompt: 'p' }));
    expect(error.kind).toBe('protocol');
  });

  it('times out a stalled stream even while keep-alive comments arrive; not retryable', async () => {
    let pingsLeft = 100;
    server.handle(async (_request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write(envelopeFrame({ status: 'running', content: 'thinking' }));
      for (; pingsLeft > 0 && !response.destroyed; pingsLeft--) {
        response.write(': ping\n\n');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    });
    const error = await streamFailure(
      clientFor({ streamIdleTimeoutMs: 150 }).stream('ai07ChatCcGptStream', { prompt: 'p' }),
    );
    expect(error).toMatchObject({ kind: 'timeout', retryable: false });
    expect(error.message).toContain('no frame for 150 ms');
    // It gave up on the idle rule while the server was still sending pings, not when they ended.
    expect(pingsLeft).toBeGreaterThan(0);
  });

  it('keeps a finished answer whose connection then stays open, after the idle timeout', async () => {
    server.handle(async (_request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write(envelopeFrame({ status: 'running', content: 'all ' }));
      response.write(envelopeFrame({ status: 'finished', content: 'done' }));
      // never ends: the client must stop reading on its own
    });
    const result = await clientFor({ streamIdleTimeoutMs: 100 }).stream('ai07ChatCcGptStream', {
      prompt: 'p',
    });
    expect(result).toMatchObject({ text: 'all done', finishReason: 'finished' });
    expect(result.usage.ok).toBe(true);
  });

  it('refuses a stream longer than maxAnswerBytes', async () => {
    serveStream(
      Array.from({ length: 40 }, () => envelopeFrame({ status: 'running', content: 'x'.repeat(50) })),
      { pieceSize: 500 },
    );
    const error = await streamFailure(
      clientFor({ maxAnswerBytes: 1000 }).stream('ai07ChatCcGptStream', { prompt: 'p' }),
    );
    expect(error).toMatchObject({ kind: 'protocol', httpStatus: 200 });
    expect(error.message).toContain('longer than the accepted 1000 bytes');
  });

  it('calls a stream whose connection closes mid-frame a cut-off answer (protocol), not retryable', async () => {
    server.handle(async (_request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write(envelopeFrame({ status: 'running', content: 'a' }));
      await new Promise((resolve) => setTimeout(resolve, 10));
      response.write('data: {"data":{"out', () => response.socket?.destroy());
    });
    const error = await streamFailure(clientFor().stream('ai07ChatCcGptStream', { prompt: 'p' }));
    expect(error).toMatchObject({ kind: 'protocol', retryable: false, httpStatus: 200 });
  });

  it('maps an HTTP error answer of a streaming operation', async () => {
    server.handle((_request, response) =>
      answerJson(response, { status: false, error_code: 67200002, error_msg: 'qps' }, 429, {
        'retry-after': '2',
      }),
    );
    const error = await streamFailure(clientFor().stream('ai07ChatCcGptStream', { prompt: 'p' }));
    expect(error).toMatchObject({ kind: 'throttled', retryable: true, retryAfterMs: 2000, httpStatus: 429 });
  });

  it('refuses an invalid body and an operation that does not stream, sending nothing', async () => {
    const client = clientFor();
    expect((await streamFailure(client.stream('ai07ChatCcGptStream', { prompt: '' }))).message).toContain(
      'prompt',
    );
    expect(
      (await streamFailure(client.stream('ai33-2Step2V3' as never, { task_id: 't' } as never))).message,
    ).toContain('not a streaming operation');
    expect(server.requests).toHaveLength(0);
  });

  it('applies an overall time limit when the call asks for one', async () => {
    server.handle(async (_request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      for (let index = 0; index < 50 && !response.destroyed; index++) {
        response.write(envelopeFrame({ status: 'running', content: 'x' }));
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    });
    const error = await streamFailure(
      clientFor().stream('ai07ChatCcGptStream', { prompt: 'p' }, { timeoutMs: 100 }),
    );
    expect(error).toMatchObject({ kind: 'timeout', retryable: false });
  });
});

describe('frame interpretation', () => {
  const frame = (
    content: string,
    contentIs: StreamFrame['contentIs'] = 'delta-or-cumulative',
  ): StreamFrame => ({
    variant: 'envelope',
    content,
    contentIs,
    references: [],
    ids: {},
  });

  it('keeps a stream in delta mode once it showed deltas, so a repeated token is not lost', () => {
    const assembler = new StreamAssembler();
    for (const piece of ['ha', ' ', 'ha', ' ', 'ha']) assembler.add(frame(piece));
    expect(assembler.text).toBe('ha ha ha');
  });

  it('treats OpenAI-like content as deltas even when it repeats the text so far', () => {
    const assembler = new StreamAssembler();
    assembler.add(frame('ab', 'delta'));
    assembler.add(frame('ab', 'delta'));
    expect(assembler.text).toBe('abab');
  });

  it('reads error envelopes and refuses non-objects', () => {
    expect(interpretFrame({ status: 'false', error_code: '67200002' })).toMatchObject({
      kind: 'error-envelope',
    });
    expect(interpretFrame(null)).toMatchObject({ kind: 'problem' });
    expect(interpretFrame([1])).toMatchObject({ kind: 'problem' });
  });

  it('reads a stream given as strings, and finishes on a finishing status', async () => {
    async function* source() {
      yield envelopeFrame({ status: 'running', content: 'x' }).slice(0, 10);
      yield envelopeFrame({ status: 'running', content: 'x' }).slice(10);
      yield envelopeFrame({ status: 'length', content: 'y' });
    }
    const result = await readEventStream(source(), {
      context: { operationId: 'op', httpStatus: 200 },
      idleTimeoutMs: 1000,
    });
    expect(result).toMatchObject({ text: 'xy', finishReason: 'length', events: 2 });
  });
});
