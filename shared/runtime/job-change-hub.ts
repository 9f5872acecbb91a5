/**
 * The job-change hub every pipeline hands the engine as `onJobChange`: listeners subscribe (progress
 * displays, the dashboard's live view, the job history, ingestion's wake-ups) and each changed job
 * is told to all of them. It also tells a streamed answer's text as it arrives in this process
 * (`emitText`, the engine's `partialAnswers.onText`): `opflow run` prints it. A listener that
 * throws is ignored: a display's problem must not stop the engine.
 */
import type { Job } from '../engine/job-record';
import type { AnswerText } from '../engine/partial-answer';

export type JobChangeListener = (job: Job) => void;
export type AnswerTextListener = (piece: AnswerText) => void;

export interface JobChangeHub {
  /** Tells every listener (the engine's `onJobChange`). */
  emit(job: Job): void;
  /** Adds a listener; the returned function removes it. */
  subscribe(listener: JobChangeListener): () => void;
  /** Tells every answer listener a piece of streamed text (the engine's `partialAnswers.onText`). */
  emitText(piece: AnswerText): void;
  /** Adds an answer listener; the returned function removes it. */
  subscribeText(listener: AnswerTextListener): () => void;
}

/** Listeners of one kind: added, removed, each told in turn; one that throws is ignored. */
function listenersOf<T>() {
  const listeners = new Set<(value: T) => void>();
  return {
    emit(value: T) {
      for (const listener of listeners) {
        try {
          listener(value);
        } catch {
          // A display's problem must not stop the engine.
        }
      }
    },
    subscribe(listener: (value: T) => void) {
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
      };
    },
  };
}

export function createJobChangeHub(): JobChangeHub {
  const jobs = listenersOf<Job>();
  const texts = listenersOf<AnswerText>();
  return {
    emit: jobs.emit,
    subscribe: jobs.subscribe,
    emitText: texts.emit,
    subscribeText: texts.subscribe,
  };
}
