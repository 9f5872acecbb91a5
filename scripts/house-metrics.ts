/**
 * How easy the repository is to carry on, measured: the longest functions per folder of shared/,
 * the files that name each workflow outside its own folder and the registry, the size of every hand-written document,
 * the casts the CLI uses to reach a backend's adapters, and references to work-log numbers.
 *
 *   npx tsx scripts/house-metrics.ts [--top N] [--json]
 *
 * It reads the files git tracks and prints; it changes nothing. Run it before and after a change
 * that moves code, and compare.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import ts from 'typescript';
import * as z from 'zod';
import { errorMessage } from '../shared/errors/error-message';
import { workflowNames } from '../shared/workflows/index';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

const optionsSchema = z.strictObject({
  top: z.coerce.number().int().min(1).max(100).default(5),
  json: z.boolean().default(false),
});

export interface FunctionLength {
  file: string;
  name: string;
  line: number;
  lines: number;
}

/** Every named function, method and function-valued variable of one TypeScript source, with its length in lines. */
export function functionLengths(file: string, source: string): FunctionLength[] {
  const sourceFile = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true);
  const found: FunctionLength[] = [];
  const lineOf = (position: number) => sourceFile.getLineAndCharacterOfPosition(position).line + 1;
  const record = (name: string, node: ts.Node) => {
    const line = lineOf(node.getStart(sourceFile));
    found.push({ file, name, line, lines: lineOf(node.getEnd()) - line + 1 });
  };
  const visit = (node: ts.Node) => {
    if ((ts.isFunctionDeclaration(node) || ts.isMethodDeclaration(node)) && node.body && node.name) {
      record(node.name.getText(sourceFile), node);
    } else if (
      ts.isVariableDeclaration(node) &&
      node.initializer &&
      (ts.isArrowFunction(node.initializer) || ts.isFunctionExpression(node.initializer))
    ) {
      record(node.name.getText(sourceFile), node.initializer);
    }
    ts.forEachChild(node, visit);
  };
  visit(sourceFile);
  return found;
}

const tracked = (...patterns: string[]) =>
  execFileSync('git', ['ls-files', '--', ...patterns], { cwd: root, encoding: 'utf8' })
    .split('\n')
    .filter((file) => file !== '');

const read = (file: string) => readFileSync(resolve(root, file), 'utf8');

/** shared/engine/runner.ts -> shared/engine; shared/runtime/lambda/api.ts -> shared/runtime/lambda. */
const folderOf = (file: string) => dirname(file);

function longestFunctions(top: number): Record<string, FunctionLength[]> {
  const byFolder: Record<string, FunctionLength[]> = {};
  for (const file of tracked('shared/*.ts', 'functions/*.ts', 'infra/*.ts')) {
    if (file.endsWith('.d.ts')) continue;
    for (const length of functionLengths(file, read(file))) {
      const folder = folderOf(file);
      byFolder[folder] ??= [];
      byFolder[folder].push(length);
    }
  }
  for (const folder of Object.keys(byFolder)) {
    byFolder[folder] = byFolder[folder]!.sort((a, b) => b.lines - a.lines).slice(0, top);
  }
  return byFolder;
}

export interface NameLiteral {
  file: string;
  line: number;
  name: string;
}

/**
 * The string literals of one TypeScript source that are exactly one of `names` (found with the
 * compiler's parser, so comments and longer strings never count).
 */
export function nameLiterals(file: string, source: string, names: ReadonlySet<string>): NameLiteral[] {
  const quoted = (name: string) =>
    ["'", '"', '`'].some((quote) => source.includes(`${quote}${name}${quote}`));
  if (![...names].some(quoted)) return [];
  const sourceFile = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true);
  const found: NameLiteral[] = [];
  const visit = (node: ts.Node) => {
    if ((ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) && names.has(node.text)) {
      const line = sourceFile.getLineAndCharacterOfPosition(node.getStart(sourceFile)).line + 1;
      found.push({ file, line, name: node.text });
    }
    ts.forEachChild(node, visit);
  };
  visit(sourceFile);
  return found;
}

/** The code the workflow-name rule covers: everything that ships, tests and benches aside. */
export const codeFiles = () =>
  tracked(
    'shared/*.ts',
    'functions/*.ts',
    'infra/*.ts',
    'dashboard/*.ts',
    'dashboard/*.tsx',
    'scripts/*.ts',
  ).filter((file) => !file.endsWith('.d.ts'));

/** A workflow's own files: its folder (`shared/workflows/<name>/`) and the registry. */
export const ownsName = (file: string, name: string) =>
  file.startsWith(`shared/workflows/${name}/`) || file === 'shared/workflows/index.ts';

/**
 * For each workflow of the registry, the code files other than its own folder and the registry
 * that hold its name as a string: central tables a new workflow would have to edit.
 */
function workflowSpread(): Record<string, string[]> {
  const names = new Set(workflowNames);
  const spread: Record<string, string[]> = Object.fromEntries(workflowNames.map((name) => [name, []]));
  for (const file of codeFiles()) {
    for (const { name } of nameLiterals(file, read(file), names)) {
      if (!ownsName(file, name) && !spread[name]!.includes(file)) spread[name]!.push(file);
    }
  }
  return spread;
}

function documentSizes(): { file: string; bytes: number }[] {
  return tracked('*.md')
    .filter((file) => !file.startsWith('node_modules/'))
    .map((file) => ({ file, bytes: statSync(resolve(root, file)).size }))
    .sort((a, b) => b.bytes - a.bytes);
}

function cliCasts(): { asLocal: number; asNever: number } {
  let asLocal = 0;
  let asNever = 0;
  for (const file of tracked('shared/cli/*.ts')) {
    const source = read(file);
    asLocal += source.match(/\basLocal\(/g)?.length ?? 0;
    asNever += source.match(/\bas never\b/g)?.length ?? 0;
  }
  return { asLocal, asNever };
}

/** Lines of docs and code that point at "session N" or "issue N", which nothing in the repository resolves. */
function workLogReferences(): number {
  let count = 0;
  for (const file of tracked('shared/*.ts', 'docs/*.md', 'README.md', 'bench/README.md')) {
    if (file.includes('/journal/')) continue;
    count += read(file).match(/\b(session|issue) #?[0-9]+/gi)?.length ?? 0;
  }
  return count;
}

function main(argv: string[]): void {
  let values: { top?: string; json?: boolean; help?: boolean };
  try {
    ({ values } = parseArgs({
      args: argv,
      options: { top: { type: 'string' }, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
    }));
  } catch (error) {
    process.stderr.write(`house-metrics: ${errorMessage(error)} (see --help)\n`);
    process.exitCode = 2;
    return;
  }
  if (values.help) {
    process.stdout.write(
      'usage: npx tsx scripts/house-metrics.ts [--top N] [--json]\n' +
        '  --top N   functions listed per folder (1 to 100, default 5)\n' +
        '  --json    print one JSON object instead of text\n',
    );
    return;
  }
  const parsed = optionsSchema.safeParse({ top: values.top, json: values.json });
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    process.stderr.write(`house-metrics: --${issue.path.join('.')}: ${issue.message}\n`);
    process.exitCode = 2;
    return;
  }
  const report = {
    longestFunctions: longestFunctions(parsed.data.top),
    workflowSpread: workflowSpread(),
    documents: documentSizes(),
    cliCasts: cliCasts(),
    workLogReferences: workLogReferences(),
  };
  if (parsed.data.json) {
    process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    return;
  }
  const out: string[] = ['# Longest functions per folder (lines)'];
  for (const [folder, lengths] of Object.entries(report.longestFunctions).sort()) {
    const over = lengths.filter((length) => length.lines > 100).length;
    out.push(`${folder}${over > 0 ? `  (${over} over 100)` : ''}`);
    for (const length of lengths)
      out.push(`  ${String(length.lines).padStart(4)}  ${length.name}  ${length.file}:${length.line}`);
  }
  out.push('', '# Code files other than its own naming each workflow');
  for (const [name, files] of Object.entries(report.workflowSpread)) {
    out.push(`${name}: ${files.length}${files.length > 0 ? `  (${files.join(', ')})` : ''}`);
  }
  out.push('', '# Documents (bytes)');
  for (const { file, bytes } of report.documents) out.push(`  ${String(bytes).padStart(7)}  ${file}`);
  out.push(
    '',
    `# Casts in shared/cli: asLocal( ${report.cliCasts.asLocal}, as never ${report.cliCasts.asNever}`,
    `# Work-log references ("session N", "issue N") in shared/, docs and READMEs: ${report.workLogReferences}`,
  );
  process.stdout.write(`${out.join('\n')}\n`);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url))
  main(process.argv.slice(2));
