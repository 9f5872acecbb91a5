/**
 * `GET /jobs/{id}/timeline`: the job's steps with their figures (timeline.ts), from its history
 * (SQLite locally, `HIST#` items on aws). A framework-free route of the job API, on `opflow serve`
 * and on the Lambda api; another tenant's job does not exist for a caller bound to a tenant.
 */
import type { JobDeps } from '../engine/deps';
import type { JobHistory } from '../engine/history';
import { ApiError, type ApiRoute, apiRoute, jobIdSchema, json, parse } from '../http/job-api';
import { buildTimeline, timelineView } from './timeline';

export function timelineRoutes(options: { deps: JobDeps; history: JobHistory }): ApiRoute[] {
  return [
    apiRoute('getTimeline', async ({ id: raw }, _request, { tenant }) => {
      const id = parse(jobIdSchema, raw, 'path.id');
      const job = await options.deps.store.get(id);
      if (!job || (tenant !== undefined && job.tenant !== tenant))
        throw new ApiError(404, 'not-found', `no job ${id}`);
      const events = await options.history.list(id);
      return json(200, timelineView(buildTimeline(options.deps.workflows.get(job.workflow), job, events)));
    }),
  ];
}
