/**
 * `POST /jobs/bulk`: a bulk action by filter (shared/runtime/bulk.ts). A dry run first, then the
 * same body with `confirm` (its count and selection); a set that changed is a 409 carrying the new
 * dry run. A tenant-bound caller acts only on its own tenant's jobs. A call stops after
 * `bulkCallBudgetMs` with a cursor to go on (API Gateway cuts a request at 30 s).
 */
import type { JobDeps } from '../engine/deps';
import {
  type BulkOutcome,
  type BulkPreview,
  BulkSelectionChanged,
  previewBulk,
  runBulk,
} from '../runtime/bulk';
import { bulkRequestSchema } from '../runtime/bulk-request';
import { ApiError, json } from './api-error';
import { type ApiRoute, apiRoute, parse } from './api-route';

/** How long one call acts before it answers with a cursor. */
export const bulkCallBudgetMs = 20_000;

const previewView = (preview: BulkPreview) => ({
  ...preview,
  sample: preview.sample.map((job) => ({ ...job, createdAt: new Date(job.createdAt).toISOString() })),
});

const outcomeView = (outcome: BulkOutcome) => outcome;

export function bulkRoutes(deps: JobDeps): ApiRoute[] {
  return [
    apiRoute('bulkJobs', async (_params, _request, { tenant, body }) => {
      const asked = parse(bulkRequestSchema, body(), 'body');
      if (tenant !== undefined && asked.where.tenant !== undefined && asked.where.tenant !== tenant)
        throw new ApiError(403, 'forbidden', `this caller may only act on jobs of tenant ${tenant}`);
      const request = { ...asked, where: { ...asked.where, tenant: tenant ?? asked.where.tenant } };
      if (request.dryRun) return json(200, previewView(await previewBulk(deps, request)));
      try {
        return json(200, outcomeView(await runBulk(deps, request, { budgetMs: bulkCallBudgetMs })));
      } catch (error) {
        if (!(error instanceof BulkSelectionChanged)) throw error;
        return json(409, {
          error: { status: 409, code: 'selection-changed', message: error.message },
          preview: previewView(error.preview),
        });
      }
    }),
  ];
}
