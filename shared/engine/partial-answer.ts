/**
 * Streamed answers shown as they arrive. While a stream step runs, the runner hands each piece of
 * text to in-process listeners at once (`onText`: the CLI prints it) and publishes the text so far
 * through the PartialAnswerStore port, throttled (`everyMs`): the live feed carries it as `answer`
 * events. A partial answer is never the job's result and never a job record: the job record is
 * written by advance() only, and its committed result stays the final answer. Each backend has its
 * own adapter (a table and a change log row locally, an item and change log items on aws).
 */
import type { Clock } from './ports';

/** A stream step's text so far, as published: `text` from `offset` on is what is new since the last. */
export interface PartialAnswer {
  jobId: string;
  tenant: string;
  batchId?: string | undefined;
  workflow: string;
  /** The stream step. */
  step: string;
  /** The job's status and version while it streams (the record is not written for a partial answer). */
  status: string;
  version: number;
  /** The whole text so far. */
  text: string;
  /** Where the new part starts: the length of the text published before (0: a new stream). */
  offset: number;
  /** When it was published (epoch ms). */
  at: number;
}

/** The part of a PartialAnswer a change feed carries: the new text and where it starts. */
export interface AnswerPart {
  step: string;
  offset: number;
  text: string;
}

/** Where partial answers go: the text so far of each job's stream step, and its new parts in the change feed. */
export interface PartialAnswerStore {
  /** Keeps the text so far (replacing the last) and appends the new part to the change feed. */
  publish(answer: PartialAnswer): Promise<void>;
  /** The text so far of the job's latest streamed step, or undefined when it streamed none lately. */
  read(jobId: string): Promise<PartialAnswer | undefined>;
}

/** One piece of text as it arrived, for in-process listeners. */
export interface AnswerText {
  jobId: string;
  step: string;
  offset: number;
  text: string;
}

/** How the runner publishes partial answers (StepDeps.partialAnswers). */
export interface PartialAnswerOptions {
  /** Where the throttled text so far goes; absent: published to in-process listeners only. */
  store?: PartialAnswerStore | undefined;
  /** The least time between two publications of one stream (250 ms locally, 1 s on aws). */
  everyMs: number;
  /** Told every piece of text as it arrives, unthrottled (the CLI prints it). Must not throw. */
  onText?: ((piece: AnswerText) => void) | undefined;
  /** Told when a publication fails (the stream goes on; the next one carries the text again). */
  onError?: ((error: unknown) => void) | undefined;
}

/** The job a stream is for, as a partial answer names it. */
export type StreamingJob = Pick<
  PartialAnswer,
  'jobId' | 'tenant' | 'batchId' | 'workflow' | 'step' | 'status' | 'version'
>;

/** What the runner holds while one stream runs. */
export interface AnswerPublisher {
  /** A new piece of text (the client's `onText`). */
  add(delta: string): void;
  /** Publishes what grew since the last publication and waits for every publication to end. */
  finish(): Promise<void>;
}

/**
 * A publisher for one stream: pieces go to `onText` at once; the text so far is published at most
 * every `everyMs` and only when it grew, one publication at a time, the last one by `finish`.
 */
export function createAnswerPublisher(
  options: PartialAnswerOptions,
  job: StreamingJob,
  clock: Clock,
): AnswerPublisher {
  let text = '';
  let published = 0;
  let lastAt = Number.NEGATIVE_INFINITY;
  let inFlight: Promise<void> = Promise.resolve();
  let timer: ReturnType<typeof setTimeout> | undefined;
  let finished = false;

  const publishNow = () => {
    timer = undefined;
    if (!options.store || text.length === published) return;
    const at = clock.now();
    const answer: PartialAnswer = { ...job, text, offset: published, at };
    published = text.length;
    lastAt = at;
    const store = options.store;
    inFlight = inFlight.then(() =>
      store.publish(answer).catch((error: unknown) => {
        options.onError?.(error);
      }),
    );
  };

  // Publishes when its turn has come by `clock`, else when it comes, even if the stream pauses
  // meanwhile. A timer can fire a little early by that clock (timers keep a time of their own):
  // then it waits the rest.
  const publishDue = () => {
    timer = undefined;
    const wait = lastAt + options.everyMs - clock.now();
    if (wait <= 0) return publishNow();
    timer = setTimeout(publishDue, wait);
    timer.unref?.();
  };

  return {
    add(delta) {
      if (delta === '' || finished) return;
      const offset = text.length;
      text += delta;
      try {
        options.onText?.({ jobId: job.jobId, step: job.step, offset, text: delta });
      } catch {
        // A display's problem must not stop the stream.
      }
      if (options.store && timer === undefined) publishDue();
    },
    async finish() {
      finished = true;
      if (timer !== undefined) clearTimeout(timer);
      publishNow();
      await inFlight;
    },
  };
}
