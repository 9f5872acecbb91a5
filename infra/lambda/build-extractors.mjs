/**
 * The ingest function's document extractors as files of their own. shared/ingest/documents.ts
 * imports mammoth (.docx) and unpdf (.pdf) with `import()`, but esbuild puts a dynamic import into the
 * one file NodejsFunction builds: 1.9 of the ingest bundle's 2.7 MiB, parsed at every cold start for
 * the rare document that needs it. In the Lambda bundles each of these packages is instead a stub
 * (an esbuild alias, `extractorAliases()`: extractor-stubs/) that imports `extractors/<package>.mjs`
 * beside the bundle on first use; this script builds those files (extractor-entries/), for the
 * stack, the e2e harness and `npm run bundle-sizes` (buildFunction in infra/lib/function-bundling.ts).
 *
 *   node infra/lambda/build-extractors.mjs <folder of the bundle> [--target=node24]
 */
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build, buildSync } from 'esbuild';

const here = path.dirname(fileURLToPath(import.meta.url));

/** The packages taken out of the Lambda bundles, each into `extractors/<name>.mjs`. */
export const EXTRACTOR_PACKAGES = ['mammoth', 'unpdf'];

/**
 * Lets CommonJS code bundled into an ES module call `require` (as function-bundling.ts's banner of
 * the functions' bundles, which re-exports this one).
 */
export const ESM_REQUIRE_BANNER =
  "import { createRequire as __opflowCreateRequire } from 'node:module';const require = __opflowCreateRequire(import.meta.url);";

/** esbuild aliases of the Lambda bundles: each extractor package is its stub. */
export function extractorAliases() {
  return Object.fromEntries(
    EXTRACTOR_PACKAGES.map((name) => [name, path.join(here, 'extractor-stubs', `${name}.mjs`)]),
  );
}

/** esbuild options of the extractor files of the bundle in `bundleDir`. */
function extractorBuildOptions(bundleDir, options = {}) {
  return {
    entryPoints: Object.fromEntries(
      EXTRACTOR_PACKAGES.map((name) => [name, path.join(here, 'extractor-entries', `${name}.mjs`)]),
    ),
    outdir: path.join(bundleDir, 'extractors'),
    outExtension: { '.js': '.mjs' },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: options.target ?? 'node24',
    minify: true,
    legalComments: 'none',
    mainFields: ['module', 'main'],
    banner: { js: ESM_REQUIRE_BANNER },
    logLevel: 'warning',
    metafile: true,
  };
}

/** Each extractor file's size in bytes, from esbuild's metafile. */
function sizesOf(metafile) {
  const sizes = {};
  for (const [file, output] of Object.entries(metafile.outputs)) {
    sizes[path.basename(file, '.mjs')] = output.bytes;
  }
  return sizes;
}

/** Builds `<bundleDir>/extractors/<package>.mjs` for each extractor; their sizes in bytes. */
export async function buildDocumentExtractors(bundleDir, options = {}) {
  return sizesOf((await build(extractorBuildOptions(bundleDir, options))).metafile);
}

/** {@link buildDocumentExtractors}, synchronously (the CDK app's local bundling is synchronous). */
export function buildDocumentExtractorsSync(bundleDir, options = {}) {
  return sizesOf(buildSync(extractorBuildOptions(bundleDir, options)).metafile);
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  const [dir, ...flags] = process.argv.slice(2);
  if (!dir) {
    process.stderr.write(
      'usage: node infra/lambda/build-extractors.mjs <folder of the bundle> [--target=node24]\n',
    );
    process.exit(2);
  }
  const target = flags.find((flag) => flag.startsWith('--target='))?.slice('--target='.length);
  await buildDocumentExtractors(dir, { target });
}
