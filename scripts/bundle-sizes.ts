/**
 * Builds every Lambda function (each `functions/<name>/handler.ts`, found by `functionEntries()`)
 * exactly as the CDK stack does (`buildFunction` of infra/lib/function-bundling.ts: the entry
 * `index.mjs` and its chunks) and prints each function's size: what a cold start loads (the entry
 * and the shared chunks it imports at once), and apart from it the chunks loaded on first use (a
 * finished job's report rendering, ...), with the largest packages of each and the AWS SDK commands
 * kept (the SDK is tree-shaken: only commands the code sends survive). Then it measures a cold import
 * of each function: a new Node process that imports its entry (module scope included: clients
 * built, configuration read), side by side in rounds with the same for an empty handler built the
 * same way, for Node's built-ins that the SDK's HTTPS handler loads, and for the AWS SDK floor (the
 * DynamoDB and SQS clients alone, which every function but callbacks builds), and prints the ratios
 * of the medians.
 * Fails when a bundle holds a package that is only a development dependency (per
 * package-lock.json, devDependencies and everything only they pull in) or exceeds the size budget.
 *
 *   npm run bundle-sizes [-- --max-kb=2048] [--rounds=9] [--no-cold] [--json] [--page]
 *
 * `--page` also writes the figures into bench/bundle-sizes.md (scripts/bundle-sizes-page.ts).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build, type Metafile } from 'esbuild';
import { EXTRACTOR_PACKAGES } from '../infra/lambda/build-extractors.mjs';
import {
  buildFunction,
  FUNCTIONS_WITH_EXTRACTORS,
  type FunctionName,
  functionBuildOptions,
  functionEntries,
  PROJECT_ROOT,
} from '../infra/lib/function-bundling';
import { errorMessage } from '../shared/errors/error-message';

/**
 * Size budget per minified bundle, in KiB, unless `--max-kb` says otherwise: a guard against a
 * bundle that swallows something big by mistake, for a function with no budget of its own.
 */
export const DEFAULT_MAX_KB = 1024;
/**
 * Each function's budget, for what a cold start loads (the entry and the chunks it imports at once):
 * its size on 24 November 2026 (when the api and schedules functions began to load S3 on
 * first use) and some 3% of room, so that a package or module pulled in by mistake fails the
 * bundle-sizes test instead of adding to every cold start unnoticed. Raise a budget only for code the
 * function needs, and say so in the commit. (The chunks loaded on first use and `ingest`'s document
 * extractors are not counted.) Raised on 27 November 2026 for code the functions need: two more
 * workflows (FTO search, technical Q&A) with their steps, reports and the typed response schemas
 * of their 12 operations, legal status and family (worker 952 -> 990, api 706 -> 750, ingest
 * 830 -> 850, schedules 614 -> 650). Lowered the same day when the step worker stopped bundling the
 * X-Ray tracer (Powertools Tracer and aws-xray-sdk-core: 976.6 -> 855.7 KiB; worker 990 -> 880).
 * Raised the same day for the api: the HTTP route table with its request and answer schemas
 * (shared/http/routes.ts) took it to 754.5 KiB (api 750 -> 775). The webhook route's own function
 * (27 November 2026): 684.2 KiB, budget 705; the api left the webhook code and the Secrets Manager
 * client to it (754.5 -> 716.2 KiB). Raised on 27 November 2026 for three more workflows
 * (specification drafting, feasibility analysis, translation) with the typed schemas of their 9
 * operations, the novelty check's legal status and family steps, poll plans priced by cost,
 * priorities and fair shares, and per-job cost caps: worker 903.3 KiB (880 -> 930), ingest 870.8
 * (850 -> 900), schedules 664.8 (650 -> 685), webhooks 708.1 (705 -> 730). Raised on 27 November
 * 2026 for two design workflows (design infringement search and 1v1: image input checks, reports,
 * the typed schemas of 4 operations), about 19 KiB each: api 758.3 -> 777.6 KiB (775 -> 800),
 * schedules 666.9 -> 685.7 (685 -> 705), webhooks 710.3 -> 729.2 (730 -> 750). Raised on 27
 * November 2026 for the reviewers' pass in the sweeper: its code is a chunk loaded on first use,
 * but the parts of the modules it shares with the sweep (zod, the job store, the SDK) that it uses
 * stay in the chunks loaded at start (sweeper 430.7 KiB, 375 -> 445); webhooks 743.9 with the
 * confirmation page (within 750). Raised on 27 November 2026 for streamed answers shown as they
 * arrive (the step runner's throttled answer publisher; its DynamoDB store is a chunk loaded on
 * first use): worker 929.8 -> 932.4 KiB (930 -> 940). Raised on 27 November 2026 for the ingest
 * schedule in the job table (entries, driver slots) that replaced the ingest queue (its Lambda
 * client is a chunk loaded on first use): ingest 900.0 KiB (900 -> 910). Raised on 27 November 2026
 * for the api's admission of a new job's first call (its first message holds its token: the key's
 * limiter, the bucket arithmetic and acquireToken with the parts of advance it uses): api 795.2 ->
 * 819.2 KiB (800 -> 825); the step worker records each tenant's key's bucket for it (KEYOF# items)
 * and the aws pipeline's own submits take first tokens too: worker 938.1 -> 944.7 KiB (940 -> 950).
 * Raised on 27 November 2026 for fair shares kept in the key's bucket item (every token charged in
 * the write that takes it; the ledger itself is a chunk loaded on first use, the limiter's share
 * claims and the api's shares setting are not): worker 945.0 -> 950.5 KiB (950 -> 955), api
 * 825.3 (already over on main) -> 828.8 KiB (825 -> 835). Raised on 28 November 2026 for GET
 * /webhook-sources (its route entry and handler; the view itself is a chunk loaded on first use):
 * api 834.7 -> 835.8 KiB (835 -> 837). Lowered on 28 November 2026 when the Secrets Manager
 * builder left clients.ts (secrets-manager-client.ts) and the webhook route's handler left
 * automation.ts (webhook-handler.ts): the reviewers' pass no longer puts the Secrets Manager SDK in
 * the cold start of the functions that load it on first use (sweeper 435.2 -> 422.1 KiB, 445 -> 435);
 * the api's call for the second approver after a first approval is a chunk of its own (api 829.1 ->
 * 833.2 KiB, within 837). Raised on 28 November 2026 for the api's wake of a batch whose job it
 * cancels (the ingest function invoked, as the step worker does; the wake and the Lambda client are
 * chunks loaded on first use, but esbuild's splitting then places @aws-sdk/core's
 * AwsRestJsonProtocol, 1.8 KiB, in a chunk the entry imports): api 834.5 -> 837.2 KiB (837 -> 839).
 * Raised the same day for the webhooks function's call for the second approver after a first
 * approval on the confirmation page: the pass is a chunk (sweep-reviews.ts, apart from the page),
 * the listener and its loader at start, 1.0 KiB of project code and 1.5 KiB of chunk imports:
 * webhooks 749.1 -> 751.6 KiB (750 -> 752).
 * Raised 2026-11-29 for the "did you mean" a new user gets from an unknown workflow in POST /jobs
 * (job-commands.ts), a manifest line (ingest-item.ts) and the reviewer's page that keeps a refused
 * form's name and says a closed job's state in words (shared/openplatform/closest-name.ts, static:
 * a dynamic import measured worse, esbuild moving edit-distance into a chunk loaded at start):
 * api 838.7 -> 839.3, ingest 909.9 -> 910.4, webhooks 751.9 -> 752.7 KiB (+1 KiB each); the worker
 * is unchanged (954.6 KiB).
 */
export const MAX_KB_BY_FUNCTION: Partial<Record<FunctionName, number>> = {
  worker: 955,
  api: 840,
  sweeper: 435,
  ingest: 911,
  callbacks: 620,
  schedules: 705,
  webhooks: 753,
  // The change log of GET /events: a DynamoDB client, the config loader and Powertools (313.9 KiB).
  events: 330,
};
/** The goals set for a cold start: printed beside each figure, not enforced. */
const GOAL_BYTES = 400_000;
const GOAL_COLD_RATIO = 2;

/** The package an input path belongs to (`@scope/name` or `name`), or `(project)` for our own files. */
function packageOf(inputPath: string): string {
  const marker = 'node_modules/';
  const at = inputPath.lastIndexOf(marker);
  if (at < 0) return '(project)';
  const parts = inputPath.slice(at + marker.length).split('/');
  return parts[0]?.startsWith('@') ? `${parts[0]}/${parts[1]}` : (parts[0] ?? '(unknown)');
}

/** What one function's build holds. */
export interface BundleReport {
  name: FunctionName;
  entry: string;
  /** The entry file, `index.mjs`. */
  bytes: number;
  /** What a cold start loads: the entry and the chunks it imports at once (shared code). */
  startBytes: number;
  gzipBytes: number;
  mapBytes: number;
  /** Bytes each package contributes to what a cold start loads, largest first. */
  packages: { name: string; bytes: number }[];
  /**
   * The chunks loaded on first use (an `await import()` in the source), by file name under
   * `chunks/`: their size and their largest packages and modules.
   */
  lazyChunks: { file: string; bytes: number; holds: string[] }[];
  /** Install locations of packages in the bundle that only development needs (should be none). */
  devOnlyPackages: string[];
  /** AWS SDK commands left in the bundle after tree-shaking, by package (`@aws-sdk/client-s3`: `PutObject`, ...). */
  sdkCommands: Record<string, string[]>;
  /** The extractor files beside the bundle, loaded on first use (bytes by package; none for most). */
  extractors: Record<string, number>;
  /** Extractor stubs in a bundle that gets no extractor files (should be none). */
  strandedStubs: string[];
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

/** The output files `file` loads at once (itself and its static imports, transitively). */
function loadedAtOnce(metafile: Metafile, file: string): string[] {
  const seen = new Set<string>();
  const visit = (name: string) => {
    if (seen.has(name)) return;
    seen.add(name);
    for (const imported of metafile.outputs[name]?.imports ?? []) {
      if (imported.kind === 'import-statement' && !imported.external) visit(imported.path);
    }
  };
  visit(file);
  return [...seen];
}

/** Builds one function into `outdir/<name>/` (entry `index.mjs`, chunks) and reports what it holds. */
export async function measureBundle(
  name: FunctionName,
  outdir: string,
  devOnly: Set<string> = devOnlyPackages(),
): Promise<BundleReport> {
  const dir = path.join(outdir, name);
  const metafile = await buildFunction(name, dir);
  const outputs = Object.keys(metafile.outputs).filter((file) => file.endsWith('.mjs'));
  // The function's entry (a chunk of a dynamic import has an entryPoint too: its module).
  const entryFile = outputs.find(
    (file) => path.resolve(PROJECT_ROOT, file) === path.resolve(dir, 'index.mjs'),
  );
  if (!entryFile) throw new Error(`${name}: esbuild wrote no entry file`);
  const atStart = new Set(loadedAtOnce(metafile, entryFile));
  const byPackage = new Map<string, number>();
  const sdkCommands: Record<string, string[]> = {};
  const devOnlyInBundle = new Set<string>();
  const lazyChunks: BundleReport['lazyChunks'] = [];
  const stubs = new Set<string>();
  for (const file of outputs) {
    const output = metafile.outputs[file];
    if (!output) continue;
    const inChunk = new Map<string, number>();
    for (const [input, { bytesInOutput }] of Object.entries(output.inputs)) {
      const pkg = packageOf(input);
      if (atStart.has(file)) byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + bytesInOutput);
      const holder = pkg === '(project)' ? input : pkg;
      inChunk.set(holder, (inChunk.get(holder) ?? 0) + bytesInOutput);
      const location = locationOf(input);
      if (location && devOnly.has(location) && bytesInOutput > 0) devOnlyInBundle.add(location);
      // esbuild lists every file it read; a command tree-shaken away contributes no bytes.
      const command = sdkCommandOf(input);
      if (command && bytesInOutput > 0 && !sdkCommands[command[0]]?.includes(command[1]))
        sdkCommands[command[0]] = [...(sdkCommands[command[0]] ?? []), command[1]];
      if (input.includes('infra/lambda/extractor-stubs/')) stubs.add(path.basename(input, '.mjs'));
    }
    if (!atStart.has(file)) {
      const holds = [...inChunk.entries()]
        .sort((a, b) => b[1] - a[1])
        .slice(0, 4)
        .map(([holder]) => holder);
      lazyChunks.push({ file: path.basename(file), bytes: output.bytes, holds });
    }
  }
  for (const commands of Object.values(sdkCommands)) commands.sort();
  lazyChunks.sort((a, b) => b.bytes - a.bytes);
  const withExtractors = FUNCTIONS_WITH_EXTRACTORS.includes(name);
  const extractors: Record<string, number> = {};
  if (withExtractors) {
    for (const pkg of EXTRACTOR_PACKAGES) {
      extractors[pkg] = statSync(path.join(dir, 'extractors', `${pkg}.mjs`)).size;
    }
  }
  const packages = [...byPackage.entries()]
    .map(([pkg, bytes]) => ({ name: pkg, bytes }))
    .sort((a, b) => b.bytes - a.bytes);
  const absolute = (file: string) => path.resolve(PROJECT_ROOT, file);
  const startFiles = [...atStart].map(absolute);
  return {
    name,
    entry: functionEntries()[name] ?? `functions/${name}/handler.ts`,
    bytes: statSync(absolute(entryFile)).size,
    startBytes: startFiles.reduce((sum, file) => sum + statSync(file).size, 0),
    gzipBytes: startFiles.reduce((sum, file) => sum + gzipSync(readFileSync(file)).length, 0),
    mapBytes: startFiles.reduce((sum, file) => sum + statSync(`${file}.map`).size, 0),
    packages,
    lazyChunks,
    devOnlyPackages: [...devOnlyInBundle].sort(),
    sdkCommands,
    extractors,
    strandedStubs: withExtractors ? [] : [...stubs].sort(),
  };
}

const kib = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`;

/**
 * Environment for a cold import: what the stack sets, pointing at addresses nothing listens on (a
 * module scope that called AWS at load would fail loudly rather than time the network).
 */
export const COLD_IMPORT_ENV: Record<string, string> = {
  OPFLOW_TABLE_NAME: 'opflow-jobs',
  OPFLOW_QUEUE_URL: 'http://127.0.0.1:9/000000000000/opflow-work',
  OPFLOW_BUCKET_NAME: 'opflow-reports',
  OPFLOW_API_KEY_SECRET_PREFIX: 'opflow/api-key/',
  AWS_REGION: 'us-east-1',
  AWS_ACCESS_KEY_ID: 'test',
  AWS_SECRET_ACCESS_KEY: 'test',
  AWS_ENDPOINT_URL: 'http://127.0.0.1:9',
  POWERTOOLS_SERVICE_NAME: 'opflow',
  AWS_LAMBDA_FUNCTION_NAME: 'opflow-bundle-sizes',
  OPFLOW_CALLBACK_SECRET_PREFIX: 'opflow/callback/',
};

/**
 * The baselines of a cold import, built as the functions are (scripts/lambda/baselines/): an empty
 * handler; Node's own modules that the SDK's HTTPS handler loads (http, https, crypto, zlib,
 * stream), which no bundling can cut; and the AWS SDK floor (the DynamoDB document client and the
 * SQS client alone).
 */
export const BASELINES = {
  '(empty handler)': 'scripts/lambda/baselines/empty-handler.ts',
  '(Node built-ins: http, https, crypto, zlib, stream)': 'scripts/lambda/baselines/node-builtins.ts',
  '(SDK floor: DynamoDB + SQS)': 'scripts/lambda/baselines/sdk-floor.ts',
} as const;

/** What each baseline beside the empty handler says, in the table's last column. */
const BASELINE_NOTES: Record<string, string> = {
  '(Node built-ins: http, https, crypto, zlib, stream)': "Node's own share of any function that calls AWS",
  '(SDK floor: DynamoDB + SQS)': "the SDK's share of any function below but callbacks",
};

/** Builds a baseline into `outdir/<file's name>/index.mjs`; the path of that file and its size. */
export async function buildBaseline(
  entry: (typeof BASELINES)[keyof typeof BASELINES],
  outdir: string,
): Promise<{ file: string; bytes: number }> {
  const dir = path.join(outdir, path.basename(entry, '.ts'));
  await build(functionBuildOptions('baseline', dir, { entry: path.join(PROJECT_ROOT, entry) }));
  const file = path.join(dir, 'index.mjs');
  return { file, bytes: statSync(file).size };
}

/**
 * One new Node process that imports `file` and exits: its wall time, and the CPU time (user and
 * system, all its threads) it had used once the import was done, in milliseconds. The CPU time is
 * what this machine's load disturbs least: a loaded machine stretches the wall time of every run
 * unevenly (an empty handler's from 50 to 300 ms), compressing and scrambling the wall ratios.
 */
function coldImport(file: string): { wallMs: number; cpuMs: number } {
  const started = performance.now();
  const result = spawnSync(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `await import(${JSON.stringify(pathToFileURL(file).href)}); ` +
        'const used = process.cpuUsage(); process.stdout.write("cpu " + (used.user + used.system) / 1000 + "\\n");',
    ],
    { env: { PATH: process.env.PATH ?? '', ...COLD_IMPORT_ENV }, encoding: 'utf8' },
  );
  const elapsed = performance.now() - started;
  if (result.status !== 0) {
    // The error, not the minified line it points at (a function whose module scope needs a variable
    // COLD_IMPORT_ENV lacks says which).
    const message = result.stderr.split('\n').find((line) => /^\w*Error\b/.test(line)) ?? 'it exited';
    throw new ColdImportError(message.slice(0, 300));
  }
  const cpu = /^cpu (\d+(?:\.\d+)?)$/m.exec(result.stdout)?.[1];
  if (cpu === undefined) throw new ColdImportError('it printed no CPU time');
  return { wallMs: elapsed, cpuMs: Number(cpu) };
}

class ColdImportError extends Error {}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};

/** What {@link measureColdImports} measured: medians of wall and CPU milliseconds, by name. */
export interface ColdImports {
  emptyMs: number;
  medians: Record<string, number>;
  emptyCpuMs: number;
  cpuMedians: Record<string, number>;
  /** The loads average over one minute, at the start of each round. */
  loads: number[];
  failed: Record<string, string>;
}

/**
 * Median cold-import time (wall and CPU) of each file and of the empty handler, measured in rounds
 * (every file once per round, in turn, so the machine's noise falls on all alike), after one
 * untimed round.
 */
export function measureColdImports(
  files: Record<string, string>,
  emptyHandler: string,
  rounds: number,
): ColdImports {
  const all: Record<string, string> = { '(empty handler)': emptyHandler };
  const failed: Record<string, string> = {};
  // One untimed round, which also finds the bundles that do not import here.
  for (const [name, file] of Object.entries({ ...all, ...files })) {
    try {
      coldImport(file);
      all[name] = file;
    } catch (error) {
      if (!(error instanceof ColdImportError)) throw error;
      failed[name] = error.message;
    }
  }
  const times = new Map<string, number[]>(Object.keys(all).map((name) => [name, []]));
  const cpuTimes = new Map<string, number[]>(Object.keys(all).map((name) => [name, []]));
  const loads: number[] = [];
  for (let round = 0; round < rounds; round++) {
    loads.push(loadavg()[0] ?? 0);
    for (const [name, file] of Object.entries(all)) {
      const { wallMs, cpuMs } = coldImport(file);
      times.get(name)!.push(wallMs);
      cpuTimes.get(name)!.push(cpuMs);
    }
  }
  const medians: Record<string, number> = {};
  const cpuMedians: Record<string, number> = {};
  for (const name of Object.keys(files)) {
    if (!times.has(name)) continue;
    medians[name] = median(times.get(name)!);
    cpuMedians[name] = median(cpuTimes.get(name)!);
  }
  return {
    emptyMs: median(times.get('(empty handler)')!),
    medians,
    emptyCpuMs: median(cpuTimes.get('(empty handler)')!),
    cpuMedians,
    loads,
    failed,
  };
}

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  const maxKbArg = args.find((a) => a.startsWith('--max-kb='));
  const maxKb = maxKbArg ? Number(maxKbArg.slice('--max-kb='.length)) : DEFAULT_MAX_KB;
  if (!Number.isFinite(maxKb) || maxKb <= 0)
    throw new Error(`--max-kb must be a positive number, got ${maxKbArg}`);
  const roundsArg = args.find((a) => a.startsWith('--rounds='));
  const rounds = roundsArg ? Number(roundsArg.slice('--rounds='.length)) : 9;
  if (!Number.isInteger(rounds) || rounds < 1 || rounds > 1_000)
    throw new Error(`--rounds must be a whole number from 1 to 1000, got ${roundsArg}`);
  const devOnly = devOnlyPackages();

  const outdir = mkdtempSync(path.join(tmpdir(), 'opflow-bundles-'));
  try {
    const reports: BundleReport[] = [];
    for (const name of Object.keys(functionEntries())) {
      reports.push(await measureBundle(name, outdir, devOnly));
    }
    const baselines: Record<string, { file: string; bytes: number }> = {};
    for (const [label, entry] of Object.entries(BASELINES))
      baselines[label] = await buildBaseline(entry, outdir);
    const floorLabel = '(SDK floor: DynamoDB + SQS)';
    const measuredBaselines = Object.keys(BASELINE_NOTES);
    const cold = args.includes('--no-cold')
      ? undefined
      : measureColdImports(
          {
            ...Object.fromEntries(measuredBaselines.map((label) => [label, baselines[label]!.file])),
            ...Object.fromEntries(reports.map((r) => [r.name, path.join(outdir, r.name, 'index.mjs')])),
          },
          baselines['(empty handler)']!.file,
          rounds,
        );
    if (args.includes('--page')) {
      const { writeFiguresPage } = await import('./bundle-sizes-page');
      writeFiguresPage(PROJECT_ROOT, {
        reports,
        baselines: Object.fromEntries(measuredBaselines.map((label) => [label, baselines[label]!.bytes])),
        budgets: MAX_KB_BY_FUNCTION,
        cold,
        rounds,
      });
    }
    if (args.includes('--json')) {
      process.stdout.write(`${JSON.stringify({ reports, baselines, cold }, null, 2)}\n`);
    } else {
      for (const r of reports) {
        const top = r.packages
          .slice(0, 6)
          .map((p) => `${p.name} ${kib(p.bytes)}`)
          .join(', ');
        const sdk = Object.entries(r.sdkCommands)
          .map(([pkg, commands]) => `${pkg.replace('@aws-sdk/', '')} ${commands.join(' ')}`)
          .join('; ');
        const extractors = Object.entries(r.extractors)
          .map(([pkg, bytes]) => `${pkg} ${kib(bytes)}`)
          .join(', ');
        const lazy = r.lazyChunks
          .map((chunk) => `${kib(chunk.bytes)} (${chunk.holds.join(', ')})`)
          .join('; ');
        process.stdout.write(
          `${r.name.padEnd(8)} ${kib(r.startBytes).padStart(11)} at start (entry ${kib(r.bytes)})  ` +
            `gzip ${kib(r.gzipBytes).padStart(10)}  map ${kib(r.mapBytes).padStart(10)}  ${r.entry}\n` +
            `         largest at start: ${top}\n` +
            (lazy ? `         chunks loaded on first use: ${lazy}\n` : '') +
            `         SDK commands: ${sdk}\n` +
            (extractors ? `         beside it, imported on first use: ${extractors}\n` : ''),
        );
      }
      if (cold) {
        const floorMs = cold.medians[floorLabel];
        const floor = baselines[floorLabel]!;
        process.stdout.write(
          `\nCold import (new Node ${process.version} process importing the entry, and the chunks it imports at once; median of ${rounds} rounds; ` +
            `load average ${Math.min(...cold.loads).toFixed(1)} to ${Math.max(...cold.loads).toFixed(1)}; CPU: user + system time of the process once imported)\n` +
            `| function | loaded at start | cold import ms | × empty handler | CPU ms | × empty handler | goal (400 KB, 2×) |\n|---|---:|---:|---:|---:|---:|---|\n` +
            `| (empty handler) | | ${cold.emptyMs.toFixed(0)} | 1.0 | ${cold.emptyCpuMs.toFixed(0)} | 1.0 | |\n` +
            measuredBaselines
              .map((label) => {
                const ms = cold.medians[label];
                const cpu = cold.cpuMedians[label] ?? 0;
                const bytes = kib(baselines[label]!.bytes);
                return ms === undefined
                  ? `| ${label} | ${bytes} | did not import: ${cold.failed[label]} | | | | |\n`
                  : `| ${label} | ${bytes} | ${ms.toFixed(0)} | ${(ms / cold.emptyMs).toFixed(1)} | ${cpu.toFixed(0)} | ${(cpu / cold.emptyCpuMs).toFixed(1)} | ${BASELINE_NOTES[label]} |\n`;
              })
              .join(''),
        );
        for (const r of reports) {
          const ms = cold.medians[r.name];
          if (ms === undefined) {
            process.stdout.write(
              `| ${r.name} | ${kib(r.startBytes)} | did not import: ${cold.failed[r.name]} | | | | |\n`,
            );
            continue;
          }
          const ratio = ms / cold.emptyMs;
          const cpu = cold.cpuMedians[r.name] ?? 0;
          const met = [
            r.startBytes <= GOAL_BYTES ? 'size met' : 'size over',
            ratio <= GOAL_COLD_RATIO ? 'time met' : 'time over',
          ];
          process.stdout.write(
            `| ${r.name} | ${kib(r.startBytes)} | ${ms.toFixed(0)} | ${ratio.toFixed(1)} | ${cpu.toFixed(0)} | ${(cpu / cold.emptyCpuMs).toFixed(1)} | ${met.join(', ')} |\n`,
          );
        }
        if (floorMs !== undefined) {
          process.stdout.write(
            `\nThe SDK floor alone (the DynamoDB document client and the SQS client, ${kib(floor.bytes)}) takes ` +
              `${(floorMs / cold.emptyMs).toFixed(1)}× an empty handler's cold import: a function that reads ` +
              `jobs from DynamoDB starts at that ratio before its own code.\n`,
          );
        }
      }
    }
    let failed = false;
    for (const r of reports) {
      if (r.strandedStubs.length > 0) {
        process.stderr.write(
          `${r.name}: bundle imports ${r.strandedStubs.join(', ')} (of ${EXTRACTOR_PACKAGES.join(', ')}) but gets no extractor files: add it to FUNCTIONS_WITH_EXTRACTORS\n`,
        );
        failed = true;
      }
      if (r.devOnlyPackages.length > 0) {
        process.stderr.write(
          `${r.name}: bundle contains development-only packages: ${r.devOnlyPackages.join(', ')}\n`,
        );
        failed = true;
      }
      const budget = maxKbArg ? maxKb : (MAX_KB_BY_FUNCTION[r.name] ?? maxKb);
      if (r.startBytes > budget * 1024) {
        process.stderr.write(
          `${r.name}: ${kib(r.startBytes)} loaded at start is over the ${budget} KiB budget\n`,
        );
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
      process.stderr.write(`${errorMessage(error)}\n`);
      process.exit(1);
    },
  );
}
