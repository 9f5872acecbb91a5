/**
 * Opaque list cursors: the sort key of the last job of a page, plus which listing it belongs to.
 * Continuing "after this sort key" is exact because every sort key ends with the unique job id.
 */
import * as z from 'zod';
import { InvalidCursorError } from './errors';

export type ListingKind = 'status' | 'batch' | 'all';

const cursorSchema = z.object({
  v: z.literal(1),
  kind: z.enum(['status', 'batch', 'all']),
  after: z.string().min(1).max(400),
});

export function encodeCursor(kind: ListingKind, after: string): string {
  return Buffer.from(JSON.stringify({ v: 1, kind, after }), 'utf8').toString('base64url');
}

/** The sort key to continue after, or InvalidCursorError when the cursor is not one of ours for `kind`. */
export function decodeCursor(cursor: string, kind: ListingKind): string {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw new InvalidCursorError('cursor is not one this store produced');
  }
  const parsed = cursorSchema.safeParse(value);
  if (!parsed.success) throw new InvalidCursorError('cursor is not one this store produced');
  if (parsed.data.kind !== kind) {
    throw new InvalidCursorError(`cursor belongs to a listing by ${parsed.data.kind}, not by ${kind}`);
  }
  return parsed.data.after;
}
