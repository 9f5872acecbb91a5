/**
 * The slowest test files of the last vitest run, from the JSON results vitest.config.ts has it
 * write (test-artifacts/vitest-results.json, git-ignored): each suite's files and summed seconds
 * with its share and slowest file, then the slowest files. Figures from a run, never written into a
 * page to go stale (docs/guides/testing.md).
 *
 *   npm run test:slowest [-- --top=15] [--file=test-artifacts/vitest-results.json]
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import * as z from 'zod';

export const RESULTS_FILE = 'test-artifacts/vitest-results.json';

const resultsSchema = z.object({
  startTime: z.number(),
  numTotalTests: z.number().int(),
  numFailedTests: z.number().int(),
  testResults: z.array(
    z.object({
      name: z.string(),
      status: z.string(),
      startTime: z.number(),
      endTime: z.number(),
      assertionResults: z.array(z.unknown()),
    }),
  ),
});
export type VitestResults = z.infer<typeof resultsSchema>;

/** The results in `text`; throws naming `file` and the first field that is not as vitest writes it. */
export function parseResults(text: string, file: string): VitestResults {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new Error(`${file}: not JSON (${(error as Error).message})`);
  }
  const parsed = resultsSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new Error(
      `${file}: ${issue.path.join('.') || '(top)'}: ${issue.message}: not vitest's JSON results`,
    );
  }
  return parsed.data;
}

/** The suite of a test file: `test/<suite>` or, under e2e, integration and infra, one level more. */
export function suiteOf(file: string): string {
  const parts = file.split('/');
  const deep = ['e2e', 'integration', 'infra'].includes(parts[1] ?? '') && parts.length > 3;
  return parts.slice(0, deep ? 3 : 2).join('/');
}

const seconds = (ms: number) =>
  ms < 10_000 ? (ms / 1000).toFixed(1) : Math.round(ms / 1000).toLocaleString('en');

/** The report: the run, the suites by summed time and the `top` slowest files. */
export function slowestReport(results: VitestResults, root: string, top: number): string {
  const files = results.testResults
    .map((r) => ({
      file: path.relative(root, r.name),
      ms: Math.max(0, r.endTime - r.startTime),
      tests: r.assertionResults.length,
      status: r.status,
    }))
    .sort((a, b) => b.ms - a.ms);
  const summed = files.reduce((sum, f) => sum + f.ms, 0);
  const end = Math.max(results.startTime, ...results.testResults.map((r) => r.endTime));
  const suites = new Map<string, { files: number; ms: number; slowest: (typeof files)[number] }>();
  for (const f of files) {
    const suite = suites.get(suiteOf(f.file));
    if (suite) {
      suite.files += 1;
      suite.ms += f.ms;
    } else suites.set(suiteOf(f.file), { files: 1, ms: f.ms, slowest: f });
  }
  const share = (ms: number) => `${summed ? Math.round((100 * ms) / summed) : 0}%`;
  return [
    `Run of ${new Date(results.startTime).toISOString().replace(/\.\d+Z$/, 'Z')}: ${files.length} files, ` +
      `${results.numTotalTests} tests (${results.numFailedTests} failed), ${seconds(end - results.startTime)} s ` +
      `from start to the last file's end, ${seconds(summed)} s summed over files.`,
    '',
    '| suite | files | seconds | share | slowest file |',
    '|---|---:|---:|---:|---|',
    ...[...suites]
      .sort((a, b) => b[1].ms - a[1].ms)
      .map(
        ([name, s]) =>
          `| \`${name}\` | ${s.files} | ${seconds(s.ms)} | ${share(s.ms)} | \`${s.slowest.file.slice(name.length + 1)}\` ${seconds(s.slowest.ms)} s |`,
      ),
    '',
    `The ${Math.min(top, files.length)} slowest files:`,
    '',
    '| file | seconds | tests | |',
    '|---|---:|---:|---|',
    ...files
      .slice(0, top)
      .map(
        (f) => `| \`${f.file}\` | ${seconds(f.ms)} | ${f.tests} | ${f.status === 'passed' ? '' : f.status} |`,
      ),
  ].join('\n');
}

function main(): void {
  const args = process.argv.slice(2);
  const topArg = args.find((a) => a.startsWith('--top='));
  const top = topArg ? Number(topArg.slice('--top='.length)) : 15;
  if (!Number.isInteger(top) || top < 1)
    throw new Error(`--top must be a whole number above 0, got ${topArg}`);
  const file = args.find((a) => a.startsWith('--file='))?.slice('--file='.length) ?? RESULTS_FILE;
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    throw new Error(
      `${file}: not found: run the tests first (npx vitest run [paths]; vitest.config.ts writes it)`,
    );
  }
  process.stdout.write(`${slowestReport(parseResults(text, file), process.cwd(), top)}\n`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  try {
    main();
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n`);
    process.exit(1);
  }
}
