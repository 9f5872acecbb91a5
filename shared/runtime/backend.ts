/**
 * A backend as a whole: what the CLI, `opflow serve`, the MCP server and the tests work with,
 * whatever the place the jobs live in. The local runtime (./local/pipeline.ts) and the aws runtime
 * (./aws/pipeline.ts) each produce one; a third backend produces one too
 * (docs/guides/adding-a-backend.md). A backend owns its connections: `close()` releases them.
 *
 * No member is optional. Where the backends legitimately differ, `work` says how: the jobs run in
 * this process (local) or in the cloud (aws), each with what only it can do.
 */
import type { SqliteWorkQueue } from '../backends/local';
import type { CallbackSenderDeps } from '../callbacks/sender';
import type { BatchStore } from '../engine/batch-store';
import type { CallbackSecrets } from '../engine/callback-ports';
import type { ChangeFeed } from '../engine/change-feed';
import type { EngineDeps } from '../engine/deps';
import type { JobHistory } from '../engine/history';
import type { Job } from '../engine/job-record';
import type { AnswerText, PartialAnswerStore } from '../engine/partial-answer';
import type { ScheduleStateStore } from '../engine/schedule-ports';
import type { WebhookDeliveryLog } from '../engine/webhook-deliveries';
import type { JobApiClient } from '../job-api-client';
import type { BuiltInSandbox } from './local/sandbox-launch';

export type BackendKind = 'local' | 'aws';

export interface Backend {
  // Lifecycle
  readonly kind: BackendKind;
  /** One line for people: where the records are and where calls go (never containing a key). */
  readonly description: string;
  /** Stops any work in progress gracefully and releases everything the backend opened. */
  close(): Promise<void>;

  // The engine
  /**
   * The engine wired to this backend's ports (./engine-wiring.ts). It is the step runner's whole
   * set; a consumer that needs less takes the narrower type (`JobDeps`, `SweepDeps`).
   */
  readonly deps: EngineDeps;
  /** Told about every job change this process commits; returns the unsubscribe function. */
  onJobChange(listener: (job: Job) => void): () => void;
  /**
   * Told every piece of a streamed answer as it arrives in this process's engine (`opflow run`
   * prints it); returns the unsubscribe function.
   */
  onAnswerText(listener: (piece: AnswerText) => void): () => void;

  // Feature stores
  /** Every committed change of a job (the dashboard's timeline). */
  readonly history: JobHistory;
  /** Bulk ingestion batches. */
  batches(): Promise<BatchStore>;
  /** The state of the configured schedules (last slots, jobs, a pause). */
  scheduleStates(): Promise<ScheduleStateStore>;
  /** The record of webhook deliveries (`GET /webhook-deliveries`). */
  webhookDeliveries(): Promise<WebhookDeliveryLog>;
  /**
   * Every committed job and batch change in commit order, from any process (`GET /events`,
   * `opflow batch --watch`). Rejects, saying so, on a backend that keeps none (aws).
   */
  changeFeed(): Promise<ChangeFeed>;
  /** The text so far of streamed answers (what a feed's new listener of a job is sent first). */
  partialAnswers(): Promise<PartialAnswerStore>;
  /** The per-tenant secrets callbacks are signed with. Rejects, naming the setting, when not set up. */
  callbackSecrets(): Promise<CallbackSecrets>;
  /** What the callback sender needs to deliver (and retry) callbacks from this process. */
  callbackSender(): Promise<CallbackSenderDeps>;

  // Where the work runs
  readonly work: WorkHere | WorkElsewhere;
}

/** The local backend: workers, the sweeper's timer and the callback loop run in this process. */
export interface WorkHere {
  readonly where: 'here';
  /** Starts the workers, the sweeper and the callback loop; refused when opened for records only. */
  start(): void;
  /** Stops claiming work and waits for the steps in progress; `start` may be called again. */
  stop(): Promise<void>;
  /** The built-in sandbox this process runs (started here, or taken over later); undefined: none. */
  readonly sandbox: BuiltInSandbox | undefined;
  /** The database file (`:memory:` for an in-memory one); files people upload are kept beside it. */
  readonly dbPath: string;
  /** The queue of this machine: its messages held by a process whose clock is ahead (clock-skew-notes.ts). */
  readonly queue: Pick<SqliteWorkQueue, 'heldAhead' | 'maxDelayMs' | 'maxLeaseMs'>;
}

/** The aws backend: Lambda functions run the jobs; this process reads and writes records. */
export interface WorkElsewhere {
  readonly where: 'elsewhere';
  /** The ingest function's inbox: uploads that start a batch. */
  readonly inbox: Inbox;
  /**
   * What `opflow doctor` checks of the place the jobs run: its resources answer, every tenant's key
   * secret holds a key (never shown), the account's settings suit it. Never rejects: a check that
   * cannot be made is a failed check with its fix.
   */
  checks(): Promise<HealthCheck[]>;
  /**
   * The stack's job API (`OPFLOW_API_URL`, else ApiUrl in `OPFLOW_STACK_OUTPUTS`), its requests
   * signed with SigV4 by this process's AWS credentials, or carrying `OPFLOW_API_TOKEN` (a stack in
   * JWT mode); undefined when no URL is set. Rejects, naming the variable, on a wrong one.
   */
  jobApi(): Promise<JobApiAccess | undefined>;
  /**
   * The work queue the step worker reads, and its counts of messages ready and in flight
   * (GetQueueAttributes, as `opflow doctor` reads it): a command waiting for its jobs says so when
   * nobody reads it (aws-reachability.ts). Rejects when the queue cannot be read.
   */
  readonly queue: WorkQueueReading;
}

/** A work queue's URL and how many of its messages are waiting and in flight. */
export interface WorkQueueReading {
  readonly url: string;
  counts(): Promise<{ waiting: number; inFlight: number }>;
}

/** A client of the stack's job API, and its URL for people (no credential in it). */
export interface JobApiAccess {
  client: JobApiClient;
  url: string;
}

/** One finding of `opflow doctor`: ok, a warning or a failure, with what to do about it. */
export interface HealthCheck {
  name: string;
  status: 'ok' | 'warn' | 'fail';
  detail: string;
  /** What to do about a warning or a failure. */
  fix?: string | undefined;
}

/** Where `opflow ingest` uploads a manifest or folder so that the cloud ingests it. */
export interface Inbox {
  /** For people: where the uploads go (`s3://bucket/`). */
  readonly location: string;
  /** Uploads one object under `key` with its metadata; resolves with its entity tag. */
  put(
    key: string,
    body: Uint8Array,
    metadata: Record<string, string>,
  ): Promise<{ etag?: string | undefined }>;
  /**
   * Whether the ingest function has received this upload's event (the bucket's notification) and
   * not read it yet: its entry waits in the ingest schedule.
   */
  received(upload: { key: string; etag?: string | undefined }): Promise<boolean>;
  /**
   * Hands a batch back to the ingest function, which follows it again (after --redrive,
   * --max-units): due at once in its schedule, taken by a running driver or the sweeper's next pass.
   */
  handBack(batchId: string): Promise<void>;
}
