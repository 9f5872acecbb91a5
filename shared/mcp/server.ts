/**
 * opflow as an MCP server (on the official SDK): the job API's routes as tools an agent can call.
 *
 * Every tool goes through `handleJobApiRequest`, the code behind `opflow serve` and the Lambda
 * `api`, so an agent meets the same validation, the same tenant rule and the same error messages
 * as any other caller; the tools' JSON Schemas are derived from the job API's zod schemas. No tool
 * waits for a workflow (MCP clients give up on a call after about a minute): `submit_job` answers
 * with the job id at once, `get_job` tells where the job is and what to do next.
 *
 *   list_workflows    the workflows, each with a one-line description and its input's JSON Schema
 *   submit_job        start a job (workflow, input, selection policy, idempotency key)
 *   get_job           status, current step, pending selection with its options, report summary
 *   list_jobs         jobs, newest first, with the job API's filters and cursor
 *   answer_selection  choose options of a job that waits for a selection
 *   cancel_job        cancel an unfinished job
 *   retry_job         run a FAILED or CANCELLED job again from where it stopped (or the start)
 *   ingest, get_batch bulk ingestion of a manifest or folder on this machine, and its progress
 *   get_report        a succeeded job's report (Markdown by default); also the resource
 *                     opflow://jobs/{id}/report
 */
import { realpath } from 'node:fs/promises';
import { delimiter, isAbsolute, relative, resolve, sep } from 'node:path';
import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import * as z from 'zod';
import type { BatchRunner } from '../dashboard/batch-runner';
import type { BatchSourceKind, BatchStore } from '../engine/batch-store';
import type { EngineDeps } from '../engine/deps';
import { errorMessage } from '../errors/error-message';
import { ApiError } from '../http/api-error';
import {
  createBodySchema,
  handleJobApiRequest,
  idempotencyKeySchema,
  jobIdSchema,
  listQuerySchema,
  retryBodySchema,
  selectionBodySchema,
} from '../http/job-api';
import { batchNameSchema, defaultInFlightPerBatch, parseFailureBudget } from '../ingest/batch';
import { currentViewOf, viewOf } from '../ingest/batch-view';
import { IngestRefused, openBatch } from '../ingest/ingest';
import { localIngestSource, localSourceKind } from '../ingest/local-source';

export interface OpflowMcpOptions {
  deps: EngineDeps;
  /** The tenant the caller is bound to (as in the job API); absent: the caller names it. */
  tenant?: string | undefined;
  /** The server's version as announced to clients. */
  version?: string | undefined;
  /** The batches (get_batch); with a runner, also bulk ingestion of files on this machine (ingest). */
  batches?: BatchStore | undefined;
  batchRunner?: BatchRunner | undefined;
  /** Relative ingest paths are resolved against this. Default: the process's working directory. */
  cwd?: string | undefined;
  /** The folders `ingest` may read under (real paths compared). Default: `cwd`. */
  ingestRoots?: readonly string[] | undefined;
}

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

const reportFormats = { md: 'report.md', html: 'report.html', json: 'result.json' } as const;

/** The first sentence or line of a description: what a tool listing shows. */
function oneLine(text: string): string {
  const line = text.trim().split('\n')[0] ?? '';
  const sentence = /^(.+?[.!?])(\s|$)/.exec(line)?.[1] ?? line;
  return sentence.length > 200 ? `${sentence.slice(0, 197)}...` : sentence;
}

/** The API's messages name where the problem is (`body.selected: ...`); an agent sent arguments. */
function forAgent(message: string): string {
  return message.replace(/(^|; )(body|query|path)\./g, '$1');
}

function result(value: Record<string, unknown>): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(value, null, 2) }], structuredContent: value };
}

/** A refusal (shared/http's ApiError, as the job API's) goes to the agent as an MCP tool error with its message. */
function refusal(error: unknown): CallToolResult {
  if (error instanceof ApiError) {
    return {
      isError: true,
      content: [{ type: 'text', text: error.message }],
      structuredContent: { error: { status: error.status, code: error.code, message: error.message } },
    };
  }
  // Unexpected failures: no internals (paths, stacks) go to the agent; the engine's log has them.
  return {
    isError: true,
    content: [{ type: 'text', text: 'the request failed; try again later' }],
  };
}

/** Builds the server with every tool and the report resource; connect it to a transport. */
export function createOpflowMcpServer(options: OpflowMcpOptions): McpServer {
  const { deps } = options;
  const workflowNames = [...deps.workflows.keys()].sort() as [string, ...string[]];

  /** One job API request; the answer's JSON, or an ApiError with the API's status, code and message. */
  const api = async (
    method: string,
    path: string,
    init: { body?: unknown; query?: Record<string, string>; headers?: Record<string, string> } = {},
  ): Promise<Record<string, unknown>> => {
    const response = await handleJobApiRequest(
      {
        method,
        path,
        query: init.query,
        headers: { 'content-type': 'application/json', ...init.headers },
        body: init.body === undefined ? undefined : JSON.stringify(init.body),
      },
      { deps, tenant: options.tenant },
    );
    const answer = JSON.parse(response.body) as Record<string, unknown>;
    if (response.status >= 400) {
      const error = (answer.error ?? {}) as { code?: string; message?: string };
      throw new ApiError(
        response.status,
        error.code ?? 'error',
        forAgent(error.message ?? `the request failed (${response.status})`),
      );
    }
    return answer;
  };

  /** The text of one report file of a succeeded job (the job API decides whether it may be read). */
  const reportText = async (jobId: string, format: keyof typeof reportFormats): Promise<string> => {
    const id = jobIdSchema.safeParse(jobId);
    if (!id.success) throw new ApiError(400, 'invalid-request', `jobId: ${id.error.issues[0]?.message}`);
    const where = (await api('GET', `/jobs/${encodeURIComponent(jobId)}/report`, {
      query: { file: reportFormats[format] },
    })) as { files: { key: string; name: string }[] };
    const file = where.files.find((candidate) => candidate.name === reportFormats[format]);
    const stored = file === undefined ? undefined : await deps.reports.get(file.key);
    if (!stored) throw new ApiError(404, 'not-found', `job ${jobId} has no ${reportFormats[format]}`);
    return Buffer.from(stored.body).toString('utf8');
  };

  /** The title and one-line summary of a succeeded job's report, from its result.json. */
  const reportSummary = async (jobId: string): Promise<{ title?: string; summary?: string } | undefined> => {
    try {
      const parsed = JSON.parse(await reportText(jobId, 'json')) as { title?: string; summary?: string };
      return { title: parsed.title, summary: parsed.summary };
    } catch {
      return undefined;
    }
  };

  const server = new McpServer(
    { name: 'opflow', version: options.version ?? '0.1.0' },
    {
      instructions:
        'opflow runs the Open Platform Intelligence API workflows as durable jobs. Call list_workflows ' +
        'for the inputs, submit_job to start one (it answers at once with the job id), then get_job ' +
        'every few seconds until the status is SUCCEEDED (read it with get_report), FAILED or ' +
        'CANCELLED, or AWAITING_INPUT (choose options with answer_selection).',
    },
  );

  server.registerTool(
    'list_workflows',
    {
      title: 'List workflows',
      description: 'The workflows opflow runs, each with a one-line description and its input JSON Schema.',
      inputSchema: z.strictObject({}),
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async () => {
      const workflows = workflowNames.map((name) => {
        const workflow = deps.workflows.get(name)!;
        return {
          name,
          description: oneLine(workflow.description),
          inputSchema: z.toJSONSchema(workflow.input, { io: 'input', unrepresentable: 'any' }),
        };
      });
      return result({ workflows });
    },
  );

  const submitSchema = createBodySchema
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
      idempotencyKey: idempotencyKeySchema
        .optional()
        .describe('the same key (per tenant) returns the same job instead of starting another'),
    })
    .strict();

  server.registerTool(
    'submit_job',
    {
      title: 'Submit a job',
      description:
        'Start a job of a workflow; answers at once with the job id and status (it does not wait for the workflow: follow it with get_job).',
      inputSchema: submitSchema,
      annotations: {
        readOnlyHint: false,
        destructiveHint: false,
        idempotentHint: false,
        openWorldHint: true,
      },
    },
    async (args) => {
      try {
        const { idempotencyKey, ...body } = args;
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
      } catch (error) {
        return refusal(error);
      }
    },
  );

  const jobIdArgs = z.strictObject({
    jobId: jobIdSchema.describe('the job id (from submit_job or list_jobs)'),
  });

  server.registerTool(
    'get_job',
    {
      title: 'Get a job',
      description:
        'One job: status, current step, usage, last error, the pending selection with its options, and the report summary once it succeeded.',
      inputSchema: jobIdArgs,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async ({ jobId }) => {
      try {
        const { job } = (await api('GET', `/jobs/${encodeURIComponent(jobId)}`)) as {
          job: Record<string, unknown> & { status: string };
        };
        const answer: Record<string, unknown> = { job };
        if (job.status === 'SUCCEEDED') {
          answer.report = await reportSummary(jobId);
          answer.next = 'read the report with get_report';
        } else if (job.status === 'AWAITING_INPUT') {
          answer.next =
            'choose option ids from job.pending.options (between job.pending.min and job.pending.max of them) and call answer_selection';
        } else if (!['FAILED', 'CANCELLED'].includes(job.status)) {
          answer.next = 'the job is still working: call get_job again in a few seconds';
        }
        return result(answer);
      } catch (error) {
        return refusal(error);
      }
    },
  );

  server.registerTool(
    'list_jobs',
    {
      title: 'List jobs',
      description:
        'Jobs, most recently updated first, with optional filters; pass the returned cursor for the next page.',
      inputSchema: listQuerySchema,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async (args) => {
      try {
        const query: Record<string, string> = {};
        for (const [name, value] of Object.entries(args as Record<string, unknown>)) {
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
      } catch (error) {
        return refusal(error);
      }
    },
  );

  server.registerTool(
    'answer_selection',
    {
      title: 'Answer a selection',
      description:
        "Choose the options (by id, from get_job's job.pending.options) of a job in AWAITING_INPUT; the job then goes on.",
      inputSchema: jobIdArgs.extend(selectionBodySchema.shape).strict(),
      annotations: {
        readOnlyHint: false,
        destructiveHint: false,
        idempotentHint: false,
        openWorldHint: false,
      },
    },
    async ({ jobId, selected }) => {
      try {
        const { job } = await api('POST', `/jobs/${encodeURIComponent(jobId)}/selection`, {
          body: { selected },
        });
        return result({ job, next: 'call get_job every few seconds to follow the job' });
      } catch (error) {
        return refusal(error);
      }
    },
  );

  server.registerTool(
    'cancel_job',
    {
      title: 'Cancel a job',
      description:
        'Cancel a job that has not finished (a call already under way finishes, its result is dropped).',
      inputSchema: jobIdArgs,
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    },
    async ({ jobId }) => {
      try {
        return result(await api('POST', `/jobs/${encodeURIComponent(jobId)}/cancel`));
      } catch (error) {
        return refusal(error);
      }
    },
  );

  server.registerTool(
    'retry_job',
    {
      title: 'Retry a job',
      description:
        'Run a FAILED or CANCELLED job again from the step it stopped at (or from its first step with fromStart); earlier runs are kept.',
      inputSchema: jobIdArgs.extend(retryBodySchema.shape).strict(),
      annotations: {
        readOnlyHint: false,
        destructiveHint: false,
        idempotentHint: false,
        openWorldHint: true,
      },
    },
    async ({ jobId, ...body }) => {
      try {
        const { job } = await api('POST', `/jobs/${encodeURIComponent(jobId)}/retry`, { body });
        return result({ job, next: 'call get_job every few seconds to follow the job' });
      } catch (error) {
        return refusal(error);
      }
    },
  );

  server.registerTool(
    'get_report',
    {
      title: 'Get a report',
      description:
        "A succeeded job's report: Markdown (default), the rendered HTML, or the data as JSON (result.json).",
      inputSchema: jobIdArgs
        .extend({
          format: z.enum(['md', 'html', 'json']).default('md').describe('md (default), html or json'),
        })
        .strict(),
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async ({ jobId, format }) => {
      try {
        return { content: [{ type: 'text', text: await reportText(jobId, format) }] };
      } catch (error) {
        return refusal(error);
      }
    },
  );

  const { batches, batchRunner } = options;
  if (batches) {
    server.registerTool(
      'get_batch',
      {
        title: 'Get a batch',
        description:
          'A bulk ingestion: status, items by status, calls, billed units, elapsed time and ETA, and the lines that could not be used (with line and reason). Its jobs: list_jobs with batchId.',
        inputSchema: z.strictObject({
          batchId: z.string().min(1).max(200).describe('the batch id (from ingest)'),
        }),
        annotations: { readOnlyHint: true, openWorldHint: false },
      },
      async ({ batchId }) => {
        try {
          const batch = await batches.get(batchId);
          if (!batch || (options.tenant !== undefined && batch.tenant !== options.tenant))
            throw new ApiError(404, 'not-found', `no batch ${batchId}`);
          const problems = await batches.listProblems(batch.id, batch.run);
          return result({
            batch: await currentViewOf(deps.store, batch, deps.clock.now()),
            problems: problems.slice(0, 100).map(({ position, id, reason }) => ({ position, id, reason })),
            problemCount: problems.length,
          });
        } catch (error) {
          return refusal(error);
        }
      },
    );
  }
  if (batches && batchRunner) {
    server.registerTool(
      'ingest',
      {
        title: 'Ingest a batch',
        description:
          'Start a bulk ingestion of a JSON Lines or CSV manifest, or a folder of documents (.txt .md .json .docx .pdf), on the machine opflow runs on; answers at once with the batch id (follow it with get_batch). Ingesting the same manifest again starts only new or changed lines.',
        inputSchema: z.strictObject({
          path: z
            .string()
            .min(1)
            .max(4096)
            .describe('the manifest (.jsonl, .csv) or folder, on the opflow machine'),
          workflow: z
            .enum(workflowNames)
            .describe("the lines' workflow (a line's own `workflow` field wins)"),
          batchName: batchNameSchema
            .optional()
            .describe('the batch id to use (default: from the manifest name)'),
          selection: z.enum(['auto', 'manual']).default('auto').describe('selection points of its jobs'),
          failureBudget: z
            .string()
            .optional()
            .describe('stop starting new items after this many failures: a count (50) or a share (5%)'),
          maxUnits: z
            .number()
            .int()
            .positive()
            .optional()
            .describe('pause the batch once it billed this many units'),
          inFlight: z
            .number()
            .int()
            .min(1)
            .max(1000)
            .optional()
            .describe(`jobs of this batch running at once (default ${defaultInFlightPerBatch})`),
          tenant: createBodySchema.shape.tenant,
        }),
        annotations: {
          readOnlyHint: false,
          destructiveHint: false,
          idempotentHint: true,
          openWorldHint: true,
        },
      },
      async (args) => {
        try {
          if (options.tenant !== undefined && args.tenant !== 'default' && args.tenant !== options.tenant)
            throw new ApiError(403, 'forbidden', `this caller may only ingest for tenant ${options.tenant}`);
          const path = isAbsolute(args.path) ? args.path : resolve(options.cwd ?? process.cwd(), args.path);
          const kind = await sourceKindOf(path, options.ingestRoots ?? [options.cwd ?? process.cwd()]);
          let failureBudget: ReturnType<typeof parseFailureBudget> | undefined;
          try {
            failureBudget =
              args.failureBudget === undefined ? undefined : parseFailureBudget(args.failureBudget);
          } catch (error) {
            throw new ApiError(
              400,
              'invalid-request',
              errorMessage(error).replace('--failure-budget', 'failureBudget'),
            );
          }
          const source = { kind, uri: path };
          const { batch, state } = await openBatch({ engine: deps, batches }, source, {
            batchName: args.batchName,
            tenant: options.tenant ?? args.tenant,
            workflow: args.workflow,
            options: {
              selection: args.selection,
              failureBudget,
              maxUnits: args.maxUnits,
              inFlight: args.inFlight ?? defaultInFlightPerBatch,
            },
          }).catch((error) => {
            if (error instanceof IngestRefused) throw new ApiError(400, 'invalid-request', error.message);
            throw error;
          });
          batchRunner.drive(localIngestSource(source), batch.id);
          return result({
            batchId: batch.id,
            state,
            batch: viewOf(batch, deps.clock.now()),
            next: 'call get_batch with this batchId every few seconds; list_jobs with batchId lists its jobs',
          });
        } catch (error) {
          return refusal(error);
        }
      },
    );
  }

  server.registerResource(
    'report',
    new ResourceTemplate('opflow://jobs/{id}/report', {
      list: async () => {
        const page = (await api('GET', '/jobs', { query: { status: 'SUCCEEDED', limit: '50' } })) as {
          jobs: { id: string; label?: string; workflow: string }[];
        };
        return {
          resources: page.jobs.map((job) => ({
            uri: `opflow://jobs/${job.id}/report`,
            name: `${job.workflow} ${job.label ?? job.id}`,
            mimeType: 'text/markdown',
          })),
        };
      },
    }),
    {
      title: 'Job report',
      description: "A succeeded job's report in Markdown",
      mimeType: 'text/markdown',
    },
    async (uri, variables) => {
      const id = String(variables.id);
      try {
        return { contents: [{ uri: uri.href, mimeType: 'text/markdown', text: await reportText(id, 'md') }] };
      } catch (error) {
        if (error instanceof ApiError) throw new Error(error.message);
        throw new Error('the request failed; try again later');
      }
    },
  );

  return server;
}

/**
 * The roots `ingest` may read under: OPFLOW_INGEST_ROOTS (folders separated by the system's path
 * delimiter, `:` on Linux and macOS), else the working directory.
 */
export function ingestRootsFrom(env: Record<string, string | undefined>, cwd: string): string[] {
  const listed = (env.OPFLOW_INGEST_ROOTS ?? '')
    .split(delimiter)
    .map((root) => root.trim())
    .filter((root) => root !== '');
  return listed.length > 0 ? listed.map((root) => resolve(cwd, root)) : [cwd];
}

/**
 * What a path to ingest is (a folder, a JSON Lines manifest or a CSV one), refused unless its real
 * path (symbolic links followed) is inside one of `roots`: an agent reads only where it was let.
 */
async function sourceKindOf(path: string, roots: readonly string[]): Promise<BatchSourceKind> {
  let real: string;
  try {
    real = await realpath(path);
  } catch {
    throw new ApiError(400, 'invalid-request', `path: ${path}: no such file or folder on the opflow machine`);
  }
  const realRoots = await Promise.all(roots.map((root) => realpath(root).catch(() => resolve(root))));
  const inside = realRoots.some((root) => {
    const rest = relative(root, real);
    return rest === '' || (!rest.startsWith(`..${sep}`) && rest !== '..' && !isAbsolute(rest));
  });
  if (!inside)
    throw new ApiError(
      403,
      'forbidden',
      `path: ${path} is outside the folders ingest may read (${realRoots.join(', ')}); set OPFLOW_INGEST_ROOTS to allow another`,
    );
  try {
    return await localSourceKind(real, path);
  } catch (error) {
    if (error instanceof IngestRefused) throw new ApiError(400, 'invalid-request', `path: ${error.message}`);
    throw error;
  }
}
