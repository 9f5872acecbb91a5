/**
 * The dashboard's files: `dashboard/index.html`, `dashboard/style.css`, and `ui/app.js` bundled by
 * esbuild from the TypeScript modules of `dashboard/src/` (Preact included, no CDN) when first asked
 * for, so a fresh clone serves the current sources without a build step. `opflow serve` serves
 * them at `/`; `npm run dashboard:build` writes them to a folder for static hosting in front of the
 * AWS job API.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { jobSources, jobStatuses } from '../engine/job-record';
import type { WorkflowRegistry } from '../engine/workflow';
import { describeWorkflow, type WorkflowDoc } from '../workflows/describe';

export interface DashboardFile {
  body: Buffer;
  contentType: string;
}

/** What `ui/config.json` tells the page. */
export interface DashboardSettings {
  /** Base URL of the job API; '' for the page's own origin. */
  apiBase: string;
  workflows: string[];
  /**
   * Each workflow as `opflow workflows <name> --json` describes it: its input fields with limits and
   * defaults, an example, and its steps with the titles people read.
   */
  workflowDocs?: WorkflowDoc[] | undefined;
  /**
   * What the page may start: a job from a form, a job again like another, a batch from a manifest,
   * a batch from documents: in the request body (opflow serve), or (`documentUploads: 'presigned'`,
   * the AWS job API) each by its presigned S3 PUT, then a commit.
   */
  starts?:
    | {
        jobs: boolean;
        rerun: boolean;
        manifests: boolean;
        documents?: boolean;
        documentUploads?: 'body' | 'presigned';
      }
    | undefined;
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
  '.map': 'application/json; charset=utf-8',
};
const typeOf = (name: string) => types[name.slice(name.lastIndexOf('.'))] ?? 'application/octet-stream';

let cached: Map<string, DashboardFile> | undefined;

/**
 * `dashboard/src/main.tsx` and what it imports, Preact included, as one ES module (`app.js`) and
 * its source map (`app.js.map`). esbuild comes with the package (tsx depends on it), so this works
 * in any install; it takes under half a second, once per process.
 */
export function bundleDashboard(root = packageRoot()): Map<string, string> {
  const require = createRequire(join(root, 'package.json'));
  const { buildSync } = require('esbuild') as typeof import('esbuild');
  const result = buildSync({
    absWorkingDir: root,
    entryPoints: [join(root, 'dashboard', 'src', 'main.tsx')],
    outfile: join(root, 'dashboard', 'app.js'),
    tsconfig: join(root, 'dashboard', 'tsconfig.json'),
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    minify: true,
    sourcemap: 'linked',
    legalComments: 'none',
    logLevel: 'silent',
  });
  return new Map(result.outputFiles.map((file) => [basename(file.path), file.text]));
}

/** The static files by path (`index.html`, `ui/app.js`, `ui/style.css`, ...), built once. */
export function dashboardFiles(): ReadonlyMap<string, DashboardFile> {
  if (cached) return cached;
  const root = packageRoot();
  const files = new Map<string, DashboardFile>();
  const add = (path: string, body: Buffer | string) =>
    files.set(path, { body: Buffer.isBuffer(body) ? body : Buffer.from(body), contentType: typeOf(path) });
  add('index.html', readFileSync(join(root, 'dashboard', 'index.html')));
  add('ui/style.css', readFileSync(join(root, 'dashboard', 'style.css')));
  for (const [name, text] of bundleDashboard(root)) add(`ui/${name}`, text);
  cached = files;
  return files;
}

/** The settings of a dashboard in front of an API serving `pages`, for the workflows it runs. */
export function dashboardSettings(options: {
  apiBase: string;
  workflows: WorkflowRegistry;
  pages: Pick<DashboardSettings, 'timeline' | 'batches' | 'schedules' | 'webhooks' | 'starts'>;
}): DashboardSettings {
  const names = [...options.workflows.keys()].sort();
  return {
    apiBase: options.apiBase,
    workflows: names,
    workflowDocs: names.map((name) => describeWorkflow(options.workflows.get(name)!)),
    statuses: [...jobStatuses],
    sources: [...jobSources],
    ...options.pages,
  };
}

/** The settings file the page reads first. */
export function settingsFile(settings: DashboardSettings): DashboardFile {
  return { body: Buffer.from(JSON.stringify(settings, null, 2)), contentType: typeOf('.json') };
}
