/**
 * The long poll of GET /events (aws): the events after a cursor, each change once and a job's in
 * order, even when the log it reads holds a change twice.
 */
import { describe, expect, it } from 'vitest';
import type { Change } from '../../../shared/engine/change-feed';
import { type ChangePageReader, longPoll } from '../../../shared/http/events-long-poll';

type Logged = Omit<Change, 'seq'> & { cursor: string };

const job = (id: string, version: number, cursor: string, status = 'RUNNING'): Logged => ({
  cursor,
  kind: 'job',
  id,
  tenant: 'acme',
  status,
  step: `step-${version}`,
  version,
  at: 0,
});

const part = (offset: number, text: string, cursor: string): Logged => ({
  ...job('chat', 2, cursor),
  kind: 'answer',
  answer: { step: 'ask', offset, text },
});

/** A reader of one page holding `changes`, then nothing. */
function reader(changes: Logged[]): ChangePageReader {
  let read = false;
  return {
    head: async () => '0000000000000-z',
    read: async () => {
      const page = read ? [] : changes;
      read = true;
      return { changes: page, cursor: page.at(-1)?.cursor ?? '0000000000009-z', reset: false };
    },
  };
}

const poll = (changes: Logged[]) =>
  longPoll('0000000000000-z', { reader: reader(changes), filter: { tenant: 'acme' }, waitMs: 0 });

describe('longPoll', () => {
  it('gives a job change the log holds twice once, and not after a later version', async () => {
    const answer = await poll([
      job('a', 1, '0000000000001-1', 'QUEUED'),
      job('a', 2, '0000000000001-2'),
      job('b', 1, '0000000000002-1', 'QUEUED'),
      // Written again with a new stamp: the same version, after the job's next one.
      job('a', 2, '0000000000003-2'),
      job('a', 1, '0000000000003-1', 'QUEUED'),
      job('a', 3, '0000000000004-3'),
    ]);
    const given = answer.events.map((event) => {
      const { job: changed } = event.data as { job: { id: string; version: number } };
      return [changed.id, changed.version, event.id];
    });
    expect(given).toEqual([
      ['a', 1, '0000000000001-1'],
      ['a', 2, '0000000000001-2'],
      ['b', 1, '0000000000002-1'],
      ['a', 3, '0000000000004-3'],
    ]);
    // The cursor still moves past the copies dropped.
    expect(answer.cursor).toBe('0000000000004-3');
  });

  it("gives a streamed answer's part once, and a restart at offset 0 with other text", async () => {
    const answer = await poll([
      part(0, 'Hello ', '0000000000001-1'),
      part(6, 'world', '0000000000001-2'),
      part(0, 'Hello ', '0000000000002-1'),
      part(0, 'Hi', '0000000000003-1'),
    ]);
    expect(answer.events.map((event) => (event.data as { answer: { text: string } }).answer.text)).toEqual([
      'Hello ',
      'world',
      'Hi',
    ]);
  });
});
