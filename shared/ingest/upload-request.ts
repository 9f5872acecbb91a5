/**
 * The body of a manifest uploaded to start a batch (POST /batch-uploads and its /check), shared by
 * the route (shared/dashboard/start-routes.ts) and the job API's OpenAPI description.
 */
import * as z from 'zod';
import { tenantNameSchema } from '../engine/job-commands';
import { batchNameSchema } from './batch';

export const manifestUploadBodySchema = z.strictObject({
  fileName: z
    .string()
    .regex(
      /^[\w][\w .-]{0,99}\.(jsonl|ndjson|csv|tsv)$/i,
      'must be the name of a .jsonl, .ndjson, .csv or .tsv file',
    ),
  manifest: z
    .string()
    .min(1, 'the manifest is empty')
    .describe("the manifest file's text (.jsonl, .ndjson, .csv or .tsv lines)"),
  workflow: z.string().min(1),
  batchName: batchNameSchema.optional(),
  selection: z.enum(['auto', 'manual']).default('auto'),
  failureBudget: z.string().max(20).optional(),
  maxUnits: z.number().int().positive().optional(),
  tenant: tenantNameSchema.default('default'),
});
