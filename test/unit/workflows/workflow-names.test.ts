/**
 * A workflow lives in its folder: no code outside `shared/workflows/<name>/` and the registry
 * (`shared/workflows/index.ts`) holds a workflow's name as a string. What the rest of opflow needs
 * of a workflow (its example, common names, schedule digest, batch findings) is a hook of its
 * definition, read through the registry; a table keyed by workflow names elsewhere is what this
 * test stops. Names are found with the TypeScript parser (string literals exactly equal to a
 * name), in everything that ships: shared/, functions/, infra/, dashboard/ and scripts/.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { codeFiles, type NameLiteral, nameLiterals, ownsName } from '../../../scripts/house-metrics';
import { workflowNames, workflows } from '../../../shared/workflows';

const root = resolve(__dirname, '../../..');

/**
 * Names held elsewhere on purpose, by file and name, with why. A new one fails the test, and so
 * does a listed one that is gone (so the list stays true).
 */
const exceptions: { file: string; name: string; why: string }[] = [
  {
    file: 'shared/sandbox/operations/find-solution.ts',
    name: 'find-solution',
    why: "the sandbox's record registry of ai33 tasks, persisted in its state file under this name (the platform's product, not opflow's workflow)",
  },
  {
    file: 'shared/sandbox/operations/fto.ts',
    name: 'fto',
    why: "the sandbox's record registry of ai66 tasks, persisted in its state file under this name (the platform's product, not opflow's workflow)",
  },
  ...['novelty-check', 'patent-count', 'find-solution', 'llm-chat'].map((name) => ({
    file: 'scripts/screenshots.ts',
    name,
    why: "the docs' screenshots show jobs of these workflows: the script starts them as a user would (input, not engine behaviour)",
  })),
];

/**
 * The workflow `call` shares its name with the word: the step kind (`kind: 'call'`, a `CallStep`),
 * the `opflow call` command, and "1 call" in counts (`plural`, `countOf`). Those uses are told apart by where the string
 * stands; any other `'call'` counts as the workflow's name.
 */
function isTheWordCall(file: string, line: number): boolean {
  const source = readFileSync(resolve(root, file), 'utf8');
  const sourceFile = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true);
  let word = false;
  const visit = (node: ts.Node) => {
    if (
      ts.isStringLiteral(node) &&
      node.text === 'call' &&
      sourceFile.getLineAndCharacterOfPosition(node.getStart(sourceFile)).line + 1 === line
    ) {
      const parent = node.parent;
      const stepKind =
        ts.isLiteralTypeNode(parent) ||
        (ts.isPropertyAssignment(parent) && parent.name.getText(sourceFile) === 'kind') ||
        (ts.isBinaryExpression(parent) &&
          [parent.left, parent.right].some((side) => side.getText(sourceFile).endsWith('.kind')));
      // `program.command('call')`, or `name: 'call'` of an entry of the CLI's command table.
      const command =
        (ts.isCallExpression(parent) && parent.expression.getText(sourceFile).endsWith('.command')) ||
        (ts.isPropertyAssignment(parent) &&
          parent.name.getText(sourceFile) === 'name' &&
          ts.isObjectLiteralExpression(parent.parent) &&
          ts.isCallExpression(parent.parent.parent) &&
          parent.parent.parent.expression.getText(sourceFile) === 'defineCommand');
      const counted =
        (ts.isCallExpression(parent) && /\b(plural|countOf)$/.test(parent.expression.getText(sourceFile))) ||
        (ts.isConditionalExpression(parent) &&
          [parent.whenTrue, parent.whenFalse].some((branch) => branch.getText(sourceFile) === "'calls'"));
      if (stepKind || command || counted) word = true;
    }
    ts.forEachChild(node, visit);
  };
  visit(sourceFile);
  return word;
}

let found: NameLiteral[] | undefined;
function strayNames(): NameLiteral[] {
  const names = new Set(workflowNames);
  found ??= codeFiles()
    .flatMap((file) => nameLiterals(file, readFileSync(resolve(root, file), 'utf8'), names))
    .filter((found) => !ownsName(found.file, found.name))
    .filter((found) => !(found.name === 'call' && isTheWordCall(found.file, found.line)));
  return found;
}

describe('workflow names', () => {
  it('are held only by their own folder and the registry', () => {
    const excepted = (found: NameLiteral) =>
      exceptions.some((exception) => exception.file === found.file && exception.name === found.name);
    const stray = strayNames()
      .filter((found) => !excepted(found))
      .map((found) => `${found.file}:${found.line} '${found.name}'`);
    expect(
      stray,
      'use a hook of the workflow definition (shared/engine/workflow.ts) instead of its name; see docs/guides/adding-a-workflow.md',
    ).toEqual([]);
  });

  it('have no stale exception', () => {
    const found = strayNames();
    for (const exception of exceptions) {
      expect(
        found.some((item) => item.file === exception.file && item.name === exception.name),
        `${exception.file} no longer holds '${exception.name}': remove the exception`,
      ).toBe(true);
    }
  });

  it('each name a folder of its own, registered once', () => {
    expect(new Set(workflowNames).size).toBe(workflowNames.length);
    for (const name of workflowNames) {
      expect(
        codeFiles().some((file) => file === `shared/workflows/${name}/workflow.ts`),
        name,
      ).toBe(true);
      expect(workflows.get(name)?.name).toBe(name);
    }
  });

  it('finds a name as a string, not in a comment or a longer string', () => {
    const found = nameLiterals(
      'shared/ingest/example.ts',
      "// 'novelty-check' in a comment\nconst a = 'novelty-check';\nconst b = 'a novelty-check';\nconst c = `llm-chat`;",
      new Set(['novelty-check', 'llm-chat']),
    );
    expect(found).toEqual([
      { file: 'shared/ingest/example.ts', line: 2, name: 'novelty-check' },
      { file: 'shared/ingest/example.ts', line: 4, name: 'llm-chat' },
    ]);
  });
});
