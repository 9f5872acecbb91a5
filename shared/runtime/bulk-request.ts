/**
 * What a bulk action is asked with, at every entry point (`opflow bulk`, `POST /jobs/bulk`, the
 * dashboard's bulk page, MCP's `bulk_action`): the action, the filter that selects the jobs, the
 * action's options, and the dry run or the confirmation of what a dry run counted.
 */
import * as z from 'zod';
import { maxDeadlineMs, tenantNameSchema } from '../engine/job-commands';
import { failureKinds, type Job, type JobStatus, jobStatuses } from '../engine/job-record';

/** retry: run FAILED/CANCELLED jobs again; redrive: the same for items of batches, whose batches run again. */
export const bulkActions = ['retry', 'redrive', 'cancel', 'answer'] as const;
export type BulkAction = (typeof bulkActions)[number];

/** The statuses each action can act on: a filter narrows them, never widens them. */
export const actionStatuses: Readonly<Record<BulkAction, readonly JobStatus[]>> = {
  retry: ['FAILED', 'CANCELLED'],
  redrive: ['FAILED', 'CANCELLED'],
  cancel: ['QUEUED', 'RUNNING', 'WAITING', 'AWAITING_INPUT'],
  answer: ['AWAITING_INPUT'],
};

const datePattern = /^\d{4}-\d{2}-\d{2}$/;
const moment = z
  .string()
  .max(40)
  .refine((value) => !Number.isNaN(Date.parse(value)), 'must be a date (2026-01-31) or an ISO 8601 time');

export const bulkFilterSchema = z.strictObject({
  status: z
    .array(z.enum(jobStatuses))
    .min(1)
    .max(jobStatuses.length)
    .optional()
    .describe('only jobs in these statuses (within the ones the action acts on)'),
  workflow: z.string().min(1).max(100).optional().describe('only jobs of this workflow'),
  tenant: tenantNameSchema.optional().describe('only jobs of this tenant'),
  batchId: z.string().min(1).max(100).optional().describe('only jobs of this batch'),
  label: z
    .string()
    .trim()
    .min(1)
    .max(200)
    .optional()
    .describe('only jobs whose label contains this text (case-insensitive)'),
  createdAfter: moment.optional().describe('created at or after (a date means its start, UTC)'),
  createdBefore: moment.optional().describe('created at or before (a date means its end, UTC)'),
  failureKind: z
    .enum(failureKinds)
    .optional()
    .describe('only jobs whose last error is of this kind (deadline, not-found, quota-exhausted, ...)'),
});
export type BulkFilter = z.output<typeof bulkFilterSchema>;

export const bulkOptionsSchema = z.strictObject({
  fromStart: z
    .boolean()
    .optional()
    .describe('retry, redrive: from the first step (paid calls already made count as repeats)'),
  deadlineMs: z
    .number()
    .int()
    .positive()
    .max(maxDeadlineMs, `must be at most ${maxDeadlineMs} (366 days)`)
    .optional()
    .describe('retry, redrive: milliseconds from now for each new run (default: as long as each had)'),
  selected: z
    .array(z.string().min(1).max(100))
    .min(1)
    .max(1000)
    .optional()
    .describe('answer: the option ids to choose in every job (a job not offering them is skipped)'),
  take: z
    .enum(['defaults'])
    .optional()
    .describe("answer: each job's own defaults (the options the platform marked, or all of them)"),
  by: z
    .string()
    .trim()
    .min(1)
    .max(100)
    .optional()
    .describe("answer: who answers (kept in each job's answers, with how: bulk)"),
});
export type BulkOptions = z.output<typeof bulkOptionsSchema>;

/** What a dry run answered, sent back with the real call: a different selection is refused. */
export const bulkConfirmSchema = z.strictObject({
  count: z.number().int().min(0).describe("the dry run's count"),
  selection: z
    .string()
    .regex(/^[0-9a-f]{32}$/, 'is not a selection a dry run handed out')
    .describe("the dry run's selection (a digest of the ids it counted)"),
});

export const bulkRequestSchema = z
  .strictObject({
    action: z.enum(bulkActions).describe('retry, redrive, cancel or answer'),
    where: bulkFilterSchema.default({}),
    options: bulkOptionsSchema.default({}),
    dryRun: z.boolean().default(false).describe('count and sample what would change; change nothing'),
    confirm: bulkConfirmSchema
      .optional()
      .describe('the count and selection of the dry run: the action runs only on that same set'),
    cursor: z
      .string()
      .min(1)
      .max(2000)
      .optional()
      .describe('from the previous answer: go on where it stopped'),
    sampleSize: z
      .number()
      .int()
      .min(0)
      .max(100)
      .default(20)
      .describe('jobs listed in a dry run (default 20)'),
  })
  .superRefine((request, ctx) => {
    const problem = optionProblem(request.action, request.options);
    if (problem) ctx.addIssue({ code: 'custom', path: ['options', problem.field], message: problem.message });
    if (!request.dryRun && request.confirm === undefined && request.cursor === undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['confirm'],
        message:
          'a bulk action runs only on what a dry run counted: send dryRun: true first, then the same request with confirm: {count, selection} from its answer',
      });
    if (request.dryRun && (request.confirm !== undefined || request.cursor !== undefined))
      ctx.addIssue({ code: 'custom', path: ['dryRun'], message: 'a dry run takes no confirm or cursor' });
  });
export type BulkRequest = z.output<typeof bulkRequestSchema>;
export type BulkRequestInput = z.input<typeof bulkRequestSchema>;

/** Why these options do not fit the action, or undefined when they do. */
function optionProblem(
  action: BulkAction,
  options: BulkOptions,
): { field: string; message: string } | undefined {
  const retrying = action === 'retry' || action === 'redrive';
  if (!retrying && options.fromStart !== undefined)
    return { field: 'fromStart', message: `goes with retry or redrive, not ${action}` };
  if (!retrying && options.deadlineMs !== undefined)
    return { field: 'deadlineMs', message: `goes with retry or redrive, not ${action}` };
  if (action !== 'answer') {
    if (options.selected !== undefined)
      return { field: 'selected', message: `goes with answer, not ${action}` };
    if (options.take !== undefined) return { field: 'take', message: `goes with answer, not ${action}` };
    if (options.by !== undefined) return { field: 'by', message: `goes with answer, not ${action}` };
    return undefined;
  }
  if ((options.selected === undefined) === (options.take === undefined))
    return {
      field: 'selected',
      message: 'answer needs either selected (option ids) or take: "defaults", and not both',
    };
  return undefined;
}

/** The statuses to read for `action` under `filter` (its statuses within the action's). */
export function statusesToRead(action: BulkAction, filter: BulkFilter): JobStatus[] {
  const acted = actionStatuses[action];
  return filter.status === undefined ? [...acted] : acted.filter((status) => filter.status!.includes(status));
}

/** A predicate for what the store's listing does not filter (status, tenant and batch it does). */
export function bulkMatcher(action: BulkAction, filter: BulkFilter): (job: Job) => boolean {
  const after = filter.createdAfter === undefined ? undefined : Date.parse(filter.createdAfter);
  let before = filter.createdBefore === undefined ? undefined : Date.parse(filter.createdBefore);
  if (before !== undefined && datePattern.test(filter.createdBefore!)) before += 24 * 3600_000 - 1;
  const label = filter.label?.toLowerCase();
  return (job) =>
    actionStatuses[action].includes(job.status) &&
    (filter.status === undefined || filter.status.includes(job.status)) &&
    (filter.tenant === undefined || job.tenant === filter.tenant) &&
    (filter.batchId === undefined || job.batchId === filter.batchId) &&
    (action !== 'redrive' || job.batchId !== undefined) &&
    (filter.workflow === undefined || job.workflow === filter.workflow) &&
    (label === undefined || (job.label ?? '').toLowerCase().includes(label)) &&
    (after === undefined || job.createdAt >= after) &&
    (before === undefined || job.createdAt <= before) &&
    (filter.failureKind === undefined || job.lastError?.kind === filter.failureKind);
}
