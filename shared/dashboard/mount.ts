/**
 * The dashboard on `opflow serve`: its static files at `/` and `/ui/...` (no data in them, so no
 * token is needed to load the page; the page then asks for the token and sends it with every API
 * request). The routes the page reads beside the job API's are routes of the job API itself
 * (timeline-route.ts, batch-routes.ts, schedule-routes.ts, delivery-routes.ts), also on aws.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { JobDeps } from '../engine/deps';
import type { ServerMount } from '../http/node-server';
import {
  type DashboardFile,
  type DashboardSettings,
  dashboardFiles,
  dashboardSettings,
  settingsFile,
} from './files';

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
  deps: JobDeps;
  /** Whether the server answers `GET /jobs/{id}/timeline`. */
  timeline?: boolean | undefined;
  /** Whether the server answers `/batches` (the page then shows batches). */
  batches?: boolean | undefined;
  /** Whether the server answers `/schedules` with schedules to show. */
  schedules?: boolean | undefined;
  /** Whether the server answers `GET /webhook-deliveries` (the page then shows webhooks). */
  webhooks?: boolean | undefined;
  /** What the page may start (default: jobs from a form only). */
  starts?: DashboardSettings['starts'];
}): ServerMount {
  const files = dashboardFiles();
  const settings = settingsFile(
    dashboardSettings({
      apiBase: '',
      workflows: options.deps.workflows,
      pages: {
        timeline: options.timeline === true,
        batches: options.batches === true,
        schedules: options.schedules === true,
        webhooks: options.webhooks === true,
        // This server's upload routes take documents wherever they take manifests (start-routes.ts).
        starts: options.starts
          ? { ...options.starts, documents: options.starts.manifests }
          : { jobs: true, rerun: false, manifests: false },
      },
    }),
  );
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
