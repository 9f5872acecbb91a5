/**
 * What a message of the ingest queue is (pure, zod): an S3 event of uploads, the function's own
 * continuation `{kind: "continue", batchId, hop}`, S3's test event, or something to drop, with a
 * reason that names the field at fault. No retry helps a malformed message, so it is not retried.
 */
import * as z from 'zod';
import { errorMessage } from '../../errors/error-message';
import { formatIssues } from '../../errors/zod-issues';

const s3EventSchema = z.object({
  Records: z.array(
    z.object({
      eventName: z.string(),
      s3: z.object({
        bucket: z.object({ name: z.string().min(1) }),
        object: z.object({ key: z.string().min(1), eTag: z.string().optional() }),
      }),
    }),
  ),
});

const continueSchema = z.object({
  kind: z.literal('continue'),
  batchId: z
    .string()
    .min(1)
    .max(100)
    .regex(/^[\w.-]+$/, 'is not a batch id'),
  /** Continuations before this one in the chain (absent: a chain's first, e.g. a redrive's). */
  hop: z.number().int().min(0).optional(),
});

const testEventSchema = z.object({ Event: z.literal('s3:TestEvent') }).loose();

export type S3EventRecord = z.infer<typeof s3EventSchema>['Records'][number];

export type IngestMessage =
  | { kind: 'uploads'; records: S3EventRecord[] }
  | { kind: 'continue'; batchId: string; hop?: number | undefined }
  | { kind: 'test' }
  | { kind: 'malformed'; reason: string };

/** Reads one ingest queue record's body. */
export function readIngestMessage(body: unknown): IngestMessage {
  if (typeof body !== 'string') return { kind: 'malformed', reason: 'the record has no body' };
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch (error) {
    return { kind: 'malformed', reason: `the body is not JSON (${errorMessage(error)})` };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return { kind: 'malformed', reason: 'the body is not a JSON object' };
  if (testEventSchema.safeParse(value).success) return { kind: 'test' };
  if ('Records' in value) {
    const parsed = s3EventSchema.safeParse(value);
    return parsed.success
      ? { kind: 'uploads', records: parsed.data.Records }
      : { kind: 'malformed', reason: `not an S3 event: ${formatIssues(parsed.error, { limit: 5 })}` };
  }
  if ('kind' in value && value.kind === 'continue') {
    const parsed = continueSchema.safeParse(value);
    return parsed.success
      ? { kind: 'continue', batchId: parsed.data.batchId, hop: parsed.data.hop }
      : { kind: 'malformed', reason: `not a continuation: ${formatIssues(parsed.error, { limit: 5 })}` };
  }
  return {
    kind: 'malformed',
    reason: 'neither an S3 event (Records) nor a continuation (kind: "continue")',
  };
}

/** S3 event keys are URL-encoded with `+` for spaces; undefined when the key is not encoded right. */
export function decodeS3Key(key: string): string | undefined {
  try {
    return decodeURIComponent(key.replace(/\+/g, ' '));
  } catch {
    return undefined;
  }
}
