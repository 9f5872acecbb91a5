/**
 * Schedules over HTTP on `opflow serve` (token required, like the job API), for the dashboard:
 *
 *   GET  /schedules                 every schedule of opflow.config.json with its next and last
 *                                   fire time, its last job and how many slots were skipped
 *   POST /schedules/{name}/trigger  a job now, outside the slots (as `opflow schedules trigger`)
 *
 * Pausing is declared in opflow.config.json (`paused`), where the schedule itself lives.
 */
import type { ServerResponse } from 'node:http';
import type { Schedule } from '../config/opflow-config';
import type { EngineDeps } from '../engine/deps';
import type { ScheduleStateStore } from '../engine/schedule-ports';
import type { ServerMount } from '../http/node-server';
import { triggerSchedule } from '../schedules/scheduler';
import { nextSlot } from '../schedules/slots';

const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString());

function sendJson(res: ServerResponse, status: number, value: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' });
  res.end(JSON.stringify(value));
}
const refuse = (res: ServerResponse, status: number, code: string, message: string) =>
  sendJson(res, status, { error: { status, code, message } });

export function scheduleMount(options: {
  deps: EngineDeps;
  states: ScheduleStateStore;
  schedules: readonly Schedule[];
}): ServerMount {
  const { deps, states, schedules } = options;
  const view = async (schedule: Schedule) => {
    const state = await states.get(schedule.name);
    const last = state?.lastJobId ? await deps.store.get(state.lastJobId) : undefined;
    return {
      name: schedule.name,
      cron: schedule.cron,
      timezone: schedule.timezone,
      workflow: schedule.workflow,
      overlap: schedule.overlap,
      paused: schedule.paused?.reason,
      next: schedule.paused ? undefined : iso(nextSlot(schedule, deps.clock.now())),
      lastFired: iso(state?.lastFiredSlot),
      lastJob: last ? { id: last.id, status: last.status } : undefined,
      skipped: state?.skipped ?? 0,
    };
  };
  return {
    matches: (path) => path === '/schedules' || path.startsWith('/schedules/'),
    handle: async (_req, res, { path, method, readBody }) => {
      if (path === '/schedules') {
        if (method !== 'GET')
          return refuse(res, 405, 'method-not-allowed', `${method} ${path} is not supported; use GET`);
        return sendJson(res, 200, { schedules: await Promise.all(schedules.map(view)) });
      }
      const match = /^\/schedules\/([^/]+)\/trigger$/.exec(path);
      if (!match) return refuse(res, 404, 'not-found', `no route ${path}`);
      if (method !== 'POST')
        return refuse(res, 405, 'method-not-allowed', `${method} ${path} is not supported; use POST`);
      await readBody();
      let name: string;
      try {
        name = decodeURIComponent(match[1]!);
      } catch {
        return refuse(res, 400, 'invalid-request', 'path.name: is not valid URL encoding');
      }
      const schedule = schedules.find((candidate) => candidate.name === name);
      if (!schedule) {
        const known = schedules.map((s) => s.name).join(', ') || 'none';
        return refuse(res, 404, 'not-found', `no schedule "${name}" (schedules: ${known})`);
      }
      const { job, created } = await triggerSchedule(deps, states, schedule);
      return sendJson(res, 200, { jobId: job.id, created, schedule: await view(schedule) });
    },
  };
}
