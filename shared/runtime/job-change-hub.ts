/**
 * The job-change hub every pipeline hands the engine as `onJobChange`: listeners subscribe (progress
 * displays, the dashboard's live view, the job history, ingestion's wake-ups) and each changed job
 * is told to all of them. A listener that throws is ignored: a display's problem must not stop the
 * engine.
 */
import type { Job } from '../engine/job-record';

export type JobChangeListener = (job: Job) => void;

export interface JobChangeHub {
  /** Tells every listener (the engine's `onJobChange`). */
  emit(job: Job): void;
  /** Adds a listener; the returned function removes it. */
  subscribe(listener: JobChangeListener): () => void;
}

export function createJobChangeHub(): JobChangeHub {
  const listeners = new Set<JobChangeListener>();
  return {
    emit(job) {
      for (const listener of listeners) {
        try {
          listener(job);
        } catch {
          // A display's problem must not stop the engine.
        }
      }
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
      };
    },
  };
}
