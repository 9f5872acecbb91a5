/**
 * Bundles the three Lambda functions with esbuild exactly as the CDK stack does (the same
 * `functionBundling()` settings from infra/lib/function-bundling.ts) and prints each bundle's size,
 * gzipped size, source map size, largest packages and the AWS SDK commands it kept (the SDK is
 * tree-shaken: only commands the code sends survive). Fails when a bundle holds a package that is
 * only a development dependency (per package-lock.json, devDependencies and everything only they
 * pull in) or exceeds the size budget.
 *
 *   npx tsx scripts/bundle-sizes.ts [--max-kb=2048] [--json]
 */
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
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
export const DEFAULT_MAX_KB = 2048;
/**
 * Functions with a budget of their own: `ingest` carries a PDF reader (pdf.js through unpdf, 1.6 MB
 * minified) and a .docx reader; it runs in the background, where a slower cold start costs nothing.
 */
export const MAX_KB_BY_FUNCTION: Partial<Record<FunctionName, number>> = { ingest: 4608 };

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

/** What one bundle holds. */
export interface BundleReport {
  name: FunctionName;
  entry: string;
  bytes: number;
  gzipBytes: number;
  mapBytes: number;
  /** Bytes each package contributes to the minified bundle, largest first. */
  packages: { name: string; bytes: number }[];
  /** Install locations of packages in the bundle that only development needs (should be none). */
  devOnlyPackages: string[];
  /** AWS SDK commands left in the bundle after tree-shaking, by package (`@aws-sdk/client-s3`: `PutObject`, ...). */
  sdkCommands: Record<string, string[]>;
}

/**
 * Install locations (`node_modules/a/node_modules/b`, as package-lock.json names them) of the packages
 * the lockfile marks `dev`: the devDependencies and every package only they depend on. Nothing
 * installed there may reach a Lambda bundle.
 */
export function devOnlyPackages(projectRoot: string = PROJECT_ROOT): Set<string> {
  const lock = JSON.parse(readFileSync(path.join(projectRoot, 'package-lock.json'), 'utf8')) as {
    packages?: Record<string, { dev?: boolean }>;
  };
  return new Set(
    Object.entries(lock.packages ?? {})
      .filter(([location, entry]) => entry.dev === true && location.startsWith('node_modules/'))
      .map(([location]) => location),
  );
}

/** The install location of the package an input path is in (`node_modules/@scope/name/...` → `node_modules/@scope/name`). */
function locationOf(inputPath: string): string | undefined {
  const start = inputPath.indexOf('node_modules/');
  if (start < 0) return undefined;
  const parts = inputPath.slice(start).split('/');
  const location: string[] = [];
  for (let i = 0; i < parts.length; i++) {
    if (parts[i] !== 'node_modules') break;
    const name = parts[i + 1]?.startsWith('@') ? `${parts[i + 1]}/${parts[i + 2]}` : parts[i + 1];
    if (!name) break;
    location.push('node_modules', name);
    i += name.split('/').length;
  }
  return location.join('/');
}

/** `@aws-sdk/client-s3/dist-es/commands/PutObjectCommand.js` → `['@aws-sdk/client-s3', 'PutObject']`. */
function sdkCommandOf(inputPath: string): [string, string] | undefined {
  const match = /node_modules\/(@aws-sdk\/[^/]+)\/.*\/commands\/(\w+)Command\.js$/.exec(inputPath);
  return match ? [match[1] as string, match[2] as string] : undefined;
}

/** Bundles one function into `outdir/<name>/index.mjs` and reports what it holds. */
export async function measureBundle(
  name: FunctionName,
  outdir: string,
  devOnly: Set<string> = devOnlyPackages(),
): Promise<BundleReport> {
  const outfile = path.join(outdir, name, 'index.mjs');
  const result = await build(esbuildOptions(functionEntry(name), outfile));
  const metafile = result.metafile as Metafile;
  const output =
    metafile.outputs[path.relative(process.cwd(), outfile)] ?? Object.values(metafile.outputs)[0];
  const byPackage = new Map<string, number>();
  const sdkCommands: Record<string, string[]> = {};
  const devOnlyInBundle = new Set<string>();
  for (const [input, { bytesInOutput }] of Object.entries(output?.inputs ?? {})) {
    const pkg = packageOf(input);
    byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + bytesInOutput);
    const location = locationOf(input);
    if (location && devOnly.has(location) && bytesInOutput > 0) devOnlyInBundle.add(location);
    // esbuild lists every file it read; a command tree-shaken away contributes no bytes.
    const command = sdkCommandOf(input);
    if (command && bytesInOutput > 0)
      sdkCommands[command[0]] = [...(sdkCommands[command[0]] ?? []), command[1]];
  }
  for (const commands of Object.values(sdkCommands)) commands.sort();
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
    devOnlyPackages: [...devOnlyInBundle].sort(),
    sdkCommands,
  };
}

const kib = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`;

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  const maxKbArg = args.find((a) => a.startsWith('--max-kb='));
  const maxKb = maxKbArg ? Number(maxKbArg.slice('--max-kb='.length)) : DEFAULT_MAX_KB;
  if (!Number.isFinite(maxKb) || maxKb <= 0)
    throw new Error(`--max-kb must be a positive number, got ${maxKbArg}`);
  const devOnly = devOnlyPackages();

  const outdir = mkdtempSync(path.join(tmpdir(), 'opflow-bundles-'));
  try {
    const reports: BundleReport[] = [];
    for (const name of Object.keys(FUNCTION_ENTRIES) as FunctionName[]) {
      reports.push(await measureBundle(name, outdir, devOnly));
    }
    if (args.includes('--json')) {
      process.stdout.write(`${JSON.stringify(reports, null, 2)}\n`);
    } else {
      for (const r of reports) {
        const top = r.packages
          .slice(0, 6)
          .map((p) => `${p.name} ${kib(p.bytes)}`)
          .join(', ');
        const sdk = Object.entries(r.sdkCommands)
          .map(([pkg, commands]) => `${pkg.replace('@aws-sdk/', '')} ${commands.join(' ')}`)
          .join('; ');
        process.stdout.write(
          `${r.name.padEnd(8)} ${kib(r.bytes).padStart(11)}  gzip ${kib(r.gzipBytes).padStart(10)}  ` +
            `map ${kib(r.mapBytes).padStart(10)}  ${r.entry}\n         largest: ${top}\n` +
            `         SDK commands: ${sdk}\n`,
        );
      }
    }
    let failed = false;
    for (const r of reports) {
      if (r.devOnlyPackages.length > 0) {
        process.stderr.write(
          `${r.name}: bundle contains development-only packages: ${r.devOnlyPackages.join(', ')}\n`,
        );
        failed = true;
      }
      const budget = maxKbArg ? maxKb : (MAX_KB_BY_FUNCTION[r.name] ?? maxKb);
      if (r.bytes > budget * 1024) {
        process.stderr.write(`${r.name}: ${kib(r.bytes)} is over the ${budget} KiB budget\n`);
        failed = true;
      }
    }
    return failed ? 1 : 0;
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}

// Run only as a script: the test imports measureBundle and devOnlyPackages.
if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  main().then(
    (code) => process.exit(code),
    (error: unknown) => {
      process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
      process.exit(1);
    },
  );
}
