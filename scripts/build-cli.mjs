/**
 * Builds the `opflow` command to JavaScript with esbuild, so it starts without transpiling
 * TypeScript: `shared/cli/main.ts` and everything it imports (every command, found by following the
 * imports, so a new command is picked up without touching this file) become ES modules under
 * `dist/cli/<build>/`, one chunk per dynamic import so a command loads only what it uses. A few
 * pure-JavaScript packages that every command loads are bundled in (`BUNDLED_PACKAGES`: resolving and
 * reading their many small files is a good part of start-up); every other package stays in
 * node_modules and is imported at run time exactly as from the sources, so native modules
 * (better-sqlite3), packages that read their own files, and packages added later just work.
 *
 * `dist/cli/manifest.json` names the current build, when it started and every project file it was
 * built from. bin/opflow.js runs the build only when no source file is newer than that; otherwise it
 * rebuilds first (this module's `buildCli`), so old code never runs. Each build writes a folder of
 * its own and then replaces the manifest in one rename: processes building at the same time, or
 * still running an older build, never see a half-written one.
 *
 *   node scripts/build-cli.mjs          # what `npm ci` / `npm install` run (the `prepare` script)
 *   node scripts/build-cli.mjs --check  # exit 1 when the build is missing or older than the sources
 *
 * Plain JavaScript on purpose: it runs before anything else is built, and bin/opflow.js imports it.
 */
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** The repository root. */
export const PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** The CLI's entry, relative to the project root. */
export const CLI_ENTRY = 'shared/cli/main.ts';
/** Where builds go, relative to the project root. */
export const CLI_OUT_DIR = 'dist/cli';
const MANIFEST = 'manifest.json';
/**
 * Packages bundled into the build: plain JavaScript, no native code, no files read at run time.
 * zod stays external on purpose: schemas are handed to other packages (the MCP SDK) that use the
 * node_modules copy.
 */
export const BUNDLED_PACKAGES = ['commander', 'docx', 'marked', 'cli-progress', 'ulid', 'eventsource-parser'];

/** esbuild plugin: every package import is external unless the package is in `BUNDLED_PACKAGES`. */
const packagesExternalExceptBundled = {
  name: 'packages-external-except-bundled',
  setup(build) {
    build.onResolve({ filter: /^[^./]/ }, (args) => {
      if (args.path.startsWith('node:')) return { path: args.path, external: true };
      const parts = args.path.split('/');
      const name = args.path.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0];
      // Inside a bundled package, its own dependencies are bundled too.
      const inBundledPackage = args.importer.includes('node_modules/');
      if (BUNDLED_PACKAGES.includes(name) || inBundledPackage) return undefined;
      return { path: args.path, external: true };
    });
  },
};
/** Builds kept besides the current one (a running `opflow serve` may still load chunks of its own). */
const KEEP_OLD_BUILDS = 3;
const KEEP_YOUNGER_THAN_MS = 60 * 60_000;

/**
 * @typedef {{ format: 1, entry: string, builtAt: number, inputs: string[], node: string }} CliManifest
 */

/** The manifest of the current build, or undefined when there is none (or it is unreadable). */
export function readManifest(root = PROJECT_ROOT, outDir = CLI_OUT_DIR) {
  try {
    const manifest = JSON.parse(readFileSync(path.resolve(root, outDir, MANIFEST), 'utf8'));
    if (manifest?.format !== 1 || typeof manifest.entry !== 'string' || !Array.isArray(manifest.inputs))
      return undefined;
    return /** @type {CliManifest} */ (manifest);
  } catch {
    return undefined;
  }
}

/**
 * Why the build cannot be used (`no build yet`, `shared/cli/main.ts changed since the last build`,
 * ...), or undefined when it is current: every file it was built from is still there and none was
 * modified after the build started.
 */
export function staleReason(
  root = PROJECT_ROOT,
  outDir = CLI_OUT_DIR,
  manifest = readManifest(root, outDir),
) {
  if (!manifest) return 'no build yet';
  try {
    statSync(path.resolve(root, outDir, manifest.entry));
  } catch {
    return 'the last build is missing';
  }
  for (const input of manifest.inputs) {
    let modified;
    try {
      modified = statSync(path.join(root, input)).mtimeMs;
    } catch {
      return `${input} was removed since the last build`;
    }
    if (modified > manifest.builtAt) return `${input} changed since the last build`;
  }
  return undefined;
}

/** The current build's entry file, or undefined when it is missing or stale. */
export function currentEntry(root = PROJECT_ROOT, outDir = CLI_OUT_DIR) {
  const manifest = readManifest(root, outDir);
  if (staleReason(root, outDir, manifest) !== undefined || !manifest) return undefined;
  return path.resolve(root, outDir, manifest.entry);
}

/**
 * Builds the CLI into a new folder of `outDir`, makes it the current build and removes old ones.
 * Resolves with the new entry file. Needs esbuild (a development dependency).
 */
export async function buildCli(root = PROJECT_ROOT, outDir = CLI_OUT_DIR) {
  const { build } = await import('esbuild');
  const builtAt = Date.now();
  const name = `b-${builtAt.toString(36)}-${process.pid.toString(36)}`;
  const out = path.resolve(root, outDir);
  mkdirSync(out, { recursive: true });
  const result = await build({
    absWorkingDir: root,
    // The document extractor runs as a child process of its own (shared/ingest/documents.ts).
    entryPoints: {
      main: path.join(root, CLI_ENTRY),
      'document-extractor': path.join(root, 'shared/ingest/document-extractor.ts'),
    },
    outdir: path.join(out, name),
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    plugins: [packagesExternalExceptBundled],
    mainFields: ['module', 'main'],
    // CommonJS inside bundled packages may call require (of Node built-ins).
    banner: {
      js: "import { createRequire as __opflowCreateRequire } from 'node:module';const require = __opflowCreateRequire(import.meta.url);",
    },
    sourcemap: 'linked',
    chunkNames: 'chunks/[name]-[hash]',
    metafile: true,
    logLevel: 'warning',
  });
  const inputs = Object.keys(result.metafile.inputs)
    .filter((input) => !input.includes('node_modules/'))
    .map((input) => input.split(path.sep).join('/'))
    .sort();
  // The build also depends on what decides how files are resolved and compiled.
  for (const config of ['package.json', 'tsconfig.json', 'scripts/build-cli.mjs']) inputs.push(config);
  /** @type {CliManifest} */
  const manifest = { format: 1, entry: `${name}/main.js`, builtAt, inputs, node: process.version };
  const temporary = path.join(out, `${MANIFEST}.${process.pid}.tmp`);
  writeFileSync(temporary, `${JSON.stringify(manifest, null, 2)}\n`);
  renameSync(temporary, path.join(out, MANIFEST));
  removeOldBuilds(out, name);
  return path.join(out, manifest.entry);
}

/** Removes builds beyond the newest few, unless younger than an hour (a process may still use them). */
function removeOldBuilds(out, current) {
  const builds = readdirSync(out, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && entry.name.startsWith('b-') && entry.name !== current)
    .map((entry) => ({ name: entry.name, at: statSync(path.join(out, entry.name)).mtimeMs }))
    .sort((a, b) => b.at - a.at);
  for (const build of builds.slice(KEEP_OLD_BUILDS)) {
    if (Date.now() - build.at < KEEP_YOUNGER_THAN_MS) continue;
    rmSync(path.join(out, build.name), { recursive: true, force: true });
  }
}

/** Builds when the build is missing or stale; resolves with the entry file and whether it built. */
export async function ensureCliBuilt(root = PROJECT_ROOT, outDir = CLI_OUT_DIR) {
  const reason = staleReason(root, outDir);
  if (reason === undefined) return { entry: /** @type {string} */ (currentEntry(root, outDir)), reason };
  return { entry: await buildCli(root, outDir), reason };
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  if (process.argv.includes('--check')) {
    const reason = staleReason();
    process.stdout.write(reason ? `the CLI build is out of date: ${reason}\n` : 'the CLI build is current\n');
    process.exitCode = reason ? 1 : 0;
  } else {
    const started = performance.now();
    try {
      const entry = await buildCli();
      process.stdout.write(
        `opflow: built the CLI to ${path.relative(PROJECT_ROOT, entry)} in ${Math.round(performance.now() - started)} ms\n`,
      );
    } catch (error) {
      // An install without development dependencies has no esbuild: bin/opflow.js then runs the sources.
      if (error?.code !== 'ERR_MODULE_NOT_FOUND') throw error;
      process.stdout.write(
        'opflow: esbuild is not installed; the CLI will run from its TypeScript sources\n',
      );
    }
  }
}
