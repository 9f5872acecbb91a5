#!/usr/bin/env node
// Entry point of the `opflow` command. It runs the JavaScript build of shared/cli (dist/cli, made by
// `npm ci` / `npm install` through scripts/build-cli.mjs) when that build is current: no source file
// it was built from changed since. Otherwise it rebuilds first (one line on stderr says why), so old
// code never runs; without esbuild (an install without development dependencies), or with
// OPFLOW_FROM_SOURCE=1, it runs the TypeScript sources through tsx instead (slower start-up).
import { readFileSync, statSync } from 'node:fs';
import module from 'node:module';
import { pathToFileURL } from 'node:url';

const root = new URL('../', import.meta.url);

/** The current build's entry, or undefined when it is missing or older than a source it was built from. */
function currentBuild() {
  try {
    const manifest = JSON.parse(readFileSync(new URL('dist/cli/manifest.json', root), 'utf8'));
    for (const input of manifest.inputs) {
      if (statSync(new URL(input, root)).mtimeMs > manifest.builtAt) return undefined;
    }
    const entry = new URL(`dist/cli/${manifest.entry}`, root);
    statSync(entry);
    return entry;
  } catch {
    return undefined;
  }
}

async function rebuilt() {
  const { ensureCliBuilt } = await import('../scripts/build-cli.mjs');
  try {
    const { entry, reason } = await ensureCliBuilt();
    if (reason) process.stderr.write(`opflow: rebuilt the CLI (${reason})\n`);
    return pathToFileURL(entry);
  } catch (error) {
    if (error?.code !== 'ERR_MODULE_NOT_FOUND') throw error;
    return undefined;
  }
}

// Node 22 keeps the compiled code of the modules it loads on disk and reuses it on the next start.
module.enableCompileCache?.();
if (process.env.OPFLOW_DEBUG) process.setSourceMapsEnabled(true);
// `opflow list | head`: a reader that stops early is not an error.
process.stdout.on('error', (error) => {
  if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw error;
});
const entry = process.env.OPFLOW_FROM_SOURCE === '1' ? undefined : (currentBuild() ?? (await rebuilt()));
if (entry) {
  const { main } = await import(entry.href);
  await main(process.argv);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  const { main } = await import('../shared/cli/main.ts');
  await main(process.argv);
}
