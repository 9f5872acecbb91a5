/**
 * Schedules over HTTP, framework-free routes of the job API (shared/http/job-api.ts) on `opflow
 * serve` and on the Lambda api (token or JWT required, like the job API), for the dashboard:
 *
 *   GET  /schedules                 every schedule of opflow.config.json with its next and last
 *                                   fire time, its last job, how many slots were skipped, its pause
 *   POST /schedules/{name}/trigger  a job now, outside the slots (as `opflow schedules trigger`)
 *   POST /schedules/{name}/pause    {"reason": "..."}: skip its slots until resumed (as `opflow
 *                                   schedules pause`); kept in the schedule state store
 *   POST /schedules/{name}/resume   fire its slots again from now on
 *
 * A caller bound to a tenant sees and changes only the schedules that create that tenant's jobs.
 */
import type { Schedule } from '../config/opflow-config';
import type { JobDeps } from '../engine/deps';
import type { ScheduleStateStore } from '../engine/schedule-ports';
import { ApiError, type ApiRoute, apiRoute, json, parse } from '../http/job-api';
import { pauseBodySchema } from '../http/request-schemas';
import { pauseSchedule, resumeSchedule, SchedulePauseError } from '../schedules/pause';
import { scheduleView } from '../schedules/schedule-view';
import { triggerSchedule } from '../schedules/scheduler';

export function scheduleRoutes(options: {
  deps: JobDeps;
  states: ScheduleStateStore;
  schedules: readonly Schedule[];
}): ApiRoute[] {
  const { deps, states } = options;
  const visible = (tenant: string | undefined) =>
    options.schedules.filter((schedule) => tenant === undefined || schedule.tenant === tenant);
  const find = (name: string, tenant: string | undefined): Schedule => {
    const schedules = visible(tenant);
    const schedule = schedules.find((candidate) => candidate.name === name);
    if (!schedule) {
      const known = schedules.map((s) => s.name).join(', ') || 'none';
      throw new ApiError(404, 'not-found', `no schedule "${name}" (schedules: ${known})`);
    }
    return schedule;
  };
  const refusing = async <T>(work: () => Promise<T>): Promise<T> => {
    try {
      return await work();
    } catch (error) {
      if (error instanceof SchedulePauseError) throw new ApiError(409, 'conflict', error.message);
      throw error;
    }
  };
  return [
    apiRoute('listSchedules', async (_params, _request, { tenant }) =>
      json(200, {
        schedules: await Promise.all(visible(tenant).map((schedule) => scheduleView(deps, states, schedule))),
      }),
    ),
    apiRoute('triggerSchedule', async ({ name }, _request, { tenant }) => {
      const schedule = find(name, tenant);
      const { job, created } = await triggerSchedule(deps, states, schedule);
      return json(200, { jobId: job.id, created, schedule: await scheduleView(deps, states, schedule) });
    }),
    apiRoute('pauseSchedule', async ({ name }, _request, { tenant, body }) => {
      const schedule = find(name, tenant);
      const { reason } = parse(pauseBodySchema, body(), 'body');
      await refusing(() => pauseSchedule(deps, states, schedule, reason));
      return json(200, { schedule: await scheduleView(deps, states, schedule) });
    }),
    apiRoute('resumeSchedule', async ({ name }, _request, { tenant }) => {
      const schedule = find(name, tenant);
      await refusing(() => resumeSchedule(deps, states, schedule));
      return json(200, { schedule: await scheduleView(deps, states, schedule) });
    }),
  ];
}
