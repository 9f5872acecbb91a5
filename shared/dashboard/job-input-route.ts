/**
 * `GET /jobs/{id}/input` on both backends: a job's input, workflow, label, selection, priority and
 * cost cap, read from the job (or the report store when large), for "run again like this".
 */
import type { JobDeps } from '../engine/deps';
import { ApiError, type ApiRoute, apiRoute, json } from '../http/job-api';

/** The job's input as stored: inline in its record, or in the report store when large. */
async function storedInput(deps: JobDeps, input: { inline: unknown } | { ref: string }): Promise<unknown> {
  if ('inline' in input) return input.inline;
  const stored = await deps.reports.get(input.ref);
  if (!stored) throw new ApiError(404, 'not-found', 'the input of this job is no longer kept');
  return JSON.parse(Buffer.from(stored.body).toString('utf8'));
}

/** `GET /jobs/{id}/input`: what "run again like this" starts from; another tenant's job does not exist. */
export function jobInputRoute(deps: JobDeps): ApiRoute {
  return apiRoute('getJobInput', async ({ id }, _request, { tenant }) => {
    const job = /^[0-9A-Za-z_-]{1,64}$/.test(id) ? await deps.store.get(id) : undefined;
    if (!job || (tenant !== undefined && job.tenant !== tenant))
      throw new ApiError(404, 'not-found', `no job ${id}`);
    return json(200, {
      jobId: job.id,
      workflow: job.workflow,
      input: await storedInput(deps, job.input),
      label: job.label,
      selection: job.selection,
      priority: job.priority,
      maxUnits: job.maxUnits,
      tenant: job.tenant,
    });
  });
}
