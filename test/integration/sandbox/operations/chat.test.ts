/**
 * The chat operations against the sandbox: each stream variant (delta, cumulative, openai,
 * openai-envelope), the finish frames, the encyclopedia's chat ids, and answers without streaming.
 */
import { request } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PlatformCode, SANDBOX_API_KEY, STREAM_VARIANT_HEADER } from '../../../../shared/sandbox';
import { dataFrames, startTestSandbox, type TestSandbox } from '../sandbox-harness';

const QUESTION = 'How can the cycle life of sodium-ion batteries be extended?';

let harness: TestSandbox;
beforeEach(async () => {
  harness = await startTestSandbox();
});
afterEach(() => harness.close());

const stream = async (ref: string, body: unknown, variant?: string) => {
  const answer = await harness.call(
    ref,
    body,
    variant ? { headers: { [STREAM_VARIANT_HEADER]: variant } } : {},
  );
  expect(answer.status).toBe(200);
  expect(answer.headers['content-type']).toContain('text/event-stream');
  return { ...answer, frames: dataFrames(answer.text) };
};

describe('LLM streams', () => {
  it('streams envelope deltas by default for ai07, then a finished frame with usage', async () => {
    const { frames, text, headers } = await stream('ai07', { prompt: QUESTION });
    expect(text.startsWith(': keep-alive\n\n')).toBe(true);
    expect(Number(headers['x-openapi-amount'])).toBeGreaterThanOrEqual(1);
    const parsed = frames.map((frame) => JSON.parse(frame));
    expect(parsed.length).toBeGreaterThan(3);
    for (const frame of parsed.slice(0, -1)) {
      expect(frame).toMatchObject({ status: true, error_code: 0, data: { output: { status: 'running' } } });
    }
    const last = parsed.at(-1);
    expect(last.data.output).toMatchObject({ status: 'finished', content: '' });
    expect(last.data.output.usage.total_tokens).toBe(
      last.data.output.usage.input_tokens + last.data.output.usage.output_tokens,
    );
    const answer = parsed.map((frame) => frame.data.output.content).join('');
    expect(answer).toContain('sodium-ion');

    const again = await stream('ai07', { prompt: QUESTION });
    expect(again.frames).toEqual(frames);
  });

  it('sends the text so far in the cumulative variant, ending with all of it', async () => {
    const delta = (await stream('ai07', { prompt: QUESTION }, 'delta')).frames.map(
      (f) => JSON.parse(f).data.output.content,
    );
    const cumulative = (await stream('ai07', { prompt: QUESTION }, 'cumulative')).frames.map(
      (f) => JSON.parse(f).data.output.content as string,
    );
    const full = delta.join('');
    for (let i = 1; i < cumulative.length; i++)
      expect(cumulative[i]?.startsWith(cumulative[i - 1] ?? '')).toBe(true);
    expect(cumulative.at(-1)).toBe(full);
  });

  it('sends OpenAI-like chunks, a finish_reason, usage and [DONE] in the openai variants', async () => {
    const { frames } = await stream('ai07', { prompt: QUESTION }, 'openai');
    expect(frames.at(-1)).toBe('[DONE]');
    const chunks = frames.slice(0, -1).map((frame) => JSON.parse(frame));
    const text = chunks.map((chunk) => chunk.choices[0]?.delta?.content ?? '').join('');
    const delta = (await stream('ai07', { prompt: QUESTION }, 'delta')).frames.map(
      (f) => JSON.parse(f).data.output.content,
    );
    expect(text).toBe(delta.join(''));
    expect(chunks[0].choices[0].delta.role).toBe('assistant');
    expect(chunks.at(-2).choices[0].finish_reason).toBe('stop');
    expect(chunks.at(-1).usage.total_tokens).toBeGreaterThan(0);

    const wrapped = (await stream('ai07', { prompt: QUESTION }, 'openai-envelope')).frames;
    expect(wrapped.at(-1)).toBe('[DONE]');
    expect(wrapped.slice(0, -1).map((frame) => JSON.parse(frame).data)).toEqual(chunks);
  });

  it('puts references in the finished frame of ai50 and answers JSON when stream is false', async () => {
    const parsed = (await stream('ai50', { query: QUESTION })).frames.map((frame) => JSON.parse(frame));
    expect(parsed.at(-1).data.references).toHaveLength(3);
    expect(parsed[0].data.references).toBeUndefined();
    const plain = await harness.ok('ai50', { query: QUESTION, stream: false });
    expect(plain.output.status).toBe('finished');
    expect(plain.output.content).toBe(parsed.map((frame) => frame.data.output.content).join(''));
    expect(plain.references).toEqual(parsed.at(-1).data.references);
  });

  it('streams ai20 cumulatively with its session id, references at the end', async () => {
    const parsed = (await stream('ai20', { query: QUESTION, session_id: 'session-1' })).frames.map((f) =>
      JSON.parse(f),
    );
    expect(parsed.every((frame) => frame.data.output.session_id === 'session-1')).toBe(true);
    const last = parsed.at(-1).data.output;
    expect(last.status).toBe('finished');
    expect(last.content).toBe(parsed.at(-2).data.output.content);
    expect(last.references).toHaveLength(2);
  });

  it('refuses an unknown stream variant', async () => {
    const answer = await harness.call(
      'ai07',
      { prompt: QUESTION },
      { headers: { [STREAM_VARIANT_HEADER]: 'morse' } },
    );
    expect(answer.json.error_code).toBe(PlatformCode.invalidParameter);
    expect(answer.json.error_msg).toContain(STREAM_VARIANT_HEADER);
  });

  it('sends frames over time when a chunk delay is set', async () => {
    await harness.close();
    harness = await startTestSandbox({ streamChunkDelayMs: 5 });
    const response = await request(`${harness.sandbox.url}/chat/cc-gpt-stream`, {
      method: 'POST',
      headers: { authorization: `Bearer ${SANDBOX_API_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ prompt: QUESTION }),
    });
    let reads = 0;
    for await (const _ of response.body) reads += 1;
    expect(reads).toBeGreaterThan(3);
  });
});

describe('encyclopedia Q&A', () => {
  it('creates a chat (ai68-1) and streams its answer (ai68-2) as OpenAI-like chunks in envelopes', async () => {
    const chat = await harness.ok('ai68-1', {
      query: QUESTION,
      deep_search: false,
      long_think: false,
      search_website: true,
    });
    expect(chat.chat_id).toMatch(/^[0-9a-f]{32}$/);
    expect(chat.ref_doc).toHaveLength(3);
    const { frames } = await stream('ai68-2', { chat_id: chat.chat_id, chat_item_id: chat.chat_item_id });
    expect(frames.at(-1)).toBe('[DONE]');
    const first = JSON.parse(frames[0] ?? '{}');
    expect(first).toMatchObject({ status: true, error_code: 0 });
    expect(first.data).toMatchObject({ chat_id: chat.chat_id, chat_item_id: chat.chat_item_id });
    expect(first.data.choices[0].delta.content.length).toBeGreaterThan(0);
    const bare = dataFrames(
      (
        await harness.call(
          'ai68-2',
          { chat_id: chat.chat_id, chat_item_id: chat.chat_item_id },
          { headers: { [STREAM_VARIANT_HEADER]: 'openai' } },
        )
      ).text,
    );
    expect(JSON.parse(bare[0] ?? '{}')).toEqual(first.data);
  });

  it('answers 404 for an unknown chat or chat item', async () => {
    const chat = await harness.ok('ai68-1', {
      query: QUESTION,
      deep_search: true,
      long_think: true,
      search_website: false,
    });
    const unknownChat = await harness.call('ai68-2', { chat_id: 'nope', chat_item_id: chat.chat_item_id });
    const unknownItem = await harness.call('ai68-2', { chat_id: chat.chat_id, chat_item_id: 'nope' });
    for (const answer of [unknownChat, unknownItem]) {
      expect(answer.status).toBe(404);
      expect(answer.json.error_code).toBe(PlatformCode.notFound);
    }
    expect(unknownItem.json.error_msg).toContain('chat_item_id');
  });
});
