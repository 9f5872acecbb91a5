/**
 * The answers of `POST /jobs/bulk`: a dry run (what would change) or what a call did. Kept apart
 * from the route so the answer schemas (openapi.ts, the tests) load no engine.
 */
import * as z from 'zod';
import { jobStatuses } from '../engine/job-record';
import { bulkActions, bulkFilterSchema, bulkOptionsSchema } from '../runtime/bulk-request';

const echo = {
  action: z.enum(bulkActions),
  where: bulkFilterSchema.describe('the filter, as applied (a tenant-bound caller: its tenant)'),
  options: bulkOptionsSchema,
};

export const bulkPreviewSchema = z.strictObject({
  ...echo,
  dryRun: z.literal(true),
  count: z.number().int().describe('jobs the action would act on now'),
  selection: z.string().describe('a digest of their ids: send it back with count as confirm'),
  statuses: z
    .array(z.enum(jobStatuses))
    .describe("the statuses read: the action's, narrowed by where.status"),
  sample: z.array(
    z.strictObject({
      id: z.string(),
      workflow: z.string(),
      status: z.enum(jobStatuses),
      step: z.string(),
      tenant: z.string(),
      label: z.string().optional(),
      batchId: z.string().optional(),
      createdAt: z.string(),
      error: z.strictObject({ kind: z.string(), message: z.string() }).optional(),
      options: z.array(z.string()).optional().describe('answer: the option ids the job offers'),
      optionLabels: z
        .array(z.string())
        .optional()
        .describe('answer: the labels of the options, in the order of options (what a person reads)'),
    }),
  ),
});

export const bulkOutcomeSchema = z.strictObject({
  ...echo,
  dryRun: z.literal(false),
  count: z.number().int().describe("the count confirmed (the dry run's)"),
  done: z.number().int().describe('jobs acted on so far (every call of this run)'),
  skipped: z.number().int().describe('jobs skipped so far: changed since selected, or refused'),
  doneSample: z.array(z.string()).describe('ids acted on in this call (the first 20)'),
  skippedSample: z
    .array(z.strictObject({ jobId: z.string(), reason: z.string() }))
    .describe('skipped in this call and why (the first 50)'),
  batches: z.array(z.string()).describe('redrive: the batches that run again'),
  cursor: z.string().optional().describe('more to do: send the same request with this cursor'),
});

export const bulkAnswerSchema = z.union([bulkPreviewSchema, bulkOutcomeSchema]);

export const bulkChangedSchema = z.strictObject({
  error: z.strictObject({
    status: z.literal(409),
    code: z.literal('selection-changed'),
    message: z.string(),
  }),
  preview: bulkPreviewSchema.describe('the dry run of the set there is now'),
});
