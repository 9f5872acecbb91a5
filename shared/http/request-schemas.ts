/**
 * What the HTTP routes accept: the zod schemas of their bodies, queries, path parameters and
 * headers. The route table (routes.ts) names them, the routes validate with them, and
 * `GET /openapi.json` describes them: one definition each.
 */
import * as z from 'zod';
import {
  maxDeadlineMs,
  maxUnitsSchema,
  submitJobRequestSchema,
  tenantNameSchema,
} from '../engine/job-commands';
import { jobStatuses } from '../engine/job-record';
import {
  batchUploadBodySchema,
  documentFilesUploadBodySchema,
  manifestUploadBodySchema,
} from '../ingest/upload-request';
import { pauseReasonLimit } from '../schedules/pause';
import { searchFilterShape } from './job-search';

export const jobIdSchema = z.string().regex(/^[0-9A-Za-z_-]{1,64}$/, 'is not a job id');
export const idempotencyKeySchema = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[\x21-\x7e]+$/, 'may hold only visible ASCII characters');

/** The body of `POST /jobs` (also the MCP tool submit_job's arguments). */
export const createBodySchema = submitJobRequestSchema
  .omit({ source: true, idempotencyKey: true, costCap: true })
  .extend({ source: z.enum(['api', 'webhook', 'schedule', 'bulk']).default('api') })
  .strict();

/** The body of `POST /jobs/{id}/selection`. */
export const selectionBodySchema = z.strictObject({
  selected: z.array(z.string().min(1).max(100)).max(1000),
  /** Who answers (a name or mail address), kept in the job's answers; needed where two approvers must confirm. */
  by: z.string().trim().min(1).max(200).optional(),
  /** Through what the answer was given, kept with it. Default: api. */
  via: z.enum(['api', 'mcp', 'dashboard', 'bulk']).default('api'),
});

/** The body of `POST /jobs/{id}/retry` and `POST /batches/{id}/redrive`. */
export const retryBodySchema = z.strictObject({
  fromStart: z
    .boolean()
    .default(false)
    .describe('from the first step (paid calls already made count as repeats), not the step it stopped at'),
  deadlineMs: z
    .number()
    .int()
    .positive()
    .max(maxDeadlineMs, `must be at most ${maxDeadlineMs} (366 days)`)
    .optional()
    .describe('milliseconds from now for the new run (default: as long as the job had the first time)'),
  maxUnits: maxUnitsSchema
    .optional()
    .describe(
      'a new cap of billed units for the job: a job stopped at its cost cap goes on only with a higher one',
    ),
});

/** The query of `GET /jobs` (also the MCP tool list_jobs's arguments). */
export const listQuerySchema = z.strictObject({
  status: z.enum(jobStatuses).optional(),
  batchId: z.string().min(1).max(100).optional(),
  tenant: tenantNameSchema.optional(),
  limit: z.coerce
    .number({ error: 'must be one whole number from 1 to 1000 (a repeated limit= is joined with commas)' })
    .int()
    .min(1)
    .max(1000)
    .default(50),
  cursor: z.string().min(1).max(1000).optional(),
  ...searchFilterShape,
});

/** The query of `GET /jobs/{id}/report`. */
export const reportQuerySchema = z.strictObject({
  file: z
    .string()
    .regex(/^[\w.\- ]{1,200}$/, 'is not a report file name')
    .optional(),
});

/** The query of `GET /batches`. */
export const batchListQuerySchema = z.strictObject({
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: z.string().min(1).max(1000).optional(),
});

/** The body of `POST /schedules/{name}/pause`. */
export const pauseBodySchema = z.strictObject({
  reason: z.string().trim().min(1, 'say why (people see it beside the schedule)').max(pauseReasonLimit),
});

/** A webhook source's name, as in `POST /webhooks/{source}` and opflow.config.json. */
export const webhookSourcePattern = /^[a-z0-9][a-z0-9_-]{0,63}$/;

/** The query of `GET /webhook-deliveries`. */
export const deliveryQuerySchema = z.strictObject({
  source: z.string().regex(webhookSourcePattern, 'is not a webhook source name').optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: z.string().min(1).max(100).optional(),
});

/** The body of `POST /batch-uploads` and `POST /batch-uploads/check`. */
export { batchUploadBodySchema, documentFilesUploadBodySchema, manifestUploadBodySchema };
