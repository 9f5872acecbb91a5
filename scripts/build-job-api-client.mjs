/**
 * Builds the typed job API client (shared/job-api-client) as JavaScript for Node (ESM) into
 * dist/job-api-client/index.mjs, the file the package's `exports["./job-api-client"]` names.
 * Its packages (openapi-fetch, @smithy/signature-v4) stay imports, resolved from node_modules.
 * Runs in `npm ci` (prepare) beside the CLI build; needs esbuild (a development dependency).
 *
 *   node scripts/build-job-api-client.mjs
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export async function buildJobApiClient() {
  let esbuild;
  try {
    esbuild = await import('esbuild');
  } catch {
    // An install without development dependencies: the client's TypeScript source stays usable.
    return undefined;
  }
  const outfile = path.join(root, 'dist/job-api-client/index.mjs');
  await esbuild.build({
    absWorkingDir: root,
    entryPoints: [path.join(root, 'shared/job-api-client/index.ts')],
    outfile,
    bundle: true,
    packages: 'external',
    format: 'esm',
    platform: 'node',
    target: 'node20',
    logLevel: 'warning',
  });
  return outfile;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await buildJobApiClient();
}
