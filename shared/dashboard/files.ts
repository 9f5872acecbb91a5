/**
 * The dashboard's files: `dashboard/` of the package (index.html, ui/app.js, ui/style.css) and the
 * browser builds of Preact and htm from node_modules, served as they are (no bundler, no CDN).
 * `opflow serve` serves them at `/`; `npm run dashboard:build` writes them to a folder for static
 * hosting in front of the AWS job API.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface DashboardFile {
  body: Buffer;
  contentType: string;
}

/** What `ui/config.json` tells the page. */
export interface DashboardSettings {
  /** Base URL of the job API; '' for the page's own origin. */
  apiBase: string;
  workflows: string[];
  statuses?: string[] | undefined;
  sources?: string[] | undefined;
  /** Whether `GET /jobs/{id}/timeline` exists (opflow serve; the AWS API since its job history). */
  timeline: boolean;
  /** Whether `/batches` exists. */
  batches?: boolean | undefined;
  /** Whether `/schedules` has schedules to show (opflow.config.json declares some). */
  schedules?: boolean | undefined;
  /** Whether `GET /webhook-deliveries` exists (a page "Webhooks" with the deliveries received). */
  webhooks?: boolean | undefined;
}

/** The package's root folder (holding package.json), found from this module wherever it was built to. */
function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest) && existsSync(join(dir, 'dashboard', 'index.html'))) return dir;
    const parent = dirname(dir);
    if (parent === dir) throw new Error('the dashboard files (dashboard/index.html) are not in this package');
    dir = parent;
  }
}

const types: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
};
const typeOf = (name: string) => types[name.slice(name.lastIndexOf('.'))] ?? 'application/octet-stream';

let cached: Map<string, DashboardFile> | undefined;

/** The static files by path (`index.html`, `ui/app.js`, `ui/vendor/preact.mjs`, ...), read once. */
export function dashboardFiles(): ReadonlyMap<string, DashboardFile> {
  if (cached) return cached;
  const root = packageRoot();
  const require = createRequire(join(root, 'package.json'));
  const files = new Map<string, DashboardFile>();
  const add = (path: string, body: Buffer | string) =>
    files.set(path, { body: Buffer.isBuffer(body) ? body : Buffer.from(body), contentType: typeOf(path) });
  add('index.html', readFileSync(join(root, 'dashboard', 'index.html')));
  add('ui/app.js', readFileSync(join(root, 'dashboard', 'app.js')));
  add('ui/style.css', readFileSync(join(root, 'dashboard', 'style.css')));
  add('ui/vendor/preact.mjs', readFileSync(require.resolve('preact')));
  // The hooks import the bare name "preact", which a browser without an import map cannot resolve.
  const hooks = readFileSync(require.resolve('preact/hooks'), 'utf8').replace(
    /from\s*(["'])preact\1/g,
    'from"./preact.mjs"',
  );
  add('ui/vendor/hooks.mjs', hooks);
  add('ui/vendor/htm.mjs', readFileSync(join(dirname(require.resolve('htm')), 'htm.mjs')));
  cached = files;
  return files;
}

/** The settings file the page reads first. */
export function settingsFile(settings: DashboardSettings): DashboardFile {
  return { body: Buffer.from(JSON.stringify(settings, null, 2)), contentType: typeOf('.json') };
}
