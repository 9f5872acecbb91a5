/**
 * Writes the dashboard as static files for a host in front of the AWS job API:
 *
 *   npm run dashboard:build -- --api https://abc123.execute-api.eu-west-1.amazonaws.com --out dist/dashboard
 *
 * The folder holds index.html, ui/ (the script bundled from dashboard/src with Preact, its source map,
 * the style) and ui/config.json naming the
 * API, with every page on: jobs, a job's timeline, batches, schedules and webhook deliveries. The API
 * must accept the people's JWTs and allow the page's origin with CORS (docs/guides/dashboard.md, docs/guides/deploy-access.md).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { dashboardFiles, dashboardSettings, settingsFile } from '../shared/dashboard/files';
import { errorMessage } from '../shared/errors/error-message';
import { workflows } from '../shared/workflows';

export function buildDashboard(options: { api: string; out: string }): string[] {
  let api: URL;
  try {
    api = new URL(options.api);
  } catch {
    throw new Error(`--api must be the job API's URL (https://...), not "${options.api}"`);
  }
  if (api.protocol !== 'https:' && !['localhost', '127.0.0.1', '[::1]'].includes(api.hostname)) {
    throw new Error('--api must be an https:// URL (plain http only for localhost)');
  }
  if (api.username || api.password || api.search) {
    throw new Error('--api must not carry credentials or a query string');
  }
  const files = new Map(dashboardFiles());
  files.set(
    'ui/config.json',
    settingsFile(
      dashboardSettings({
        apiBase: api.href.replace(/\/+$/, ''),
        workflows,
        // The AWS HTTP API serves every route the pages read (shared/runtime/lambda/api-routes.ts):
        // the timeline from the job history (HIST#), batches (BATCH#), the schedules of
        // OPFLOW_SCHEDULES with their state (SCHED#) and the webhook deliveries (HOOKLOG). Jobs
        // start from their form (POST /jobs), again from an earlier job's input (GET /jobs/{id}/input),
        // and manifests and documents through presigned S3 uploads (POST /batch-uploads, then for
        // documents POST /batch-uploads/commit).
        pages: {
          timeline: true,
          batches: true,
          schedules: true,
          webhooks: true,
          starts: { jobs: true, rerun: true, manifests: true, documents: true, documentUploads: 'presigned' },
        },
      }),
    ),
  );
  const written: string[] = [];
  for (const [name, file] of files) {
    const path = join(resolve(options.out), name);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, file.body);
    written.push(name);
  }
  return written;
}

const usage = `usage: npm run dashboard:build -- --api https://<your job API> [--out dist/dashboard]

Writes the dashboard as static files for any static host, pointed at the AWS job API:
  --api <url>   the job API's URL (https://<id>.execute-api.<region>.amazonaws.com; plain http only
                for localhost), written to ui/config.json
  --out <dir>   the folder to write (default dist/dashboard)
  -h, --help    this text
Every page is on (jobs, timelines, batches, schedules, webhooks). The API must accept the people's
JWTs and allow the page's origin with CORS (api.dashboardOrigins): docs/guides/dashboard.md
and docs/guides/deploy-access.md.
`;

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename ?? '')) {
  let values: { api?: string | undefined; out: string; help?: boolean | undefined };
  try {
    values = parseArgs({
      options: {
        api: { type: 'string' },
        out: { type: 'string', default: 'dist/dashboard' },
        help: { type: 'boolean', short: 'h' },
      },
    }).values as typeof values;
  } catch (error) {
    process.stderr.write(`dashboard:build: ${errorMessage(error)}\n${usage}`);
    process.exit(2);
  }
  if (values.help) {
    process.stdout.write(usage);
    process.exit(0);
  }
  if (!values.api) {
    process.stderr.write(`dashboard:build: --api is required\n${usage}`);
    process.exit(2);
  }
  try {
    const written = buildDashboard({ api: values.api, out: values.out });
    process.stdout.write(`wrote ${written.length} files to ${values.out}: ${written.join(', ')}\n`);
  } catch (error) {
    process.stderr.write(`dashboard:build: ${errorMessage(error)}\n`);
    process.exit(2);
  }
}
