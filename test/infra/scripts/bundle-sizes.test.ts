/**
 * The Lambda bundles as scripts/bundle-sizes.ts builds them (with the stack's own esbuild settings):
 * no package that only development needs, the AWS SDK tree-shaken down to the commands the code
 * sends, minified, and within the size budget.
 */
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  FUNCTION_ENTRIES,
  FUNCTIONS_WITH_EXTRACTORS,
  type FunctionName,
} from '../../../infra/lib/function-bundling';
import {
  BASELINES,
  type BundleReport,
  buildBaseline,
  DEFAULT_MAX_KB,
  devOnlyPackages,
  MAX_KB_BY_FUNCTION,
  measureBundle,
  measureColdImports,
} from '../../../scripts/bundle-sizes';

/**
 * The SDK commands a bundle may keep, per package: what shared/backends/aws sends, and a few the SDK
 * itself holds on to (named with the reason).
 */
const ALLOWED_SDK_COMMANDS: Record<string, string[]> = {
  '@aws-sdk/client-dynamodb': [
    ...['BatchGetItem', 'DeleteItem', 'GetItem', 'PutItem', 'Query', 'TransactWriteItems'],
    'DescribeEndpoints', // the client's endpoint discovery
    'Scan', // kept by the SDK's paginator modules; opflow never scans
    // the events function's change log (dynamodb-change-log.ts); the api, which reads that log
    // in the same module, keeps it too
    'BatchWriteItem',
    // the callback outbox's due marks (dynamodb-callback-outbox.ts: the sweeper's pass sets them,
    // the sender's claim reads them); every function that holds the outbox module keeps it
    'UpdateItem',
  ],
  '@aws-sdk/lib-dynamodb': [
    'BatchGet',
    'BatchWrite',
    'Delete',
    'Get',
    'Put',
    'Query',
    'TransactWrite',
    'Scan',
    'Update', // the callback outbox's due marks, as UpdateItem above
  ],
  // The ingest function hands on to itself, and the sweeper wakes it (lambda-invoke.ts: asynchronous invokes).
  '@aws-sdk/client-lambda': ['Invoke'],
  '@aws-sdk/client-s3': [
    ...['GetObject', 'HeadObject', 'ListObjectsV2', 'PutObject'],
    'CreateSession', // the client's S3 Express session handling
    // @aws-sdk/lib-storage's Upload (the report store's streamed writes, putStream)
    ...['AbortMultipartUpload', 'CompleteMultipartUpload', 'CreateMultipartUpload', 'UploadPart'],
    'PutObjectTagging', // kept by Upload, which tags when asked; opflow never does
  ],
  // GetQueueAttributes: the aws Backend's `queue.counts()` (workQueueCounts in
  // shared/backends/aws/stack-checks.ts, imported lazily by shared/runtime/aws/cli-backend.ts) and
  // `opflow doctor`'s stack checks, on a person's machine; no function calls it.
  '@aws-sdk/client-sqs': ['SendMessage', 'SendMessageBatch', 'GetQueueAttributes'],
  '@aws-sdk/client-secrets-manager': ['GetSecretValue'],
  // No @aws-sdk/nested-clients (the STS and SSO calls of the full credential chain): Lambda bundles
  // read credentials from the environment only (infra/lambda/aws-credentials.mjs).
};

let outdir: string;
const reports = new Map<FunctionName, BundleReport>();

beforeAll(async () => {
  outdir = mkdtempSync(path.join(tmpdir(), 'opflow-bundle-test-'));
  const devOnly = devOnlyPackages();
  for (const name of Object.keys(FUNCTION_ENTRIES) as FunctionName[]) {
    reports.set(name, await measureBundle(name, outdir, devOnly));
  }
  // Six bundles and the ingest function's extractor files (pdf.js) on a loaded two-core machine.
}, 360_000);

afterAll(() => {
  if (outdir) rmSync(outdir, { recursive: true, force: true });
});

describe('the development-only packages', () => {
  it('are read from package-lock.json, devDependencies and what only they pull in', () => {
    const devOnly = devOnlyPackages();
    expect(devOnly).toContain('node_modules/vitest');
    expect(devOnly).toContain('node_modules/aws-cdk');
    expect(devOnly).toContain('node_modules/typescript');
    // Runtime dependencies are not.
    expect(devOnly).not.toContain('node_modules/zod');
    expect(devOnly).not.toContain('node_modules/@aws-sdk/client-sqs');
  });
});

describe('the cold-import measure', () => {
  it("times each baseline's import in a new process, wall and CPU, beside the empty handler's", async () => {
    const built = Object.fromEntries(
      await Promise.all(
        Object.entries(BASELINES).map(async ([label, entry]) => [
          label,
          (await buildBaseline(entry, outdir)).file,
        ]),
      ),
    ) as Record<keyof typeof BASELINES, string>;
    const { '(empty handler)': empty, ...others } = built;
    const cold = measureColdImports(others, empty, 1);
    expect(cold.failed).toEqual({});
    expect(cold.loads).toHaveLength(1);
    for (const label of Object.keys(others)) {
      expect(cold.medians[label]).toBeGreaterThan(0);
      expect(cold.cpuMedians[label]).toBeGreaterThan(0);
    }
    expect(cold.emptyCpuMs).toBeGreaterThan(0);
  }, 120_000);
});

describe.each(Object.keys(FUNCTION_ENTRIES) as FunctionName[])('the %s bundle', (name) => {
  const report = () => reports.get(name) as BundleReport;

  it('holds no package that only development needs', () => {
    expect(report().devOnlyPackages).toEqual([]);
  });

  it('keeps only the AWS SDK commands the code sends', () => {
    const { sdkCommands } = report();
    expect(Object.keys(sdkCommands)).toContain('@aws-sdk/client-dynamodb');
    for (const [pkg, commands] of Object.entries(sdkCommands)) {
      const allowed = ALLOWED_SDK_COMMANDS[pkg] ?? [];
      expect(
        commands.filter((command) => !allowed.includes(command)),
        `${pkg} commands the code does not send`,
      ).toEqual([]);
    }
    // createJobTable (tests and emulators only) is shaken out with its CreateTable.
    expect(sdkCommands['@aws-sdk/client-dynamodb']).not.toContain('CreateTable');
  });

  it('gets the extractor files only if it reads documents, and holds no stub otherwise', () => {
    const { extractors, strandedStubs } = report();
    expect(strandedStubs).toEqual([]);
    expect(Object.keys(extractors).sort()).toEqual(
      FUNCTIONS_WITH_EXTRACTORS.includes(name) ? ['mammoth', 'unpdf'] : [],
    );
  });

  it('is minified, with a source map, within the size budget (what a cold start loads)', () => {
    const { bytes, startBytes, mapBytes } = report();
    // `bytes` is the entry's (not a chunk's: a dynamic import's chunk has an entry point too).
    expect(bytes).toBe(statSync(path.join(outdir, name, 'index.mjs')).size);
    expect(startBytes).toBeGreaterThanOrEqual(bytes);
    expect(startBytes).toBeLessThanOrEqual((MAX_KB_BY_FUNCTION[name] ?? DEFAULT_MAX_KB) * 1024);
    expect(mapBytes).toBeGreaterThan(0);
    const code = readFileSync(path.join(outdir, name, 'index.mjs'), 'utf8');
    // Minified: lines of hundreds of bytes or more (only template literals keep their line breaks),
    // where readable output averages some 40 bytes a line. (An entry that only loads its chunks,
    // the sweeper's, is a few kilobytes in a few lines.)
    expect(bytes / code.split('\n').length).toBeGreaterThan(400);
  });

  it('loads S3 on first use where few invocations touch an S3 object (api, schedules, webhooks), none at a cold start of the sweeper and events', () => {
    const { packages, lazyChunks } = report();
    const atStart = packages.map((p) => p.name);
    if (name === 'api' || name === 'schedules' || name === 'webhooks') {
      // A report, an offloaded input or a link loads it (s3-report-store-on-first-use.ts).
      expect(atStart).not.toContain('@aws-sdk/client-s3');
      expect(atStart).not.toContain('@aws-sdk/lib-storage');
      expect(lazyChunks.some((chunk) => chunk.holds.includes('@aws-sdk/client-s3'))).toBe(true);
    } else if (name === 'sweeper' || name === 'events') {
      // The sweeper's pass and the change log never touch S3 at a cold start (the sweeper's
      // reviewers' pass, a chunk of its own, reaches the job store's S3 reads through it).
      expect(atStart).not.toContain('@aws-sdk/client-s3');
      if (name === 'events') {
        expect(lazyChunks.some((chunk) => chunk.holds.includes('@aws-sdk/client-s3'))).toBe(false);
      }
    } else {
      // The step worker, ingest and the callback sender read or write S3 in every invocation.
      expect(atStart).toContain('@aws-sdk/client-s3');
    }
  });

  it("loads a finished job's report rendering (marked) on first use, not at a cold start", () => {
    const { packages, lazyChunks } = report();
    expect(packages.map((p) => p.name)).not.toContain('marked');
    // The sweeper, the events function, schedules and webhooks never render a report (a schedule's
    // or a webhook's job is rendered by the worker), and hold no rendering at all. Nor does the api:
    // it serves the reports the worker wrote, and its upload check reads manifests, not documents
    // (a disclosure form's Markdown is what would bring marked).
    if (['sweeper', 'events', 'schedules', 'webhooks', 'api'].includes(name)) {
      expect(lazyChunks.some((chunk) => chunk.holds.includes('marked'))).toBe(false);
      return;
    }
    expect(lazyChunks.some((chunk) => chunk.holds.includes('marked'))).toBe(true);
  });
});
