/** How a stream plan becomes frames in each variant. */
import { describe, expect, it } from 'vitest';
import { streamFrames } from '../../../shared/sandbox/event-stream';
import type { StreamPlan } from '../../../shared/sandbox/operations/contract';

const plan: StreamPlan = {
  pieces: ['Hello ', 'there ', 'world.'],
  finishStatus: 'finished',
  tokens: { input: 3, output: 4 },
  defaultVariant: 'delta',
  envelopeData: (content, status, final) => ({
    output: { content, status, ...(final ? { usage: { total_tokens: 7 } } : {}) },
  }),
  chunkFields: { chat_id: 'c1' },
};

describe('streamFrames', () => {
  it('delta: one envelope per piece, then an empty finished frame with usage', () => {
    const { frames, content } = streamFrames(plan, 'delta', 0);
    expect(content).toBe(3);
    expect(frames.map((f) => JSON.parse(f).data.output.content)).toEqual(['Hello ', 'there ', 'world.', '']);
    expect(JSON.parse(frames[3] ?? '')).toEqual({
      data: { output: { content: '', status: 'finished', usage: { total_tokens: 7 } } },
      status: true,
      error_code: 0,
    });
  });

  it('cumulative: the text so far, the finished frame holding all of it', () => {
    const { frames } = streamFrames(plan, 'cumulative', 0);
    expect(frames.map((f) => JSON.parse(f).data.output.content)).toEqual([
      'Hello ',
      'Hello there ',
      'Hello there world.',
      'Hello there world.',
    ]);
  });

  it('openai: chunks with delta content, a stop, usage and [DONE]; openai-envelope wraps the chunks', () => {
    const { frames } = streamFrames(plan, 'openai', 1700000000);
    expect(frames.at(-1)).toBe('[DONE]');
    const chunks = frames.slice(0, -1).map((f) => JSON.parse(f));
    expect(chunks[0]).toMatchObject({
      chat_id: 'c1',
      choices: [{ delta: { role: 'assistant', content: 'Hello ' } }],
    });
    expect(chunks[3].choices[0].finish_reason).toBe('stop');
    expect(chunks[4].usage).toEqual({ prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 });
    const wrapped = streamFrames(plan, 'openai-envelope', 1700000000).frames;
    expect(wrapped.slice(0, -1).map((f) => JSON.parse(f))).toEqual(
      chunks.map((data) => ({ data, status: true, error_code: 0 })),
    );
  });
});
