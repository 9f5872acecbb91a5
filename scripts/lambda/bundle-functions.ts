/**
 * Bundles every Lambda function (functions/<name>/handler.ts) with esbuild exactly as the CDK app does (its
 * `functionBundling()` settings: ES module, `require` shim banner, module-first main fields, AWS SDK
 * bundled, minified, source maps), into a temporary folder, and loads them the way the Lambda
 * runtime does: a plain Node ES module import, once per simulated instance.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { buildDocumentExtractors } from '../../infra/lambda/build-extractors.mjs';
import {
  FUNCTIONS_WITH_EXTRACTORS,
  type FunctionName,
  functionAliases,
  functionBundling,
  functionEntries,
  PROJECT_ROOT,
} from '../../infra/lib/function-bundling';

export interface FunctionBundles {
  dir: string;
  files: Record<FunctionName, string>;
  bytes: Record<FunctionName, number>;
  /** Loads a fresh instance of a bundle (module state, clients and caches of its own). */
  load<T>(name: FunctionName): Promise<T>;
  remove(): Promise<void>;
}

let instances = 0;

export async function bundleFunctions(): Promise<FunctionBundles> {
  const settings = functionBundling();
  const root = await mkdtemp(join(tmpdir(), 'opflow-lambda-bundles-'));
  // Under a node_modules folder, vitest leaves the import to Node itself, as Lambda's runtime does.
  const dir = join(root, 'node_modules', 'opflow-functions');
  // The CDK app targets Lambda's Node 22; on an older Node the same code is built for that Node.
  const major = Number(process.versions.node.split('.')[0]);
  const target = major >= 22 ? settings.target : `node${major}`;
  const result = await build({
    absWorkingDir: PROJECT_ROOT,
    entryPoints: Object.fromEntries(
      Object.entries(functionEntries()).map(([name, entry]) => [name, join(PROJECT_ROOT, entry)]),
    ),
    outdir: dir,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target,
    minify: settings.minify,
    sourcemap: settings.sourceMap,
    sourcesContent: settings.sourcesContent,
    mainFields: settings.mainFields,
    banner: { js: settings.banner ?? '' },
    external: settings.externalModules,
    alias: functionAliases(),
    legalComments: 'none',
    metafile: true,
    logLevel: 'warning',
  });
  // The document extractors the ingest bundle imports on first use (infra/lambda/build-extractors.mjs),
  // beside the bundles as in the function's asset: built when such a function is first loaded, so
  // the suites that never load it do not wait for pdf.js to be bundled.
  let extractors: Promise<unknown> | undefined;
  const files = {} as Record<FunctionName, string>;
  const bytes = {} as Record<FunctionName, number>;
  for (const name of Object.keys(functionEntries())) {
    files[name] = join(dir, `${name}.mjs`);
    const output = Object.entries(result.metafile.outputs).find(([path]) => path.endsWith(`/${name}.mjs`));
    bytes[name] = output?.[1].bytes ?? 0;
  }
  return {
    dir,
    files,
    bytes,
    async load<T>(name: FunctionName) {
      const file = files[name];
      if (!file)
        throw new Error(`no function ${name} under functions/ (found ${Object.keys(files).join(', ')})`);
      if (FUNCTIONS_WITH_EXTRACTORS.includes(name)) {
        extractors ??= buildDocumentExtractors(dir, { target });
        await extractors;
      }
      instances += 1;
      return (await import(/* @vite-ignore */ `${pathToFileURL(file).href}?instance=${instances}`)) as T;
    },
    remove: () => rm(root, { recursive: true, force: true }),
  };
}
