/**
 * Builds every Lambda function (functions/<name>/handler.ts) exactly as the CDK app does
 * (infra/lib/function-bundling.ts's `buildFunction`: ES module with its lazy chunks beside it,
 * `require` shim banner, module-first main fields, AWS SDK bundled, minified, source maps), each into
 * a folder of its own in a temporary folder, and loads them the way the Lambda runtime does: a plain
 * Node ES module import, once per simulated instance.
 */
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { buildDocumentExtractors } from '../../infra/lambda/build-extractors.mjs';
import {
  buildFunction,
  ESBUILD_TARGET,
  FUNCTIONS_WITH_EXTRACTORS,
  type FunctionName,
  functionEntries,
  LAMBDA_NODE_MAJOR,
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
  const root = await mkdtemp(join(tmpdir(), 'opflow-lambda-bundles-'));
  // Under a node_modules folder, vitest leaves the import to Node itself, as Lambda's runtime does.
  const dir = join(root, 'node_modules', 'opflow-functions');
  // The CDK app targets Lambda's Node line; on an older Node the same code is built for that Node.
  const major = Number(process.versions.node.split('.')[0]);
  const target = major >= LAMBDA_NODE_MAJOR ? ESBUILD_TARGET : `node${major}`;
  const names = Object.keys(functionEntries());
  const files = {} as Record<FunctionName, string>;
  const bytes = {} as Record<FunctionName, number>;
  // The document extractors the ingest bundle imports on first use (infra/lambda/build-extractors.mjs),
  // beside the bundle as in the function's asset: built when such a function is first loaded, so
  // the suites that never load it do not wait for pdf.js to be bundled.
  const extractors = new Map<FunctionName, Promise<unknown>>();
  await Promise.all(
    names.map(async (name) => {
      const metafile = await buildFunction(name, join(dir, name), { target, extractors: false });
      files[name] = join(dir, name, 'index.mjs');
      const output = Object.entries(metafile.outputs).find(([path]) => path.endsWith(`/${name}/index.mjs`));
      bytes[name] = output?.[1].bytes ?? 0;
    }),
  );
  return {
    dir,
    files,
    bytes,
    async load<T>(name: FunctionName) {
      const file = files[name];
      if (!file)
        throw new Error(`no function ${name} under functions/ (found ${Object.keys(files).join(', ')})`);
      if (FUNCTIONS_WITH_EXTRACTORS.includes(name)) {
        if (!extractors.has(name)) extractors.set(name, buildDocumentExtractors(join(dir, name), { target }));
        await extractors.get(name);
      }
      instances += 1;
      // A fresh instance is a fresh copy of the function's folder: its entry and its chunks (which
      // the entry imports by relative URL) are new modules, with module state of their own.
      const copy = join(dir, `${name}@${instances}`);
      await cp(join(dir, name), copy, { recursive: true });
      return (await import(/* @vite-ignore */ pathToFileURL(join(copy, 'index.mjs')).href)) as T;
    },
    remove: () => rm(root, { recursive: true, force: true }),
  };
}
