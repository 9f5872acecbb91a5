/**
 * The extraction's time limit (documents.ts) as a setting: `OPFLOW_EXTRACTION_TIMEOUT_MS`, checked
 * with zod. Its own module, imported on first use: a chunk in the Lambda bundles, so the ingest
 * function's cold start does not grow (zod/mini here put 3.2 KiB more of zod's core in it).
 */
import * as z from 'zod';

/** The variable that sets the extraction's time limit in milliseconds (default: documents.ts's `extractionBudget.timeMs`). */
export const extractionTimeoutVariable = 'OPFLOW_EXTRACTION_TIMEOUT_MS';
/** From 100 ms to 15 minutes (a Lambda function's longest run). */
const extractionTimeoutSchema = z.coerce
  .number({ error: 'must be a number of milliseconds' })
  .int('must be a whole number of milliseconds')
  .min(100, 'must be at least 100 (ms)')
  .max(900_000, 'must be at most 900000 (ms, 15 minutes)');

/**
 * The time limit of one extraction in ms: `OPFLOW_EXTRACTION_TIMEOUT_MS` of `env` when set, else
 * `defaultMs`. Throws naming the variable and its value when it is not a whole number from 100 to
 * 900000.
 */
export function extractionTimeoutMs(
  env: Readonly<Record<string, string | undefined>>,
  defaultMs: number,
): number {
  const raw = env[extractionTimeoutVariable]?.trim();
  if (raw === undefined || raw === '') return defaultMs;
  const parsed = extractionTimeoutSchema.safeParse(raw);
  if (!parsed.success)
    throw new Error(`${extractionTimeoutVariable} ${parsed.error.issues[0]?.message}, got "${raw}"`);
  return parsed.data;
}
