/**
 * No function in shared/engine, shared/runtime, shared/mcp, shared/cli or shared/http is longer
 * than 100 lines, measured with the TypeScript compiler's own parser: from a function's first line to its last, nested functions
 * included (a function declaration, a method, an arrow function or a function expression).
 * A long function hides its stages; split it where it reads as steps.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const root = resolve(__dirname, '../..');
const folders = ['shared/engine', 'shared/runtime', 'shared/mcp', 'shared/cli', 'shared/http'];
const maxLines = 100;

/**
 * Functions still over the limit (`file:name`), with their length when this list was written. Each
 * waits for a change of its own: remove it from here when it is split. A new function over the
 * limit fails the test, and so does a listed one that no longer is (so the list stays true).
 */
const stillLong = new Set<string>([]);

function typeScriptFiles(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) return typeScriptFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

/** The name a function is known by: its own, its variable's or property's, or where it starts. */
function nameOf(node: ts.FunctionLikeDeclaration, source: ts.SourceFile, line: number): string {
  if (node.name) return node.name.getText(source);
  const parent = node.parent;
  if ((ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent)) && parent.name)
    return parent.name.getText(source);
  return `(anonymous, line ${line})`;
}

/** Every function of a file with its length in lines. */
function functionLengths(file: string): { name: string; lines: number }[] {
  const text = readFileSync(file, 'utf8');
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: { name: string; lines: number }[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body !== undefined) {
      const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
      const last = source.getLineAndCharacterOfPosition(node.getEnd()).line + 1;
      found.push({ name: nameOf(node, source, first), lines: last - first + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

const measured = folders
  .flatMap((folder) => typeScriptFiles(join(root, folder)))
  .flatMap((file) =>
    functionLengths(file).map(({ name, lines }) => ({ id: `${relative(root, file)}:${name}`, lines })),
  );

describe('function length in shared/engine, shared/runtime, shared/mcp, shared/cli and shared/http', () => {
  it('measures the functions it is about (the parser finds them)', () => {
    const runStep = measured.find(({ id }) => id === 'shared/engine/runner.ts:runStep');
    expect(runStep?.lines).toBeGreaterThan(5);
    expect(measured.length).toBeGreaterThan(200);
  });

  it(`has no function over ${maxLines} lines but the listed ones`, () => {
    const tooLong = measured
      .filter(({ id, lines }) => lines > maxLines && !stillLong.has(id))
      .map(({ id, lines }) => `${id} (${lines} lines)`);
    expect(tooLong).toEqual([]);
  });

  it('lists only functions that are still over the limit', () => {
    const over = new Set(measured.filter(({ lines }) => lines > maxLines).map(({ id }) => id));
    expect([...stillLong].filter((id) => !over.has(id))).toEqual([]);
  });
});
