/**
 * Builds every Lambda function (functions/<name>/handler.ts) exactly as the CDK app does
 * (infra/lib/function-bundling.ts's `buildFunction`: ES module with its lazy chunks beside it,
 * `require` shim banner, module-first main fields, AWS SDK bundled, minified, source maps), each into
 * a folder of its own in a temporary folder, and loads them the way the Lambda runtime does: a plain
 * Node ES module import, once per simulated instance.
 */
import { createHash } from 'node:crypto';
import { cp, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { buildDocumentExtractors } from '../../infra/lambda/build-extractors.mjs';
import {
  buildFunction,
  ESBUILD_TARGET,
  FUNCTIONS_WITH_EXTRACTORS,
  type FunctionName,
  functionEntries,
  LAMBDA_NODE_MAJOR,
  PROJECT_ROOT,
} from '../../infra/lib/function-bundling';
import { buildOnce } from './build-once';

export interface FunctionBundles {
  dir: string;
  files: Record<FunctionName, string>;
  bytes: Record<FunctionName, number>;
  /** Loads a fresh instance of a bundle (module state, clients and caches of its own). */
  load<T>(name: FunctionName): Promise<T>;
  remove(): Promise<void>;
}

export interface BundleFunctionsOptions {
  /**
   * Take the bundles from a build another call made (in this process or another: each aws e2e file
   * runs in a process of its own) while none of the files that build read has changed; the first
   * call builds, calls meanwhile wait for it (see {@link sharedBuild}). `dir` is then that shared
   * build: read it, never write into it. Each {@link FunctionBundles.load} still loads a fresh copy.
   */
  reuse?: boolean;
  /** Where shared builds are kept (default: the system's temporary folder). */
  sharedHome?: string;
}

let instances = 0;

/** The esbuild target of the bundles: Lambda's Node line, or on an older Node that Node's. */
function bundleTarget(): string {
  const major = Number(process.versions.node.split('.')[0]);
  return major >= LAMBDA_NODE_MAJOR ? ESBUILD_TARGET : `node${major}`;
}

export async function bundleFunctions(options: BundleFunctionsOptions = {}): Promise<FunctionBundles> {
  const root = await mkdtemp(join(tmpdir(), 'opflow-lambda-bundles-'));
  // Under a node_modules folder, vitest leaves the import to Node itself, as Lambda's runtime does.
  const copies = join(root, 'node_modules', 'opflow-functions');
  const target = bundleTarget();
  if (options.reuse) {
    const shared = await sharedBuild(target, options.sharedHome ?? tmpdir()).catch(async (error: unknown) => {
      await rm(root, { recursive: true, force: true });
      throw error;
    });
    return bundlesIn(shared.dir, shared.record.bytes, root, copies, async () => {});
  }
  const dir = copies;
  const bytes = {} as Record<FunctionName, number>;
  await Promise.all(
    Object.keys(functionEntries()).map(async (name) => {
      const metafile = await buildFunction(name, join(dir, name), { target, extractors: false });
      bytes[name] = outputBytes(name, metafile.outputs);
    }),
  );
  // The document extractors the ingest bundle imports on first use (infra/lambda/build-extractors.mjs),
  // beside the bundle as in the function's asset: built when such a function is first loaded, so
  // the suites that never load it do not wait for pdf.js to be bundled.
  const extractors = new Map<FunctionName, Promise<unknown>>();
  return bundlesIn(dir, bytes, root, copies, (name) => {
    if (!extractors.has(name)) extractors.set(name, buildDocumentExtractors(join(dir, name), { target }));
    return extractors.get(name) as Promise<unknown>;
  });
}

function outputBytes(name: FunctionName, outputs: Record<string, { bytes: number }>): number {
  return Object.entries(outputs).find(([path]) => path.endsWith(`/${name}/index.mjs`))?.[1].bytes ?? 0;
}

/**
 * The bundles built in `dir` (a folder per function), each load a copy under `copies` (in `root`,
 * which `remove` deletes). `beforeLoad` runs before a function with extractors is first loaded.
 */
function bundlesIn(
  dir: string,
  bytes: Record<FunctionName, number>,
  root: string,
  copies: string,
  beforeLoad: (name: FunctionName) => Promise<unknown>,
): FunctionBundles {
  const files = {} as Record<FunctionName, string>;
  for (const name of Object.keys(bytes)) files[name] = join(dir, name, 'index.mjs');
  return {
    dir,
    files,
    bytes,
    async load<T>(name: FunctionName) {
      const file = files[name];
      if (!file)
        throw new Error(`no function ${name} under functions/ (found ${Object.keys(files).join(', ')})`);
      if (FUNCTIONS_WITH_EXTRACTORS.includes(name)) await beforeLoad(name);
      instances += 1;
      // A fresh instance is a fresh copy of the function's folder: its entry and its chunks (which
      // the entry imports by relative URL) are new modules, with module state of their own.
      const copy = join(copies, `${name}@${instances}`);
      await cp(join(dir, name), copy, { recursive: true });
      return (await import(/* @vite-ignore */ pathToFileURL(join(copy, 'index.mjs')).href)) as T;
    },
    remove: () => rm(root, { recursive: true, force: true }),
  };
}

/** What a shared build records: the functions, every file esbuild read (content hashes), the sizes. */
export interface SharedBuildRecord {
  entries: Record<string, string>;
  inputs: Record<string, string>;
  bytes: Record<FunctionName, number>;
}

const sha256 = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');

/**
 * Every function's bundle for `target`, its extractors built too, built once (scripts/lambda/build-once.ts:
 * one process builds, the others wait and reuse) and reused while nothing it was built from changed:
 * every input esbuild's metafile names (project files and node_modules alike, compared by content),
 * the list of functions, and, in the folder's key, the build code itself (this file,
 * function-bundling.ts, build-extractors.mjs: the esbuild options), package-lock.json (the document
 * extractors' packages), the checkout's path and the target.
 */
export async function sharedBuild(target: string, sharedHome: string) {
  const own = await Promise.all(
    [
      'scripts/lambda/bundle-functions.ts',
      'scripts/lambda/build-once.ts',
      'infra/lib/function-bundling.ts',
      'infra/lambda/build-extractors.mjs',
      'package-lock.json',
    ].map((file) => readFile(join(PROJECT_ROOT, file)).then(sha256, () => 'missing')),
  );
  const key = sha256([PROJECT_ROOT, target, process.version, ...own].join('\n')).slice(0, 20);
  const entries = functionEntries();
  return buildOnce<SharedBuildRecord>({
    home: join(sharedHome, 'opflow-lambda-bundles-shared', key),
    fresh: async (record) =>
      JSON.stringify(record.entries) === JSON.stringify(entries) && (await unchanged(record.inputs)),
    build: async (dir) => {
      const bytes = {} as Record<FunctionName, number>;
      const inputs = new Set<string>();
      await Promise.all(
        Object.keys(entries).map(async (name) => {
          const out = join(dir, name);
          const metafile = await buildFunction(name, out, { target, extractors: false });
          if (FUNCTIONS_WITH_EXTRACTORS.includes(name)) await buildDocumentExtractors(out, { target });
          bytes[name] = outputBytes(name, metafile.outputs);
          for (const input of Object.keys(metafile.inputs)) inputs.add(input);
        }),
      );
      return { entries, inputs: await hashesOf([...inputs]), bytes };
    },
  });
}

/** The content hash of each file (paths as esbuild's metafile names them, from the project's root). */
async function hashesOf(files: string[]): Promise<Record<string, string>> {
  const hashes: Record<string, string> = {};
  await Promise.all(
    files.map(async (file) => {
      hashes[file] = await readFile(isAbsolute(file) ? file : join(PROJECT_ROOT, file)).then(
        sha256,
        () => 'missing',
      );
    }),
  );
  return hashes;
}

async function unchanged(inputs: Record<string, string>): Promise<boolean> {
  const now = await hashesOf(Object.keys(inputs));
  return Object.entries(inputs).every(([file, hash]) => now[file] === hash);
}
