/**
 * Lenient primitives for parsing what the platform answers. Its own examples show `status` as the
 * string "false" and `error_code` as "0", so numbers may arrive as numeric strings and booleans as
 * "true"/"false". A value that is neither is still an error: leniency is about encoding, not about
 * accepting anything.
 */
import * as z from 'zod';

export const lenientBoolean = z.preprocess((value) => {
  if (value === 'true' || value === 'TRUE' || value === 1 || value === '1') return true;
  if (value === 'false' || value === 'FALSE' || value === 0 || value === '0') return false;
  return value;
}, z.boolean());

const numeric = (value: unknown) =>
  typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value)) ? Number(value) : value;

export const lenientNumber = z.preprocess(numeric, z.number());
export const lenientInt = z.preprocess(numeric, z.number().int());
/** Strings sometimes arrive as numbers (ids, status codes such as ai32-1's "1"). */
export const lenientString = z.preprocess(
  (value) => (typeof value === 'number' || typeof value === 'boolean' ? String(value) : value),
  z.string(),
);
