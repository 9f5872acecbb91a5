/**
 * The body of a work message on the queue: `{jobId, version}`, and `tokenAt` when the message holds
 * a token reserved for the job's call (the store holds the rest). Validated on the way in, because
 * a queue accepts any text.
 */
import * as z from 'zod';
import type { WorkMessage } from '../../engine/ports';
import { formatIssues } from '../../errors/zod-issues';
import { InvalidWorkMessageError } from './errors';

export const workMessageSchema = z.object({
  jobId: z.string().min(1).max(200),
  version: z.number().int().nonnegative(),
  /** A token reserved for the job's call at this time (epoch ms; see WorkMessage). */
  tokenAt: z.number().int().nonnegative().optional(),
});

/** Parse a queue message body, or throw InvalidWorkMessageError saying what is wrong. */
export function parseWorkMessage(body: string): WorkMessage {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    throw new InvalidWorkMessageError(
      `work message is not JSON (starts with ${JSON.stringify(body.slice(0, 40))})`,
    );
  }
  const parsed = workMessageSchema.safeParse(value);
  if (!parsed.success) {
    throw new InvalidWorkMessageError(`work message is not {jobId, version}: ${formatIssues(parsed.error)}`);
  }
  return parsed.data;
}

export function formatWorkMessage(message: WorkMessage): string {
  return JSON.stringify({
    jobId: message.jobId,
    version: message.version,
    ...(message.tokenAt !== undefined ? { tokenAt: Math.round(message.tokenAt) } : {}),
  });
}
