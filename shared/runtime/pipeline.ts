/**
 * What the CLI (and any other entry point) needs from a runtime, whatever the backend: the engine's
 * dependencies to submit, answer, cancel and read jobs, and a way to shut down. The local runtime
 * also runs the work in-process; on AWS the work happens in Lambda and `start` is absent.
 */
import type { EngineDeps } from '../engine/deps';
import type { Job } from '../engine/job-record';

export interface Pipeline {
  readonly backend: 'local' | 'aws';
  readonly deps: EngineDeps;
  /** One line for people: where the work goes (never containing a key). */
  readonly description: string;
  /** Starts processing work in this process (workers and sweeper); absent when it happens elsewhere. */
  start?(): void;
  /** Told about every job change this process commits; returns the unsubscribe function. */
  onJobChange?(listener: (job: Job) => void): () => void;
  /** Stops any work in progress gracefully and releases everything the pipeline opened. */
  close(): Promise<void>;
}
