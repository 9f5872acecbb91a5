/**
 * The dashboard on `opflow serve`: its static files at `/` and `/ui/...` (no data in them, so no
 * token is needed to load the page; the page then asks for the token and sends it with every API
 * request), and `GET /jobs/{id}/timeline` (token required, like the job API).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { EngineDeps } from '../engine/deps';
import type { JobHistory } from '../engine/history';
import { jobSources, jobStatuses } from '../engine/job-record';
import type { ServerMount } from '../http/node-server';
import { type DashboardFile, dashboardFiles, settingsFile } from './files';
import { buildTimeline } from './timeline';

/** No script but the page's own; report HTML (inline styles only) is shown in a sandboxed frame. */
const contentSecurityPolicy = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "frame-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

function send(res: ServerResponse, method: string, status: number, file: DashboardFile): void {
  res.writeHead(status, {
    'content-type': file.contentType,
    'content-length': String(file.body.byteLength),
    'cache-control': 'no-cache',
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    'content-security-policy': contentSecurityPolicy,
  });
  res.end(method === 'HEAD' ? undefined : file.body);
}

function sendJson(res: ServerResponse, status: number, value: unknown): void {
  const body = JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' });
  res.end(body);
}

/** The static files: GET or HEAD of `/`, `/index.html` and `/ui/...`. */
export function dashboardMount(options: {
  deps: EngineDeps;
  history?: JobHistory | undefined;
  /** Whether the server answers `/batches` (the page then shows batches). */
  batches?: boolean | undefined;
  /** Whether the server answers `/schedules` with schedules to show. */
  schedules?: boolean | undefined;
}): ServerMount {
  const files = dashboardFiles();
  const settings = settingsFile({
    apiBase: '',
    workflows: [...options.deps.workflows.keys()].sort(),
    statuses: [...jobStatuses],
    sources: [...jobSources],
    timeline: options.history !== undefined,
    batches: options.batches === true,
    schedules: options.schedules === true,
  });
  const pathOf = (path: string) => (path === '/' ? 'index.html' : path.slice(1));
  return {
    public: true,
    matches: (path, method) =>
      (method === 'GET' || method === 'HEAD') &&
      (path === '/' || path === '/index.html' || path.startsWith('/ui/')),
    handle: async (_req: IncomingMessage, res: ServerResponse, { path, method }) => {
      const name = pathOf(path);
      if (name === 'ui/config.json') return send(res, method, 200, settings);
      const file = files.get(name);
      if (!file)
        return sendJson(res, 404, { error: { status: 404, code: 'not-found', message: `no file ${path}` } });
      send(res, method, 200, file);
    },
  };
}

const timelineRoute = /^\/jobs\/([0-9A-Za-z_-]{1,64})\/timeline$/;

/** `GET /jobs/{id}/timeline`: the job's steps with their figures (see timeline.ts). */
export function timelineMount(options: { deps: EngineDeps; history: JobHistory }): ServerMount {
  return {
    matches: (path) => /^\/jobs\/[^/]+\/timeline$/.test(path),
    handle: async (_req, res, { path, method }) => {
      if (method !== 'GET') {
        res.setHeader('allow', 'GET');
        return sendJson(res, 405, {
          error: {
            status: 405,
            code: 'method-not-allowed',
            message: `${method} ${path} is not supported; use GET`,
          },
        });
      }
      const id = timelineRoute.exec(path)?.[1];
      if (id === undefined) {
        return sendJson(res, 400, {
          error: { status: 400, code: 'invalid-request', message: 'path.id: is not a job id' },
        });
      }
      const job = await options.deps.store.get(id);
      if (!job)
        return sendJson(res, 404, { error: { status: 404, code: 'not-found', message: `no job ${id}` } });
      const events = await options.history.list(id);
      sendJson(res, 200, buildTimeline(options.deps.workflows.get(job.workflow), job, events));
    },
  };
}
