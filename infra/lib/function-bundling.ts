/**
 * How opflow's Lambda functions are bundled: one set of esbuild settings shared by the stack's
 * NodejsFunctions and scripts/bundle-sizes.ts, so the sizes printed are the sizes deployed.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DockerImage } from 'aws-cdk-lib';
import { type BundlingOptions, LogLevel, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';

/** The repository root (holds package.json, package-lock.json and functions/). */
export const PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The Lambda functions: construct id, entry file relative to the project root. */
export const FUNCTION_ENTRIES = {
  worker: 'functions/step-worker/handler.ts',
  api: 'functions/api/handler.ts',
  sweeper: 'functions/sweeper/handler.ts',
  ingest: 'functions/ingest/handler.ts',
} as const;
export type FunctionName = keyof typeof FUNCTION_ENTRIES;

/** Node.js 22 on Lambda; esbuild target of every bundle. */
export const ESBUILD_TARGET = 'node22';

/**
 * Lets CommonJS dependencies bundled into an ES module call `require` (Node built-ins such as `os`
 * inside the AWS SDK or the X-Ray SDK). The alias keeps it from clashing with a bundled `createRequire`.
 */
export const ESM_REQUIRE_BANNER =
  "import { createRequire as __opflowCreateRequire } from 'node:module';const require = __opflowCreateRequire(import.meta.url);";

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
export function functionBundling(): BundlingOptions {
  return {
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
    esbuildArgs: { '--legal-comments': 'none' },
  };
}

/** The absolute path of a function's entry file; throws when the file is missing. */
export function functionEntry(name: FunctionName, projectRoot: string = PROJECT_ROOT): string {
  const entry = path.join(projectRoot, FUNCTION_ENTRIES[name]);
  if (!existsSync(entry))
    throw new Error(`the ${name} function's entry ${FUNCTION_ENTRIES[name]} does not exist`);
  return entry;
}
