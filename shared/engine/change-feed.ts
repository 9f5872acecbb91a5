/**
 * The ChangeFeed port: every committed change of a job or a batch (and each published part of a
 * streamed answer), in commit order, each with a sequence number that only grows. The live feed (`GET /events`) and `opflow batch --watch` read it
 * to learn what changed in any process writing the same store, and a reader that lost its connection
 * resumes after the last number it saw. Each backend has its own adapter.
 */

import type { AnswerPart } from './partial-answer';

/** `answer`: a streamed answer's new text (partial-answer.ts), the job's record unchanged. */
export type ChangeKind = 'job' | 'batch' | 'answer';

/** One committed change: a job's or a batch's new status and step (no input, no result), or an answer's new text. */
export interface Change {
  /** The change's place in commit order: greater than every change committed before it. */
  seq: number;
  kind: ChangeKind;
  /** The job's or the batch's id. */
  id: string;
  tenant: string;
  /** The batch a job belongs to. */
  batchId?: string | undefined;
  workflow?: string | undefined;
  status: string;
  /** The job's current step. */
  step?: string | undefined;
  version: number;
  /** What the job's status and step were before this change (absent when it was created by it). */
  previousStatus?: string | undefined;
  previousStep?: string | undefined;
  /** When the change was written (epoch ms, the writer's clock). */
  at: number;
  /** An `answer` change's new text, and where it starts in the step's text so far. */
  answer?: AnswerPart | undefined;
}

/** Which changes a reader wants: all of them, or those of a tenant, a batch or one job. */
export interface ChangeFilter {
  tenant?: string | undefined;
  batchId?: string | undefined;
  jobId?: string | undefined;
}

export interface ChangeFeed {
  /** The changes after `seq`, oldest first, at most `limit` of them. */
  after(seq: number, limit: number): Promise<Change[]>;
  /** The sequence number of the latest change (0 when there is none). */
  head(): Promise<number>;
  /**
   * The first sequence number still kept: a reader resuming after a number below `oldest() - 1`
   * has lost changes (they were pruned) and must read the state again.
   */
  oldest(): Promise<number>;
}

/** True when `change` is one a reader with `filter` wants (a batch's own change counts for its jobs' readers). */
export function changeMatches(change: Change, filter: ChangeFilter): boolean {
  if (filter.tenant !== undefined && change.tenant !== filter.tenant) return false;
  if (filter.jobId !== undefined) return change.kind !== 'batch' && change.id === filter.jobId;
  if (filter.batchId !== undefined)
    return change.kind === 'batch' ? change.id === filter.batchId : change.batchId === filter.batchId;
  return true;
}

/**
 * Calls `listener` whenever job or batch changes matching `filter` are committed from now on, by any process
 * (the feed is read every `intervalMs`, default 250 ms). Returns the function that stops it.
 */
export function followChanges(
  feed: ChangeFeed,
  filter: ChangeFilter,
  listener: () => void,
  intervalMs = 250,
): () => void {
  let stopped = false;
  let cursor: number | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const page = 500;
  const tick = async () => {
    try {
      cursor ??= await feed.head();
      for (let more = true; more && !stopped; ) {
        const changes = await feed.after(cursor, page);
        if (changes.length > 0) cursor = changes[changes.length - 1]!.seq;
        // An answer's text moves no status: the listener reloads for job and batch changes only.
        if (changes.some((change) => change.kind !== 'answer' && changeMatches(change, filter))) listener();
        more = changes.length === page;
      }
    } catch {
      // The database is busy or closing: the next turn reads again.
    }
    if (!stopped) timer = setTimeout(tick, intervalMs);
  };
  void tick();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
