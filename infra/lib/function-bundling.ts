/**
 * How opflow's Lambda functions are bundled: one set of esbuild settings shared by the stack's
 * NodejsFunctions and scripts/bundle-sizes.ts, so the sizes printed are the sizes deployed.
 */
import { existsSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DockerImage } from 'aws-cdk-lib';
import { type BundlingOptions, LogLevel, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { ESM_REQUIRE_BANNER, extractorAliases } from '../lambda/build-extractors.mjs';

/** The repository root (holds package.json, package-lock.json and functions/). */
export const PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/**
 * Functions under the names the stack gives them (construct id, entry file relative to the project root). Every other function is found by
 * {@link functionEntries}: a folder `functions/<name>/` with a `handler.ts` is a function named
 * `<name>`, bundled, measured (scripts/bundle-sizes.ts) and loadable by the e2e harness with no list
 * to update.
 */
export const FUNCTION_ENTRIES = {
  worker: 'functions/step-worker/handler.ts',
  api: 'functions/api/handler.ts',
  sweeper: 'functions/sweeper/handler.ts',
  ingest: 'functions/ingest/handler.ts',
  callbacks: 'functions/callback-sender/handler.ts',
  schedules: 'functions/schedules/handler.ts',
} as const;
/** A function's name: one of {@link FUNCTION_ENTRIES}, or the folder name of another under functions/. */
export type FunctionName = keyof typeof FUNCTION_ENTRIES | (string & {});

/** Every function, by name: entry file relative to the project root (see {@link FUNCTION_ENTRIES}). */
export function functionEntries(projectRoot: string = PROJECT_ROOT): Record<string, string> {
  const entries: Record<string, string> = { ...FUNCTION_ENTRIES };
  const known = new Set<string>(Object.values(FUNCTION_ENTRIES));
  for (const folder of readdirSync(path.join(projectRoot, 'functions'), { withFileTypes: true })) {
    const entry = `functions/${folder.name}/handler.ts`;
    if (!folder.isDirectory() || known.has(entry) || !existsSync(path.join(projectRoot, entry))) continue;
    entries[folder.name] = entry;
  }
  return entries;
}

/**
 * Stand-ins for packages in every bundle (esbuild `alias`; see infra/lambda/): the AWS SDK's default
 * credential chain reduced to the environment variables Lambda sets (infra/lambda/aws-credentials.mjs),
 * and the document extractors (mammoth, unpdf) as stubs that import their own files, built beside
 * the bundles of {@link FUNCTIONS_WITH_EXTRACTORS} (infra/lambda/build-extractors.mjs).
 * Unit tests run against the real package; the e2e suites and `npm run aws-local` run these bundles.
 * (zod needs none: `import * as z from 'zod'`, enforced by biome, lets esbuild keep only what is used.)
 */
export function functionAliases(projectRoot: string = PROJECT_ROOT): Record<string, string> {
  return {
    '@aws-sdk/credential-provider-node': path.join(projectRoot, 'infra/lambda/aws-credentials.mjs'),
    ...extractorAliases(),
  };
}

/** Node.js 22 on Lambda; esbuild target of every bundle. */
export const ESBUILD_TARGET = 'node22';

/**
 * Lets CommonJS dependencies bundled into an ES module call `require` (Node built-ins such as `os`
 * inside the AWS SDK or the X-Ray SDK). The alias keeps it from clashing with a bundled `createRequire`.
 */
export { ESM_REQUIRE_BANNER };

/**
 * The functions that read documents (shared/ingest/documents.ts): their assets get the extractor
 * files (`extractors/mammoth.mjs`, `extractors/unpdf.mjs`) beside `index.mjs`. scripts/bundle-sizes.ts
 * fails when another bundle holds an extractor stub, which would find no file to import.
 */
export const FUNCTIONS_WITH_EXTRACTORS: readonly FunctionName[] = ['ingest'];

/** Prefer packages' ES module builds so esbuild can tree-shake them (the AWS SDK v3 ships `module`). */
export const MAIN_FIELDS = ['module', 'main'];

/**
 * A Docker image that refuses to run. NodejsFunction silently falls back to Docker when it cannot
 * run esbuild locally; opflow bundles with the project's own esbuild only, so that fallback must fail
 * loudly instead of pulling an image (and breaking offline synth).
 */
class LocalEsbuildOnly extends DockerImage {
  constructor() {
    super('opflow/local-esbuild-only');
  }
  override run(): void {
    throw new Error(
      'opflow bundles its Lambda functions with the local esbuild, never Docker: the local esbuild could not run. ' +
        'Check that node_modules/esbuild is installed (npm ci) and works (npx esbuild --version).',
    );
  }
}

/** Throws when esbuild is not installed next to the project, naming what to do about it. */
export function assertLocalEsbuild(projectRoot: string = PROJECT_ROOT): void {
  const requireFromProject = createRequire(path.join(projectRoot, 'package.json'));
  try {
    requireFromProject.resolve('esbuild');
  } catch (error) {
    throw new Error(
      `esbuild is not installed in ${projectRoot}/node_modules; run npm ci. ` +
        'opflow never bundles in Docker, so synthesis cannot continue without it.',
      { cause: error },
    );
  }
}

/**
 * NodejsFunction bundling for every opflow function: local esbuild only, minified ES module with a
 * `require` shim, source maps (without sources, to keep the zip small), and the AWS SDK v3 bundled and
 * tree-shaken rather than taken from the runtime, so the deployed code is the code that was tested.
 */
export function functionBundling(name?: FunctionName): BundlingOptions {
  const extractors = name !== undefined && FUNCTIONS_WITH_EXTRACTORS.includes(name);
  return {
    ...(extractors
      ? {
          commandHooks: {
            beforeBundling: () => [],
            beforeInstall: () => [],
            afterBundling: (_inputDir: string, outputDir: string) => [
              `node "${path.join(PROJECT_ROOT, 'infra/lambda/build-extractors.mjs')}" "${outputDir}" --target=${ESBUILD_TARGET}`,
            ],
          },
        }
      : {}),
    forceDockerBundling: false,
    dockerImage: new LocalEsbuildOnly(),
    minify: true,
    sourceMap: true,
    sourcesContent: false,
    target: ESBUILD_TARGET,
    format: OutputFormat.ESM,
    mainFields: MAIN_FIELDS,
    banner: ESM_REQUIRE_BANNER,
    bundleAwsSDK: true,
    externalModules: [],
    logLevel: LogLevel.WARNING,
    esbuildArgs: {
      '--legal-comments': 'none',
      ...Object.fromEntries(
        Object.entries(functionAliases()).map(([name, file]) => [`--alias:${name}`, file]),
      ),
    },
  };
}

/** The absolute path of a function's entry file; throws when the file is missing. */
export function functionEntry(name: FunctionName, projectRoot: string = PROJECT_ROOT): string {
  const relative = functionEntries(projectRoot)[name] ?? `functions/${name}/handler.ts`;
  const entry = path.join(projectRoot, relative);
  if (!existsSync(entry)) throw new Error(`the ${name} function's entry ${relative} does not exist`);
  return entry;
}
