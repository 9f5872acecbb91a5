/**
 * The stream publisher: every piece goes to in-process listeners at once; the text so far is
 * published at most every `everyMs`, only when it grew, one publication at a time, the rest by
 * `finish`. A failing store does not stop the stream.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  type AnswerText,
  createAnswerPublisher,
  type PartialAnswer,
} from '../../../shared/engine/partial-answer';

const job = {
  jobId: 'J1',
  tenant: 'acme',
  workflow: 'llm-chat',
  step: 'ai50',
  status: 'RUNNING',
  version: 3,
};

describe('createAnswerPublisher', () => {
  let now = 0;
  const clock = { now: () => now };
  beforeEach(() => {
    vi.useFakeTimers();
    now = 1_000;
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('tells each piece at once and publishes the text so far at most every everyMs, the rest at the end', async () => {
    const published: PartialAnswer[] = [];
    const pieces: AnswerText[] = [];
    const publisher = createAnswerPublisher(
      {
        store: { publish: async (a) => void published.push(a), read: async () => undefined },
        everyMs: 250,
        onText: (p) => pieces.push(p),
      },
      job,
      clock,
    );
    publisher.add('The ');
    publisher.add('answer ');
    now += 100;
    publisher.add('grows ');
    expect(pieces.map((p) => [p.offset, p.text])).toEqual([
      [0, 'The '],
      [4, 'answer '],
      [11, 'grows '],
    ]);
    // The first piece is published at once; the next two wait for their turn.
    await vi.advanceTimersByTimeAsync(0);
    expect(published.map((a) => [a.offset, a.text])).toEqual([[0, 'The ']]);
    // Its turn: 250 ms after the first publication.
    now += 150;
    await vi.advanceTimersByTimeAsync(250);
    expect(published.map((a) => [a.offset, a.text])).toEqual([
      [0, 'The '],
      [4, 'The answer grows '],
    ]);
    // Nothing grew: nothing more is published, even by finish.
    now += 1_000;
    await vi.advanceTimersByTimeAsync(1_000);
    publisher.add('here.');
    now += 10;
    publisher.add('');
    await publisher.finish();
    expect(published.map((a) => [a.offset, a.text.slice(a.offset)])).toEqual([
      [0, 'The '],
      [4, 'answer grows '],
      [17, 'here.'],
    ]);
    expect(published.at(-1)).toMatchObject({ ...job, text: 'The answer grows here.' });
    await publisher.finish();
    expect(published).toHaveLength(3);
  });

  it('publishes the last piece when its turn comes, even when the stream pauses', async () => {
    const published: string[] = [];
    const publisher = createAnswerPublisher(
      {
        store: { publish: async (a) => void published.push(a.text), read: async () => undefined },
        everyMs: 1_000,
      },
      job,
      clock,
    );
    publisher.add('a');
    now += 10;
    publisher.add('b');
    await vi.advanceTimersByTimeAsync(500);
    expect(published).toEqual(['a']);
    now += 1_000;
    await vi.advanceTimersByTimeAsync(1_000);
    expect(published).toEqual(['a', 'ab']);
    await publisher.finish();
    expect(published).toEqual(['a', 'ab']);
  });

  it('a timer that fires early by the clock waits the rest: publications stay everyMs apart by it', async () => {
    const published: PartialAnswer[] = [];
    const publisher = createAnswerPublisher(
      { store: { publish: async (a) => void published.push(a), read: async () => undefined }, everyMs: 250 },
      job,
      clock,
    );
    publisher.add('a');
    publisher.add('b');
    // The timer fires when 250 ms have passed by its own time, 249 by the clock that stamps `at`.
    now += 249;
    await vi.advanceTimersByTimeAsync(250);
    expect(published.map((a) => a.text)).toEqual(['a']);
    now += 1;
    await vi.advanceTimersByTimeAsync(1);
    expect(published.map((a) => [a.text, a.at])).toEqual([
      ['a', 1_000],
      ['ab', 1_250],
    ]);
  });

  it('goes on when the store fails, and tells why; the next publication carries the text again', async () => {
    const errors: unknown[] = [];
    const published: PartialAnswer[] = [];
    let fail = true;
    const publisher = createAnswerPublisher(
      {
        store: {
          publish: async (a) => {
            if (fail) throw new Error('throttled');
            published.push(a);
          },
          read: async () => undefined,
        },
        everyMs: 100,
        onError: (error) => errors.push(error),
        onText: () => {
          throw new Error('a display failed');
        },
      },
      job,
      clock,
    );
    publisher.add('one ');
    await vi.advanceTimersByTimeAsync(0);
    fail = false;
    now += 100;
    publisher.add('two');
    await publisher.finish();
    expect(errors).toHaveLength(1);
    expect(published.map((a) => a.text)).toEqual(['one two']);
  });
});
