/**
 * `GET /events` as a long poll, for a server that cannot stream: API Gateway's HTTP API answers a
 * request in one piece and ends it at 30 s. The answer is the JSON events after the caller's cursor
 * (`Last-Event-ID`, or `?lastEventId=`), waiting up to `waitMs` when there are none, and the cursor
 * the next request resumes after (it moves on even when nothing matched the caller's filter, so the
 * next request does not read the same changes again). The events are those the stream sends, each
 * change once: one the log holds twice is given once in an answer.
 */
import { type Change, type ChangeFilter, changeMatches } from '../engine/change-feed';
import type { PartialAnswer } from '../engine/partial-answer';
import type { BatchView } from '../ingest/batch-view';
import { eventOfChange, type FeedEvent, snapshotEvent, wantsBatch } from './events-hub';

/** One read of a change log: the changes of the caller's scope after a cursor. */
export interface ChangePageReader {
  /** Where a caller with no cursor starts: after everything committed so far. */
  head(): Promise<string>;
  read(cursor: string): Promise<{
    changes: readonly (Omit<Change, 'seq'> & { cursor: string })[];
    cursor: string;
    /** The cursor is older than the changes kept: a `reset` is answered. */
    reset: boolean;
  }>;
}

export interface LongPollOptions {
  reader: ChangePageReader;
  filter: ChangeFilter;
  /** A batch as it looks now (its totals follow its jobs), or undefined when there is none. */
  batchView?: ((batchId: string) => Promise<BatchView | undefined>) | undefined;
  /** A job's streamed text so far: a new listener of one job (no cursor) is sent it first. */
  partialAnswer?: ((jobId: string) => Promise<PartialAnswer | undefined>) | undefined;
  /** How long to wait for a change when there is none. */
  waitMs: number;
  /** Between two reads while waiting. Default: 1 second. */
  pollMs?: number | undefined;
  /** Default: the wall clock (performance.now: the wait is real time, whatever Date says). */
  elapsed?: (() => number) | undefined;
  sleep?: ((ms: number) => Promise<void>) | undefined;
}

/** A long poll's answer: its events (possibly none) and the cursor to resume after. */
export interface LongPollAnswer {
  events: FeedEvent[];
  cursor: string;
}

const realSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** The events after `cursor` (from the head when undefined), waiting up to `waitMs` for the first. */
export async function longPoll(
  cursor: string | undefined,
  options: LongPollOptions,
): Promise<LongPollAnswer> {
  const { reader, filter } = options;
  const elapsed = options.elapsed ?? (() => performance.now());
  const sleep = options.sleep ?? realSleep;
  const started = elapsed();
  const events: FeedEvent[] = [];
  const batches = new Map<string, string>();
  const given = new GivenChanges();
  // A new listener of a batch is sent its totals first, as the stream does.
  if (cursor === undefined && filter.batchId !== undefined && filter.jobId === undefined)
    batches.set(filter.batchId, filter.tenant ?? '');
  let at = cursor ?? (await reader.head());
  // Read after the head: the text so far covers every answer change up to it.
  if (cursor === undefined && filter.jobId !== undefined) {
    const answer = await options.partialAnswer?.(filter.jobId);
    if (answer !== undefined && (filter.tenant ?? answer.tenant) === answer.tenant)
      events.push(snapshotEvent(answer));
  }
  for (;;) {
    const page = await reader.read(at);
    if (page.reset) {
      events.push({ type: 'reset', id: page.cursor, data: { after: at } });
      return { events, cursor: page.cursor };
    }
    for (const change of page.changes) {
      if (change.batchId !== undefined && wantsBatch(filter, change.batchId, change.tenant))
        batches.set(change.batchId, change.tenant);
      if (!changeMatches({ ...change, seq: 0 }, filter) || given.repeats(change)) continue;
      const event = eventOfChange(change, change.cursor);
      if (event) events.push(event);
    }
    at = page.cursor;
    // A full page ends at its last change: more may follow at once.
    const more = page.changes.length > 0 && page.cursor === page.changes[page.changes.length - 1]?.cursor;
    if (events.length > 0 || batches.size > 0 || elapsed() - started >= options.waitMs) break;
    if (!more)
      await sleep(Math.min(options.pollMs ?? 1_000, Math.max(0, options.waitMs - (elapsed() - started))));
  }
  for (const [batchId, tenant] of batches) {
    const view = await options.batchView?.(batchId);
    if (view !== undefined && (tenant === '' ? wantsBatch(filter, batchId, view.tenant) : true))
      events.push({ type: 'batch', data: { batch: view } });
  }
  return { events, cursor: at };
}

/**
 * The changes one answer gave, to drop one the log holds twice (a write tried again after it could
 * not take back its first copy): a job's change at a version already given (or older: a job's
 * changes come in order), or the same part of a streamed answer.
 */
class GivenChanges {
  readonly #versions = new Map<string, number>();
  readonly #parts = new Set<string>();

  /** Whether `change` repeats one given before; if not, it is remembered. */
  repeats(change: Omit<Change, 'seq'>): boolean {
    if (change.kind === 'answer') {
      const part = change.answer;
      const key = JSON.stringify([change.id, change.version, part?.step, part?.offset, part?.text]);
      if (this.#parts.has(key)) return true;
      this.#parts.add(key);
      return false;
    }
    if (change.kind !== 'job') return false;
    const given = this.#versions.get(change.id);
    if (given !== undefined && change.version <= given) return true;
    this.#versions.set(change.id, change.version);
    return false;
  }
}
