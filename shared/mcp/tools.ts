/**
 * Every MCP tool of opflow, in the order of the server's tool list. docs/guides/mcp.md and
 * `opflow mcp --help` list them (a test holds both to this table). The argument schemas are the
 * job API's zod schemas, narrowed where that helps an agent (the workflow name as an enum). No
 * tool waits for a workflow (MCP clients give up on a call after about a minute): `submit_job`
 * answers with the job id at once, `get_job` tells where the job is and what to do next.
 */
import * as z from 'zod';
import {
  createBodySchema,
  idempotencyKeySchema,
  jobIdSchema,
  listQuerySchema,
  retryBodySchema,
  selectionBodySchema,
} from '../http/job-api';
import { getBatchTool, ingestTool } from './batch-tools';
import { bulkActionTool } from './bulk-tools';
import { defineTool, guarded, type McpTool, result, type ToolContext, type WorkflowNames } from './tool-spec';
import { listWebhookSourcesTool } from './webhook-tools';

/** The fields a listing shows of each job (the whole record is `get_job`'s). */
interface JobSummaryView {
  id: string;
  workflow: string;
  label?: string;
  status: string;
  step: string;
  tenant: string;
  batchId?: string;
  source: string;
  createdAt: unknown;
  updatedAt: unknown;
  lastError?: { message: string };
}

/** The first sentence or line of a description: what a tool listing shows. */
export function oneLine(text: string): string {
  const line = text.trim().split('\n')[0] ?? '';
  const sentence = /^(.+?[.!?])(\s|$)/.exec(line)?.[1] ?? line;
  return sentence.length > 200 ? `${sentence.slice(0, 197)}...` : sentence;
}

/** The title and one-line summary of a succeeded job's report, from its result.json. */
async function reportSummary(
  ctx: ToolContext,
  jobId: string,
): Promise<{ title?: string; summary?: string } | undefined> {
  try {
    const parsed = JSON.parse(await ctx.reportText(jobId, 'json')) as { title?: string; summary?: string };
    return { title: parsed.title, summary: parsed.summary };
  } catch {
    return undefined;
  }
}

const jobIdArgs = z.strictObject({
  jobId: jobIdSchema.describe('the job id (from submit_job or list_jobs)'),
});

const jobPath = (jobId: string, rest = '') => `/jobs/${encodeURIComponent(jobId)}${rest}`;
const followJob = 'call get_job every few seconds to follow the job';

const listWorkflows = defineTool({
  name: 'list_workflows',
  title: 'List workflows',
  description: 'The workflows opflow runs, each with a one-line description and its input JSON Schema.',
  inputSchema: () => z.strictObject({}),
  annotations: { readOnlyHint: true, openWorldHint: false },
  handler: ({ deps }) =>
    guarded(async () => {
      const workflows = [...deps.workflows.keys()].sort().map((name) => {
        const workflow = deps.workflows.get(name)!;
        return {
          name,
          description: oneLine(workflow.description),
          inputSchema: z.toJSONSchema(workflow.input, { io: 'input', unrepresentable: 'any' }),
        };
      });
      return result({ workflows });
    }),
});

const submitJob = defineTool({
  name: 'submit_job',
  title: 'Submit a job',
  description:
    'Start a job of a workflow; answers at once with the job id and status (it does not wait for the workflow: follow it with get_job).',
  inputSchema: (workflowNames: WorkflowNames) =>
    createBodySchema
      .omit({ source: true })
      .extend({
        workflow: z.enum(workflowNames).describe('the workflow to run (list_workflows describes each)'),
        input: z
          .unknown()
          .describe(
            'the workflow\'s input: an object matching its inputSchema from list_workflows, e.g. {"text": "..."} for novelty-check',
          ),
        selection: createBodySchema.shape.selection.describe(
          'selection points: {"mode": "auto"} takes the defaults; {"mode": "manual"} stops at AWAITING_INPUT until answer_selection',
        ),
        priority: createBodySchema.shape.priority.describe(
          "high, normal (default) or low: how soon its calls get the key's tokens; high goes ahead of running batches",
        ),
        maxUnits: createBodySchema.shape.maxUnits.describe(
          'the most billed units the job may spend: once reached it stops before its next step (FAILED, kind cost-cap)',
        ),
        idempotencyKey: idempotencyKeySchema
          .optional()
          .describe('the same key (per tenant) returns the same job instead of starting another'),
      })
      .strict(),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  handler: ({ api }) =>
    guarded(async ({ idempotencyKey, ...body }) => {
      const answer = (await api('POST', '/jobs', {
        body: { ...body, source: 'api' },
        headers: idempotencyKey === undefined ? {} : { 'idempotency-key': idempotencyKey },
      })) as { job: Record<string, unknown>; created: boolean };
      return result({
        jobId: answer.job.id,
        status: answer.job.status,
        created: answer.created,
        job: answer.job,
        next: 'call get_job with this jobId every few seconds until it is SUCCEEDED, FAILED, CANCELLED or AWAITING_INPUT',
      });
    }),
});

const getJob = defineTool({
  name: 'get_job',
  title: 'Get a job',
  description:
    'One job: status, current step, usage, last error, the pending selection with its options, and the report summary once it succeeded.',
  inputSchema: () => jobIdArgs,
  annotations: { readOnlyHint: true, openWorldHint: false },
  handler: (ctx) =>
    guarded(async ({ jobId }) => {
      const { job } = (await ctx.api('GET', jobPath(jobId))) as {
        job: Record<string, unknown> & { status: string };
      };
      const answer: Record<string, unknown> = { job };
      if (job.status === 'SUCCEEDED') {
        answer.report = await reportSummary(ctx, jobId);
        answer.next = 'read the report with get_report';
      } else if (job.status === 'AWAITING_INPUT') {
        answer.next =
          'choose option ids from job.pending.options (between job.pending.min and job.pending.max of them) and call answer_selection';
      } else if (!['FAILED', 'CANCELLED'].includes(job.status)) {
        answer.next = 'the job is still working: call get_job again in a few seconds';
      }
      return result(answer);
    }),
});

const listJobs = defineTool({
  name: 'list_jobs',
  title: 'List jobs',
  description:
    'Jobs, most recently updated first, with optional filters; pass the returned cursor for the next page.',
  inputSchema: () => listQuerySchema,
  annotations: { readOnlyHint: true, openWorldHint: false },
  handler: ({ api }) =>
    guarded(async (args) => {
      const query: Record<string, string> = {};
      for (const [name, value] of Object.entries(args)) {
        if (value !== undefined) query[name] = String(value);
      }
      const page = (await api('GET', '/jobs', { query })) as {
        jobs: (JobSummaryView & Record<string, unknown>)[];
        cursor?: string;
      };
      const jobs = page.jobs.map((job) => ({
        id: job.id,
        workflow: job.workflow,
        label: job.label,
        status: job.status,
        step: job.step,
        tenant: job.tenant,
        batchId: job.batchId,
        source: job.source,
        createdAt: job.createdAt,
        updatedAt: job.updatedAt,
        error: job.lastError?.message,
      }));
      return result({ jobs, cursor: page.cursor });
    }),
});

const answerSelection = defineTool({
  name: 'answer_selection',
  title: 'Answer a selection',
  description:
    "Choose the options (by id, from get_job's job.pending.options) of a job in AWAITING_INPUT; the job then goes on.",
  inputSchema: () =>
    jobIdArgs
      .extend({ selected: selectionBodySchema.shape.selected, by: selectionBodySchema.shape.by })
      .strict(),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  handler: ({ api }) =>
    guarded(async ({ jobId, selected, by }) => {
      const { job } = await api('POST', jobPath(jobId, '/selection'), {
        body: { selected, via: 'mcp', ...(by === undefined ? {} : { by }) },
      });
      return result({ job, next: followJob });
    }),
});

const cancelJob = defineTool({
  name: 'cancel_job',
  title: 'Cancel a job',
  description:
    'Cancel a job that has not finished (a call already under way finishes, its result is dropped).',
  inputSchema: () => jobIdArgs,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  handler: ({ api }) => guarded(async ({ jobId }) => result(await api('POST', jobPath(jobId, '/cancel')))),
});

const retryJob = defineTool({
  name: 'retry_job',
  title: 'Retry a job',
  description:
    'Run a FAILED or CANCELLED job again from the step it stopped at (or from its first step with fromStart); earlier runs are kept.',
  inputSchema: () => jobIdArgs.extend(retryBodySchema.shape).strict(),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  handler: ({ api }) =>
    guarded(async ({ jobId, ...body }) => {
      const { job } = await api('POST', jobPath(jobId, '/retry'), { body });
      return result({ job, next: followJob });
    }),
});

const getReport = defineTool({
  name: 'get_report',
  title: 'Get a report',
  description:
    "A succeeded job's report: Markdown (default), the rendered HTML, or the data as JSON (result.json).",
  inputSchema: () =>
    jobIdArgs
      .extend({
        format: z.enum(['md', 'html', 'json']).default('md').describe('md (default), html or json'),
      })
      .strict(),
  annotations: { readOnlyHint: true, openWorldHint: false },
  handler: ({ reportText }) =>
    guarded(async ({ jobId, format }) => ({
      content: [{ type: 'text', text: await reportText(jobId, format) }],
    })),
});

/** The tools, in the order of the server's tool list. */
export const mcpTools: readonly McpTool[] = [
  listWorkflows,
  submitJob,
  getJob,
  listJobs,
  answerSelection,
  cancelJob,
  retryJob,
  bulkActionTool,
  getReport,
  getBatchTool,
  ingestTool,
  listWebhookSourcesTool,
];
