/**
 * How opflow's Lambda functions are built: one set of esbuild settings (`functionBuildOptions`) for
 * the stack's functions (`functionCode`, the CDK asset), the e2e harness and `npm run aws-local`
 * (scripts/lambda/bundle-functions.ts) and scripts/bundle-sizes.ts, so the sizes printed are the
 * sizes deployed.
 *
 * Each function is an ES module `index.mjs` with code splitting: what the source imports with
 * `await import(...)` (a finished job's report rendering, ...) is a chunk beside it
 * (`chunks/*.mjs`), loaded on first use instead of parsed at every cold start. Code that the entry
 * and a lazy chunk share sits in a shared chunk the entry imports at once.
 */
import { existsSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { AssetHashType, DockerImage } from 'aws-cdk-lib';
import { Code } from 'aws-cdk-lib/aws-lambda';
import { type BuildOptions, build, buildSync, type Metafile } from 'esbuild';
import {
  buildDocumentExtractors,
  buildDocumentExtractorsSync,
  ESM_REQUIRE_BANNER,
  extractorAliases,
} from '../lambda/build-extractors.mjs';

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
  webhooks: 'functions/webhooks/handler.ts',
  events: 'functions/events/handler.ts',
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

/** The Node.js line of Lambda's runtime (`nodejs24.x`). */
export const LAMBDA_NODE_MAJOR = 24;
/** esbuild target of every bundle: Lambda's Node.js line. */
export const ESBUILD_TARGET = `node${LAMBDA_NODE_MAJOR}`;

/**
 * Lets CommonJS dependencies bundled into an ES module call `require` (Node built-ins such as `os`
 * inside the AWS SDK). The alias keeps it from clashing with a bundled `createRequire`.
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
 * A Docker image that refuses to run. An asset's bundling falls back to Docker when local bundling
 * declines; opflow bundles with the project's own esbuild only, so that fallback must fail loudly
 * instead of pulling an image (and breaking offline synth).
 */
export class LocalEsbuildOnly extends DockerImage {
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

/** Options of {@link functionBuildOptions} and {@link buildFunction}. */
export interface FunctionBuildSettings {
  /** esbuild target; default {@link ESBUILD_TARGET} (the e2e harness builds for the Node it runs on). */
  target?: string | undefined;
  /** Another entry file built the same way (bundle-sizes' baselines); default the function's handler.ts. */
  entry?: string | undefined;
}

/**
 * The esbuild options of one function, built into `outdir`: `index.mjs` (the handler), its lazy and
 * shared chunks under `chunks/`, source maps (without sources, to keep the zip small). Minified ES
 * module with a `require` shim; the AWS SDK v3 bundled and tree-shaken rather than taken from the
 * runtime, so the deployed code is the code that was tested; nothing external.
 */
export function functionBuildOptions(
  name: FunctionName,
  outdir: string,
  settings: FunctionBuildSettings = {},
): BuildOptions & { metafile: true } {
  return {
    absWorkingDir: PROJECT_ROOT,
    entryPoints: {
      index: settings.entry ?? functionEntry(name),
      // The document extractor is a child process of its own, beside index.mjs (shared/ingest/documents.ts).
      ...(FUNCTIONS_WITH_EXTRACTORS.includes(name) && settings.entry === undefined
        ? { 'document-extractor': path.join(PROJECT_ROOT, 'shared/ingest/document-extractor.ts') }
        : {}),
    },
    outdir,
    outExtension: { '.js': '.mjs' },
    chunkNames: 'chunks/[name]-[hash]',
    bundle: true,
    splitting: true,
    platform: 'node',
    format: 'esm',
    target: settings.target ?? ESBUILD_TARGET,
    minify: true,
    sourcemap: true,
    sourcesContent: false,
    mainFields: MAIN_FIELDS,
    banner: { js: ESM_REQUIRE_BANNER },
    external: [],
    alias: functionAliases(),
    legalComments: 'none',
    logLevel: 'warning',
    metafile: true,
  };
}

/**
 * Builds one function into `outdir` (see {@link functionBuildOptions}), with the document
 * extractors beside it for {@link FUNCTIONS_WITH_EXTRACTORS} unless `extractors` is false (the e2e
 * harness builds them when such a function is first loaded). Returns esbuild's metafile.
 */
export async function buildFunction(
  name: FunctionName,
  outdir: string,
  settings: FunctionBuildSettings & { extractors?: boolean } = {},
): Promise<Metafile> {
  const result = await build(functionBuildOptions(name, outdir, settings));
  if (settings.extractors !== false && FUNCTIONS_WITH_EXTRACTORS.includes(name)) {
    await buildDocumentExtractors(outdir, { target: settings.target ?? ESBUILD_TARGET });
  }
  return result.metafile;
}

/** {@link buildFunction}, synchronously: the CDK app's local bundling is synchronous. */
export function buildFunctionSync(name: FunctionName, outdir: string): Metafile {
  const result = buildSync(functionBuildOptions(name, outdir));
  if (FUNCTIONS_WITH_EXTRACTORS.includes(name)) {
    buildDocumentExtractorsSync(outdir, { target: ESBUILD_TARGET });
  }
  return result.metafile;
}

/**
 * The local bundling of one function's asset. Its `functionName` property is part of the asset's
 * cache key (CDK caches bundled assets by the JSON of their bundling options, where a function
 * such as `tryBundle` counts for nothing): without it, every function would get the first one's code.
 */
class LocalFunctionBuild {
  constructor(readonly functionName: FunctionName) {}
  tryBundle(outputDir: string): boolean {
    assertLocalEsbuild();
    buildFunctionSync(this.functionName, outputDir);
    return true;
  }
}

/**
 * A function's code for the stack: the asset {@link buildFunctionSync} writes (as NodejsFunction
 * builds its asset, but with code splitting, which NodejsFunction's single `--outfile` cannot do),
 * hashed by its output. The handler is `index.handler`. Never Docker: {@link LocalEsbuildOnly}.
 */
export function functionCode(name: FunctionName): Code {
  return Code.fromAsset(PROJECT_ROOT, {
    assetHashType: AssetHashType.OUTPUT,
    bundling: { image: new LocalEsbuildOnly(), local: new LocalFunctionBuild(name) },
  });
}

/** The absolute path of a function's entry file; throws when the file is missing. */
export function functionEntry(name: FunctionName, projectRoot: string = PROJECT_ROOT): string {
  const relative = functionEntries(projectRoot)[name] ?? `functions/${name}/handler.ts`;
  const entry = path.join(projectRoot, relative);
  if (!existsSync(entry)) throw new Error(`the ${name} function's entry ${relative} does not exist`);
  return entry;
}
