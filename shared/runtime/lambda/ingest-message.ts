/**
 * What an invocation of the ingest function is (pure, zod): an S3 event of uploads under `inbox/`
 * (the bucket's event notification, invoked asynchronously), a continuation `{kind: "continue",
 * hop, batchId?}` (its own hand-over, the sweeper's minute pass, a redrive), S3's test event, or
 * something to drop, with a reason that names the field at fault. No retry helps a malformed event,
 * so it is not retried.
 */
import * as z from 'zod';
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

const continueSchema = z.strictObject({
  kind: z.literal('continue'),
  /** A batch to drive on (a redrive names it); without it, whatever is due. */
  batchId: z
    .string()
    .min(1)
    .max(100)
    .regex(/^[\w.-]+$/, 'is not a batch id')
    .optional(),
  /** Hand-overs before this one in the chain (absent: a chain's first, e.g. the sweeper's). */
  hop: z.number().int().min(0).optional(),
});

const testEventSchema = z.object({ Event: z.literal('s3:TestEvent') }).loose();

export type S3EventRecord = z.infer<typeof s3EventSchema>['Records'][number];

export type IngestEvent =
  | { kind: 'uploads'; records: S3EventRecord[] }
  | { kind: 'continue'; batchId?: string | undefined; hop: number }
  | { kind: 'test' }
  | { kind: 'malformed'; reason: string };

/** Reads one invocation's event. */
export function readIngestEvent(event: unknown): IngestEvent {
  if (typeof event !== 'object' || event === null || Array.isArray(event))
    return { kind: 'malformed', reason: 'the event is not a JSON object' };
  if (testEventSchema.safeParse(event).success) return { kind: 'test' };
  if ('Records' in event) {
    const parsed = s3EventSchema.safeParse(event);
    return parsed.success
      ? { kind: 'uploads', records: parsed.data.Records }
      : { kind: 'malformed', reason: `not an S3 event: ${formatIssues(parsed.error, { limit: 5 })}` };
  }
  if ('kind' in event && event.kind === 'continue') {
    const parsed = continueSchema.safeParse(event);
    return parsed.success
      ? { kind: 'continue', batchId: parsed.data.batchId, hop: parsed.data.hop ?? 0 }
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
