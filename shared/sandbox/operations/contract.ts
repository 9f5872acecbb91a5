/**
 * What an operation handler receives and returns. Handlers are plain functions of the validated
 * body and a context (the clock reading, the caller, id and stage factories); they throw a
 * `SandboxRejection` for error answers and never touch HTTP.
 */
import type * as z from 'zod';
import type { OperationId } from '../../openplatform/catalogue';
import type { requestSchemas } from '../../openplatform/schemas/requests';
import type { DataOf } from '../../openplatform/schemas/responses';
import type { PublishedDocument } from '../download-links';
import type { DriftRun } from '../drift';
import type { Stage } from '../stages';
import type { TaskRegistry } from '../task-registry';

/** How stream frames are encoded; see shared/sandbox/faults-and-ledger.md ("Event streams"). */
export const streamVariants = ['delta', 'cumulative', 'openai', 'openai-envelope'] as const;
export type StreamVariant = (typeof streamVariants)[number];

export interface OperationContext {
  /** The sandbox clock when the call arrived. */
  readonly now: number;
  /** Fingerprint of the calling key: resources belong to it. */
  readonly owner: string;
  /** The run's seed, for content generators. */
  readonly seed: number;
  /**
   * With drift on: the drift seed and how many times `subject` was asked before (counting this
   * call); undefined with drift off. Content generators mix it in so answers move between runs.
   */
  drift(subject: string): DriftRun | undefined;
  /** A fresh identifier: UUID-shaped, or 32 hex digits. Seeded, so a run is reproducible. */
  newId(shape?: 'uuid' | 'hex'): string;
  /** Start upstream work whose duration is configured for `startedBy`; `salt` varies it per resource. */
  startStage(startedBy: OperationId, salt: string, fails: boolean): Stage;
  /**
   * A fresh download link served by the sandbox for the document kept under `documentKey`;
   * `describe` is called only when that key holds no document yet (rendered once, on first download).
   */
  publish(documentKey: string, describe: () => PublishedDocument): string;
}

/**
 * Makes the registry an operation family keeps its records in; `name` names it in the sandbox's
 * state file, `field` the id in not-found messages, `schema` a record read back from the file.
 */
export type RegistryFactory = <T extends { readonly owner: string }>(
  name: string,
  field: string,
  schema: z.ZodType<T>,
) => TaskRegistry<T>;

export interface StreamPlan {
  /** The answer, in the pieces it is sent in. */
  pieces: string[];
  /** `output.status` of the finished envelope frame, e.g. `finished`. */
  finishStatus: string;
  tokens: { input: number; output: number };
  defaultVariant: StreamVariant;
  /** The `data` of an envelope frame (delta and cumulative variants). */
  envelopeData(content: string, status: string, final: boolean): Record<string, unknown>;
  /** Extra top-level fields of OpenAI-like chunks, e.g. `chat_id`. */
  chunkFields: Record<string, unknown>;
}

export type OperationOutcome<Op extends OperationId> =
  | { kind: 'json'; data: DataOf<Op>; resourceId?: string }
  | { kind: 'stream'; plan: StreamPlan; resourceId?: string };

export type RequestBody<Op extends OperationId> = z.output<(typeof requestSchemas)[Op]>;

export type OperationHandler<Op extends OperationId> = (
  body: RequestBody<Op>,
  context: OperationContext,
) => OperationOutcome<Op>;

export type OperationHandlers = { [Op in OperationId]: OperationHandler<Op> };

export function json<Op extends OperationId>(data: DataOf<Op>, resourceId?: string): OperationOutcome<Op> {
  return resourceId === undefined ? { kind: 'json', data } : { kind: 'json', data, resourceId };
}
