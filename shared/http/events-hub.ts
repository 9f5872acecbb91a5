/**
 * The live feed's hub: one reader of the change feed (shared/engine/change-feed.ts) for every
 * subscriber of a server, whatever their number. Each subscriber keeps its own cursor (the last
 * sequence number it was given) and filter; a round reads the changes after the smallest cursor
 * once, in commit order, and hands each subscriber those after its cursor that it wants; one whose
connection has not drained is skipped until it has, so a slow reader holds back only itself. A batch's
 * totals follow its jobs: the batches touched in a round are read again (at most once a second
 * each) and sent as `batch` events. Memory holds the subscribers and one page of changes, not the
 * jobs: it stays flat as the jobs grow.
 */
import { type Change, type ChangeFeed, type ChangeFilter, changeMatches } from '../engine/change-feed';
import type { AnswerPart, PartialAnswer } from '../engine/partial-answer';
import type { BatchView } from '../ingest/batch-view';

/**
 * One event of the feed. `job`: a job was created or changed status; `step`: it moved within its
 * status (a new step, a poll, a retry); `answer`: a streamed answer's new text (`offset` says where
 * it starts: 0 begins the text anew); `batch`: a batch's totals; `reset`: changes after the given
 * id are no longer kept, read the state again.
 */
export interface FeedEvent {
  type: 'job' | 'step' | 'answer' | 'batch' | 'reset';
  /**
   * The change's place (job and step events): what `Last-Event-ID` resumes after. A sequence number
   * on `opflow serve`; on aws the change log's cursor (dynamodb-change-log.ts).
   */
  id?: number | string | undefined;
  data: unknown;
}

export interface EventsHubOptions {
  feed: ChangeFeed;
  /** A batch as it looks now, or undefined when there is none. */
  batchView(batchId: string): Promise<BatchView | undefined>;
  /** A job's streamed text so far: a new listener of one job is sent it first. */
  partialAnswer?: ((jobId: string) => Promise<PartialAnswer | undefined>) | undefined;
  /** How often the feed is read while someone listens. Default: 200 ms. */
  pollMs?: number | undefined;
  /** A batch's totals are sent at most this often. Default: 1 second. */
  batchEveryMs?: number | undefined;
  /** Changes read per round. Default: 1,000. */
  pageSize?: number | undefined;
  /** Default: the wall clock. */
  now?: (() => number) | undefined;
  /** Told when a round fails (the feed is read again next round). */
  onError?: ((error: unknown) => void) | undefined;
}

/** One listener: what it wants and where it stands. `send` answers false to be dropped (too slow, gone). */
export interface Subscription {
  filter: ChangeFilter;
  send(event: FeedEvent): boolean;
  /**
   * Whether it can take more now (its connection has drained). One that cannot is skipped, its
   * cursor held, until it can: a client catching up is sent as fast as it reads. Default: always.
   */
  ready?(): boolean;
  /** Ends the listener's stream (the hub is closing). */
  end(): void;
}

export interface EventsHub {
  /**
   * Adds a listener after `lastEventId` (from now when undefined). A listener of one batch is sent
   * its totals first; one resuming from before the changes kept is sent a `reset`. Returns the
   * function that removes it.
   */
  subscribe(subscription: Subscription, lastEventId?: number | undefined): Promise<() => void>;
  /** Reads the feed now (a change was committed in this process). */
  wake(): void;
  /** Events handed to listeners so far (for the bench). */
  readonly delivered: number;
  readonly listeners: number;
  /** Stops reading; every listener's stream is ended. */
  close(): Promise<void>;
}

interface Listener extends Subscription {
  cursor: number;
}

/** The job an event names (its status and step as last committed). */
function jobOfChange(change: Omit<Change, 'seq'>) {
  return {
    id: change.id,
    tenant: change.tenant,
    batchId: change.batchId,
    workflow: change.workflow,
    status: change.status,
    step: change.step,
    version: change.version,
  };
}

/** The `answer` event of a job's streamed text (a change's new part, or the text so far from 0). */
export function answerEvent(
  change: Omit<Change, 'seq'> & { answer: AnswerPart },
  id: number | string | undefined,
): FeedEvent {
  const { step, offset, text } = change.answer;
  return {
    type: 'answer',
    id,
    data: {
      job: jobOfChange(change),
      answer: { step, offset, text, length: offset + text.length, at: new Date(change.at).toISOString() },
    },
  };
}

/** The `answer` event carrying a job's whole text so far (no id: it is no place in the feed). */
export function snapshotEvent(answer: PartialAnswer): FeedEvent {
  const { jobId, text, ...rest } = answer;
  return answerEvent(
    { ...rest, kind: 'answer', id: jobId, answer: { step: answer.step, offset: 0, text } },
    undefined,
  );
}

/** The event a change is for a listener (a batch's own change only moves its totals). */
export function eventOfChange(
  change: Omit<Change, 'seq'>,
  id: number | string | undefined = (change as Partial<Change>).seq,
): FeedEvent | undefined {
  if (change.kind === 'batch') return undefined;
  if (change.kind === 'answer')
    return change.answer === undefined ? undefined : answerEvent({ ...change, answer: change.answer }, id);
  return {
    type: change.previousStatus === change.status ? 'step' : 'job',
    id,
    data: {
      job: { ...jobOfChange(change), updatedAt: new Date(change.at).toISOString() },
      previous:
        change.previousStatus === undefined
          ? undefined
          : { status: change.previousStatus, step: change.previousStep },
    },
  };
}

/** Whether a listener with `filter` is sent the totals of a batch of `tenant`. */
export function wantsBatch(filter: ChangeFilter, batchId: string, tenant: string): boolean {
  if (filter.tenant !== undefined && filter.tenant !== tenant) return false;
  if (filter.jobId !== undefined) return false;
  return filter.batchId === undefined || filter.batchId === batchId;
}

export function createEventsHub(options: EventsHubOptions): EventsHub {
  return new Hub(options);
}

/** The hub of createEventsHub: its listeners, the batches due to be sent, and the reading loop. */
class Hub implements EventsHub {
  readonly #options: EventsHubOptions;
  readonly #pollMs: number;
  readonly #batchEveryMs: number;
  readonly #pageSize: number;
  readonly #now: () => number;
  readonly #listeners = new Set<Listener>();
  /** Batches whose totals are due to be sent, by id, with their tenant. */
  readonly #dirty = new Map<string, string>();
  readonly #sentAt = new Map<string, number>();
  #delivered = 0;
  #running: Promise<void> | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #wakeUp: (() => void) | undefined;
  #closed = false;

  constructor(options: EventsHubOptions) {
    this.#options = options;
    this.#pollMs = options.pollMs ?? 200;
    this.#batchEveryMs = options.batchEveryMs ?? 1_000;
    this.#pageSize = options.pageSize ?? 1_000;
    this.#now = options.now ?? Date.now;
  }

  get delivered(): number {
    return this.#delivered;
  }

  get listeners(): number {
    return this.#listeners.size;
  }

  async subscribe(subscription: Subscription, lastEventId?: number | undefined): Promise<() => void> {
    if (this.#closed) throw new Error('the events hub is closed');
    const cursor = await this.#startingCursor(subscription, lastEventId);
    if (cursor === undefined) return () => {};
    await this.#sendFirst(subscription, lastEventId);
    const listener: Listener = { ...subscription, cursor };
    this.#listeners.add(listener);
    this.#running ??= this.#loop();
    return () => {
      this.#listeners.delete(listener);
    };
  }

  wake(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#wakeUp?.();
  }

  async close(): Promise<void> {
    this.#closed = true;
    for (const listener of this.#listeners) listener.end();
    this.#listeners.clear();
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#wakeUp?.();
    await this.#running;
  }

  /**
   * Where a new listener starts: after `lastEventId`, or the head (from now; an id past the head; a
   * `reset` sent when the changes after the id are no longer kept). Undefined: the reset was refused.
   */
  async #startingCursor(
    subscription: Subscription,
    lastEventId: number | undefined,
  ): Promise<number | undefined> {
    const { feed } = this.#options;
    const head = await feed.head();
    if (lastEventId === undefined || lastEventId > head) return head;
    if (lastEventId < head) {
      const oldest = await feed.oldest();
      if (lastEventId + 1 < oldest)
        return subscription.send({ type: 'reset', id: head, data: { after: lastEventId, oldest } })
          ? head
          : undefined;
    }
    return lastEventId;
  }

  /** A new listener of one job gets its text so far; one of a batch, its totals. */
  async #sendFirst(subscription: Subscription, lastEventId: number | undefined): Promise<void> {
    const { filter } = subscription;
    // Read after the head: the text so far covers every answer change up to the cursor.
    if (filter.jobId !== undefined && lastEventId === undefined) {
      const answer = await this.#options.partialAnswer?.(filter.jobId);
      if (answer !== undefined && (filter.tenant ?? answer.tenant) === answer.tenant)
        subscription.send(snapshotEvent(answer));
    }
    if (filter.batchId !== undefined && filter.jobId === undefined) {
      const view = await this.#options.batchView(filter.batchId);
      if (view !== undefined && wantsBatch(filter, filter.batchId, view.tenant))
        subscription.send({ type: 'batch', data: { batch: view } });
    }
  }

  #deliver(listener: Listener, event: FeedEvent): void {
    if (!this.#listeners.has(listener)) return;
    if (listener.send(event)) this.#delivered += 1;
    else this.#listeners.delete(listener);
  }

  /** The totals of the batches touched, each at most once every `batchEveryMs`. */
  async #sendBatches(): Promise<void> {
    for (const [batchId, tenant] of this.#dirty) {
      if (this.#now() - (this.#sentAt.get(batchId) ?? Number.NEGATIVE_INFINITY) < this.#batchEveryMs)
        continue;
      this.#dirty.delete(batchId);
      const wanting = [...this.#listeners].filter((listener) => wantsBatch(listener.filter, batchId, tenant));
      if (wanting.length === 0) continue;
      this.#sentAt.set(batchId, this.#now());
      const view = await this.#options.batchView(batchId);
      if (view === undefined) continue;
      for (const listener of wanting) this.#deliver(listener, { type: 'batch', data: { batch: view } });
    }
  }

  /** One round; true when a full page was read (more may be waiting). */
  async #round(): Promise<boolean> {
    const ready = [...this.#listeners].filter((listener) => listener.ready?.() ?? true);
    if (ready.length === 0) return false;
    const from = Math.min(...ready.map((listener) => listener.cursor));
    const changes = await this.#options.feed.after(from, this.#pageSize);
    for (const change of changes) {
      const batchId = change.kind === 'batch' ? change.id : change.batchId;
      // An answer's text moves no totals.
      if (batchId !== undefined && change.kind !== 'answer') this.#dirty.set(batchId, change.tenant);
      const event = eventOfChange(change);
      for (const listener of ready) {
        if (change.seq <= listener.cursor) continue;
        listener.cursor = change.seq;
        if (event !== undefined && changeMatches(change, listener.filter)) this.#deliver(listener, event);
      }
    }
    await this.#sendBatches();
    return changes.length === this.#pageSize;
  }

  /** Rounds while someone listens: at once after a full page, else every `pollMs` or when woken. */
  async #loop(): Promise<void> {
    while (!this.#closed && this.#listeners.size > 0) {
      let more = false;
      try {
        more = await this.#round();
      } catch (error) {
        this.#options.onError?.(error);
      }
      if (more) continue;
      await new Promise<void>((resolve) => {
        this.#wakeUp = resolve;
        // A batch waiting for its second to pass is sent when it has.
        this.#timer = setTimeout(resolve, this.#pollMs);
      });
      this.#wakeUp = undefined;
    }
    this.#running = undefined;
  }
}
