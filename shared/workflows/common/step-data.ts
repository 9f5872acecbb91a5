/**
 * Reading what earlier steps kept, for the workflows' request builders and reports: step outputs
 * re-read through the operation's lenient response schema (so a report never trusts a shape blindly),
 * context values that a step needs, and upstream objects cleaned for echoing back in a request.
 */
import * as z from 'zod';
import {
  type Decision,
  readStreamOutput,
  type StreamOutput,
  streamOutputSchema,
} from '../../engine/workflow';
import type { OperationId } from '../../openplatform/catalogue';
import { type DataOf, responseDataSchemas } from '../../openplatform/schemas/responses';

/**
 * The kept output `name` read as the data of `operation`, or undefined when the step did not run
 * (or kept something that is not that operation's data).
 */
export function outputOf<Op extends OperationId>(
  outputs: Record<string, unknown>,
  name: string,
  operation: Op,
): DataOf<Op> | undefined {
  const value = outputs[name];
  if (value === undefined || value === null) return undefined;
  const parsed = responseDataSchemas[operation].safeParse(value);
  return parsed.success ? (parsed.data as DataOf<Op>) : undefined;
}

/*
 * The schemas of context values (`step.key(name, schema)`). Like the workflows' input schemas, they
 * are built on first use (`z.lazy`), not when a workflow module loads: a cold start that reads no
 * job of a workflow builds none of its schemas (docs/concepts/lambda-bundles.md).
 */
/** A context value that is a non-empty string (an upstream task id, a link). */
export const nonEmpty = z.lazy(() => z.string().min(1));
/** A context value that is a whole number from 1 (a page, a count of pages). */
export const positiveInt = z.lazy(() => z.number().int().positive());
/** A context value that is a whole number from 0 (an index, a count of items). */
export const nonNegativeInt = z.lazy(() => z.number().int().nonnegative());
/** A context value that is a list of strings (ids). */
export const stringList = z.lazy(() => z.array(z.string()));

type WithoutNulls<T> = T extends null
  ? undefined
  : T extends (infer Item)[]
    ? WithoutNulls<Item>[]
    : T extends object
      ? { [Key in keyof T]: WithoutNulls<Exclude<T[Key], null>> }
      : T;

/**
 * A deep copy with every `null` field removed: the platform answers `null` where its request
 * schemas only allow a field to be absent, so echoed objects are cleaned first. Nulls inside arrays
 * are dropped too.
 */
export function withoutNulls<T>(value: T): WithoutNulls<T> {
  if (Array.isArray(value)) {
    return value.filter((item) => item !== null).map((item) => withoutNulls(item)) as WithoutNulls<T>;
  }
  if (value !== null && typeof value === 'object') {
    const copy: Record<string, unknown> = {};
    for (const [key, field] of Object.entries(value)) {
      if (field !== null && field !== undefined) copy[key] = withoutNulls(field);
    }
    return copy as WithoutNulls<T>;
  }
  return value as WithoutNulls<T>;
}

export { type StreamOutput, streamOutputSchema };

/** The kept output of a stream step, or undefined when it did not run. */
export function streamOutputOf(outputs: Record<string, unknown>, name: string): StreamOutput | undefined {
  return readStreamOutput(outputs[name]);
}

/** The relative path of an attachment inside the job's report folder (for links from the report). */
export function attachmentPath(jobId: string, attachment: { key: string; fileName: string }): string {
  const prefix = `reports/${jobId}/`;
  return attachment.key.startsWith(prefix) ? attachment.key.slice(prefix.length) : attachment.fileName;
}

/** Where an upstream task stands, whatever its operation's way of saying it. */
export type TaskState = 'running' | 'succeeded' | 'failed' | 'unknown';

/** `RUNNING` / `SUCCEED` / `FAILED` (find-solution, materials, quick-search report). */
export function wordState(status: string | null | undefined): TaskState {
  if (status === null || status === undefined || status === '') return 'running';
  switch (status.trim().toUpperCase()) {
    case 'RUNNING':
      return 'running';
    case 'SUCCEED':
    case 'SUCCESS':
    case 'SUCCEEDED':
      return 'succeeded';
    case 'FAILED':
    case 'FAIL':
      return 'failed';
    default:
      return 'unknown';
  }
}

/** Integer 1 running, 2 success, 3 failure (novelty search, disclosure generation). */
export function numberState(status: number | null | undefined): TaskState {
  if (status === null || status === undefined) return 'running';
  if (status === 1) return 'running';
  if (status === 2) return 'succeeded';
  if (status === 3) return 'failed';
  return 'unknown';
}

/**
 * The usual decision of a polled step: poll again while running, fail with `what` and the upstream's
 * status when it failed or answered a status we do not know, else `onSuccess`.
 */
export function untilDone<W extends string>(
  state: TaskState,
  what: string,
  status: unknown,
  onSuccess: () => Decision<W>,
): Decision<W> {
  if (state === 'running') return { type: 'poll' };
  if (state === 'failed')
    return { type: 'fail', message: `${what} failed upstream (status ${JSON.stringify(status)})` };
  if (state === 'unknown') {
    return { type: 'fail', message: `${what} answered an unknown status ${JSON.stringify(status)}` };
  }
  return onSuccess();
}
