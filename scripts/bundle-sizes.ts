/**
 * Bundles the three Lambda functions with esbuild exactly as the CDK stack does (the same
 * `functionBundling()` settings from infra/lib/function-bundling.ts) and prints each bundle's size,
 * gzipped size, source map size and largest packages. Fails when a bundle holds a devDependency or
 * exceeds the size budget.
 *
 *   npx tsx scripts/bundle-sizes.ts [--max-kb=2048] [--json]
 */
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { type BuildOptions, build, type Metafile } from 'esbuild';
import {
  FUNCTION_ENTRIES,
  type FunctionName,
  functionBundling,
  functionEntry,
  PROJECT_ROOT,
} from '../infra/lib/function-bundling';

/** Size budget per minified bundle, in KiB, unless `--max-kb` says otherwise. */
const DEFAULT_MAX_KB = 2048;

/** The esbuild options NodejsFunction derives from our bundling settings (see aws-lambda-nodejs bundling). */
function esbuildOptions(entry: string, outfile: string): BuildOptions {
  const bundling = functionBundling();
  const legalComments = bundling.esbuildArgs?.['--legal-comments'];
  return {
    entryPoints: [entry],
    bundle: true,
    outfile,
    platform: 'node',
    target: bundling.target,
    format: bundling.format === 'esm' ? 'esm' : 'cjs',
    minify: bundling.minify,
    sourcemap: bundling.sourceMap,
    sourcesContent: bundling.sourcesContent,
    mainFields: bundling.mainFields,
    external: bundling.externalModules,
    ...(bundling.banner ? { banner: { js: bundling.banner } } : {}),
    ...(typeof legalComments === 'string'
      ? { legalComments: legalComments as BuildOptions['legalComments'] }
      : {}),
    logLevel: 'warning',
    metafile: true,
  };
}

/** The package an input path belongs to (`@scope/name` or `name`), or `(project)` for our own files. */
function packageOf(inputPath: string): string {
  const marker = 'node_modules/';
  const at = inputPath.lastIndexOf(marker);
  if (at < 0) return '(project)';
  const parts = inputPath.slice(at + marker.length).split('/');
  return parts[0]?.startsWith('@') ? `${parts[0]}/${parts[1]}` : (parts[0] ?? '(unknown)');
}

interface BundleReport {
  name: FunctionName;
  entry: string;
  bytes: number;
  gzipBytes: number;
  mapBytes: number;
  packages: { name: string; bytes: number }[];
  devDependencies: string[];
}

async function measure(
  name: FunctionName,
  outdir: string,
  devDependencies: Set<string>,
): Promise<BundleReport> {
  const outfile = path.join(outdir, name, 'index.mjs');
  const result = await build(esbuildOptions(functionEntry(name), outfile));
  const metafile = result.metafile as Metafile;
  const output =
    metafile.outputs[path.relative(process.cwd(), outfile)] ?? Object.values(metafile.outputs)[0];
  const byPackage = new Map<string, number>();
  for (const [input, { bytesInOutput }] of Object.entries(output?.inputs ?? {})) {
    const pkg = packageOf(input);
    byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + bytesInOutput);
  }
  const packages = [...byPackage.entries()]
    .map(([pkg, bytes]) => ({ name: pkg, bytes }))
    .sort((a, b) => b.bytes - a.bytes);
  return {
    name,
    entry: FUNCTION_ENTRIES[name],
    bytes: statSync(outfile).size,
    gzipBytes: gzipSync(readFileSync(outfile)).length,
    mapBytes: statSync(`${outfile}.map`).size,
    packages,
    devDependencies: packages.map((p) => p.name).filter((pkg) => devDependencies.has(pkg)),
  };
}

const kib = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`;

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  const maxKbArg = args.find((a) => a.startsWith('--max-kb='));
  const maxKb = maxKbArg ? Number(maxKbArg.slice('--max-kb='.length)) : DEFAULT_MAX_KB;
  if (!Number.isFinite(maxKb) || maxKb <= 0)
    throw new Error(`--max-kb must be a positive number, got ${maxKbArg}`);
  const manifest = JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8')) as {
    devDependencies?: Record<string, string>;
  };
  const devDependencies = new Set(Object.keys(manifest.devDependencies ?? {}));

  const outdir = mkdtempSync(path.join(tmpdir(), 'opflow-bundles-'));
  try {
    const reports: BundleReport[] = [];
    for (const name of Object.keys(FUNCTION_ENTRIES) as FunctionName[]) {
      reports.push(await measure(name, outdir, devDependencies));
    }
    if (args.includes('--json')) {
      process.stdout.write(`${JSON.stringify(reports, null, 2)}\n`);
    } else {
      for (const r of reports) {
        const top = r.packages
          .slice(0, 6)
          .map((p) => `${p.name} ${kib(p.bytes)}`)
          .join(', ');
        process.stdout.write(
          `${r.name.padEnd(8)} ${kib(r.bytes).padStart(11)}  gzip ${kib(r.gzipBytes).padStart(10)}  ` +
            `map ${kib(r.mapBytes).padStart(10)}  ${r.entry}\n         largest: ${top}\n`,
        );
      }
    }
    let failed = false;
    for (const r of reports) {
      if (r.devDependencies.length > 0) {
        process.stderr.write(`${r.name}: bundle contains devDependencies: ${r.devDependencies.join(', ')}\n`);
        failed = true;
      }
      if (r.bytes > maxKb * 1024) {
        process.stderr.write(`${r.name}: ${kib(r.bytes)} is over the ${maxKb} KiB budget\n`);
        failed = true;
      }
    }
    return failed ? 1 : 0;
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
