/**
 * The MCP tools of bulk ingestion: `get_batch` (on a server with the batches) and `ingest` (with
 * a batch runner too: a manifest or folder on the machine opflow runs on, under the allowed roots).
 */
import { isAbsolute, resolve } from 'node:path';
import * as z from 'zod';
import { errorMessage } from '../errors/error-message';
import { ApiError } from '../http/api-error';
import { createBodySchema } from '../http/job-api';
import { batchNameSchema, defaultInFlightPerBatch, parseFailureBudget } from '../ingest/batch';
import { currentViewOf, viewOf } from '../ingest/batch-view';
import { IngestRefused, openBatch } from '../ingest/ingest';
import { localIngestSource } from '../ingest/local-source';
import { sourceKindOf } from './ingest-paths';
import { defineTool, guarded, result } from './tool-spec';

export const getBatchTool = defineTool({
  name: 'get_batch',
  title: 'Get a batch',
  description:
    'A bulk ingestion: status, items by status, calls, billed units, elapsed time and ETA, and the lines that could not be used (with line and reason). Its jobs: list_jobs with batchId.',
  inputSchema: () =>
    z.strictObject({
      batchId: z.string().min(1).max(200).describe('the batch id (from ingest)'),
    }),
  annotations: { readOnlyHint: true, openWorldHint: false },
  handler: ({ deps, batches, tenant }) => {
    if (!batches) return undefined;
    return guarded(async ({ batchId }) => {
      const batch = await batches.get(batchId);
      if (!batch || (tenant !== undefined && batch.tenant !== tenant))
        throw new ApiError(404, 'not-found', `no batch ${batchId}`);
      const problems = await batches.listProblems(batch.id, batch.run);
      return result({
        batch: await currentViewOf(deps.store, batch, deps.clock.now()),
        problems: problems.slice(0, 100).map(({ position, id, reason }) => ({ position, id, reason })),
        problemCount: problems.length,
      });
    });
  },
});

const ingestSchema = (workflowNames: readonly [string, ...string[]]) =>
  z.strictObject({
    path: z
      .string()
      .min(1)
      .max(4096)
      .describe('the manifest (.jsonl, .csv) or folder, on the opflow machine'),
    workflow: z.enum(workflowNames).describe("the lines' workflow (a line's own `workflow` field wins)"),
    batchName: batchNameSchema.optional().describe('the batch id to use (default: from the manifest name)'),
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
    priority: createBodySchema.shape.priority.describe(
      "its jobs' priority against the key's other work: high, normal (default) or low (a line's own `priority` wins)",
    ),
    tenant: createBodySchema.shape.tenant,
  });

/** `failureBudget` as the batch takes it; a refusal names the argument, not the CLI's flag. */
function failureBudgetOf(text: string | undefined): ReturnType<typeof parseFailureBudget> | undefined {
  try {
    return text === undefined ? undefined : parseFailureBudget(text);
  } catch (error) {
    throw new ApiError(
      400,
      'invalid-request',
      errorMessage(error).replace('--failure-budget', 'failureBudget'),
    );
  }
}

export const ingestTool = defineTool({
  name: 'ingest',
  title: 'Ingest a batch',
  description:
    'Start a bulk ingestion of a JSON Lines or CSV manifest, or a folder of documents (.txt .md .json .docx .pdf), on the machine opflow runs on; answers at once with the batch id (follow it with get_batch). Ingesting the same manifest again starts only new or changed lines.',
  inputSchema: ingestSchema,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  handler: ({ deps, batches, batchRunner, tenant, cwd, ingestRoots }) => {
    if (!batches || !batchRunner) return undefined;
    return guarded(async (args) => {
      if (tenant !== undefined && args.tenant !== 'default' && args.tenant !== tenant)
        throw new ApiError(403, 'forbidden', `this caller may only ingest for tenant ${tenant}`);
      const path = isAbsolute(args.path) ? args.path : resolve(cwd, args.path);
      const kind = await sourceKindOf(path, ingestRoots);
      const failureBudget = failureBudgetOf(args.failureBudget);
      const source = { kind, uri: path };
      const { batch, state } = await openBatch({ engine: deps, batches }, source, {
        batchName: args.batchName,
        tenant: tenant ?? args.tenant,
        workflow: args.workflow,
        options: {
          selection: args.selection,
          failureBudget,
          maxUnits: args.maxUnits,
          inFlight: args.inFlight ?? defaultInFlightPerBatch,
          ...(args.priority === undefined ? {} : { priority: args.priority }),
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
    });
  },
});
