/**
 * The layering of shared/ (docs/architecture.md): imports point down. Every relative import of every
 * TypeScript file under shared/ (`import`, `import type`, `export ... from`, `import('...')`) is
 * resolved to the folder it lands in and checked against the rules below. The engine sits under the
 * features (workflows, reports, schedules) and the runtimes: it gets what they provide through its
 * ports and hooks (EngineDeps.writeReport writes a finished job's report, schedule changes included).
 *
 * And no cycles: no file of shared/ reaches itself through the imports that load code at run time
 * (`import`, `export ... from`, `import('...')`; `import type` and `import('...').Type` in a type
 * position are erased by the compiler and left out).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = resolve(__dirname, '../..');

/** `shared/engine/report.ts` -> `engine`, `shared/runtime/aws/pipeline.ts` -> `runtime/aws`. */
function areaOf(file: string): string {
  const parts = file.split('/');
  if (parts[0] !== 'shared') return parts[0]!;
  if (parts[1] === 'runtime' && parts.length > 3) return `runtime/${parts[2]}`;
  return parts[1]!;
}

const importPattern =
  /(?:^|[\s;])(?:import|export)\s+(type\s+)?(?:([^'";]*?)\sfrom\s+)?['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)(\.\s*[A-Za-z_$]+)?/g;

interface Import {
  /** The repository path (`shared/...`, without extension) the import points at. */
  target: string;
  /** Erased by the compiler: `import type`, `import { type A, type B }`, `import('...').Type`. */
  typeOnly: boolean;
}

/** A clause whose every named binding is `type X` (and no default or namespace import). */
const allTypes = (clause: string) => {
  const named = /^\{([^}]*)\}$/.exec(clause.trim());
  if (!named) return false;
  const names = named[1]!
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
  return names.length > 0 && names.every((name) => name.startsWith('type '));
};

/** A file's relative imports. */
function importsOf(file: string, source: string): Import[] {
  const found: Import[] = [];
  for (const match of source.matchAll(importPattern)) {
    const [, typeKeyword, clause, staticSpecifier, dynamicSpecifier, member] = match;
    const specifier = staticSpecifier ?? dynamicSpecifier!;
    if (!specifier.startsWith('.')) continue;
    const typeOnly =
      staticSpecifier !== undefined
        ? typeKeyword !== undefined || (clause !== undefined && allTypes(clause))
        : member !== undefined && !/^\.\s*(then|catch|finally)$/.test(member);
    const target = relative(root, resolve(root, dirname(file), specifier)).replace(/\.(js|ts)$/, '');
    found.push({ target, typeOnly });
  }
  return found;
}

/** The repository paths (`shared/...`, without extension) a file's relative imports point at. */
function relativeImports(file: string, source: string): string[] {
  return importsOf(file, source).map(({ target }) => target);
}

interface Rule {
  /** Which files the rule is about. */
  from: (area: string) => boolean;
  /** Whether an import of `target` (a repository path) from such a file is allowed. */
  allows: (target: string, targetArea: string, fromArea: string) => boolean;
  why: string;
}

const features = new Set(['workflows', 'reports', 'schedules']);
const above = new Set(['cli', 'dashboard', 'http', 'mcp', 'ingest', 'backends']);

const rules: Rule[] = [
  {
    from: (area) => area === 'log',
    allows: (_target, to) => to === 'log',
    why: 'shared/log is the bottom: it imports nothing of shared/',
  },
  {
    from: (area) => area === 'errors',
    allows: (_target, to) => to === 'errors',
    why: 'shared/errors (error messages, zod issues) is a leaf every layer may use: it imports nothing of shared/',
  },
  {
    from: (area) => area === 'openplatform',
    allows: (_target, to) => ['openplatform', 'log', 'errors'].includes(to),
    why: 'the Open Platform client imports only shared/log',
  },
  {
    from: (area) => area === 'sandbox',
    allows: (_target, to) => ['sandbox', 'openplatform', 'log', 'errors'].includes(to),
    why: 'the sandbox imports only the Open Platform catalogue and schemas, and shared/log',
  },
  {
    from: (area) => area === 'engine',
    allows: (target, to) =>
      ['engine', 'log', 'errors', 'openplatform'].includes(to) || target === 'shared/callbacks/ssrf-guard',
    why:
      'the engine imports only itself, shared/log, shared/openplatform and the callback URL guard ' +
      '(a leaf): workflows, reports, schedules, backends and runtimes are above it and reach it ' +
      'through its ports and hooks',
  },
  {
    from: (area) => features.has(area),
    allows: (_target, to) => !above.has(to) && !to.startsWith('runtime'),
    why: 'workflows, reports and schedules import no backend, runtime, command, server or ingestion',
  },
  {
    from: (area) => area !== 'cli',
    allows: (_target, to) => to !== 'cli',
    why: 'only the opflow command imports shared/cli',
  },
];

function violations(file: string, source: string): string[] {
  const fromArea = areaOf(file);
  const found: string[] = [];
  for (const target of relativeImports(file, source)) {
    if (!target.startsWith('shared/')) continue;
    const toArea = areaOf(target);
    for (const rule of rules) {
      if (rule.from(fromArea) && !rule.allows(target, toArea, fromArea))
        found.push(`${file} imports ${target}: ${rule.why}`);
    }
  }
  return found;
}

function sharedFiles(dir = join(root, 'shared')): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sharedFiles(path);
    return entry.name.endsWith('.ts') ? [relative(root, path)] : [];
  });
}

/** The file an import lands in: `x.ts`, or `x/index.ts` for a folder; undefined outside the files. */
function fileOf(target: string, files: ReadonlySet<string>): string | undefined {
  return [`${target}.ts`, `${target}/index.ts`].find((candidate) => files.has(candidate));
}

/**
 * The cycles of the graph of run-time imports, one per strongly connected group of files, each as
 * the path `a -> b -> ... -> a` through it.
 */
function importCycles(sources: ReadonlyMap<string, string>): string[] {
  const files = new Set(sources.keys());
  const edges = new Map<string, string[]>();
  for (const [file, source] of sources) {
    const targets = importsOf(file, source)
      .filter((found) => !found.typeOnly)
      .map((found) => fileOf(found.target, files))
      .filter((target): target is string => target !== undefined);
    edges.set(file, [...new Set(targets)]);
  }
  // Tarjan's strongly connected components.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const groups: string[][] = [];
  const visit = (file: string) => {
    index.set(file, index.size);
    low.set(file, index.get(file)!);
    stack.push(file);
    onStack.add(file);
    for (const next of edges.get(file)!) {
      if (!index.has(next)) {
        visit(next);
        low.set(file, Math.min(low.get(file)!, low.get(next)!));
      } else if (onStack.has(next)) {
        low.set(file, Math.min(low.get(file)!, index.get(next)!));
      }
    }
    if (low.get(file) !== index.get(file)) return;
    const group: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      group.push(member);
    } while (member !== file);
    if (group.length > 1 || edges.get(file)!.includes(file)) groups.push(group);
  };
  for (const file of [...files].sort()) if (!index.has(file)) visit(file);
  // A path around each group: from its first file, along edges inside the group, back to it.
  return groups.map((group) => {
    const inside = new Set(group);
    const start = [...group].sort()[0]!;
    const path = [start];
    const seen = new Set(path);
    let at = start;
    for (;;) {
      const nexts = edges.get(at)!.filter((next) => inside.has(next));
      const next =
        nexts.find((candidate) => candidate === start) ?? nexts.find((c) => !seen.has(c)) ?? nexts[0]!;
      path.push(next);
      if (next === start || seen.has(next)) break;
      seen.add(next);
      at = next;
    }
    return path.join(' -> ');
  });
}

describe('layering of shared/', () => {
  const files = sharedFiles();

  it('every import points down', () => {
    const found = files.flatMap((file) => violations(file, readFileSync(join(root, file), 'utf8')));
    expect(found).toEqual([]);
  });

  it('has no import cycles', () => {
    const sources = new Map(files.map((file) => [file, readFileSync(join(root, file), 'utf8')] as const));
    expect(importCycles(sources)).toEqual([]);
  });

  it('finds cycles of run-time imports, direct and through other files, and leaves out type imports', () => {
    const graph = (entries: Record<string, string>) => new Map(Object.entries(entries));
    expect(
      importCycles(
        graph({
          'shared/workflows/a.ts': "import { b } from './b';",
          'shared/workflows/b.ts': "import type { A } from './a';\nexport const b = 1;",
        }),
      ),
    ).toEqual([]);
    expect(
      importCycles(
        graph({
          'shared/workflows/a.ts': "import { b } from './b';",
          'shared/workflows/b.ts': "import { type A, a } from './a';",
        }),
      ),
    ).toEqual(['shared/workflows/a.ts -> shared/workflows/b.ts -> shared/workflows/a.ts']);
    expect(
      importCycles(
        graph({
          'shared/cli/x.ts': "const { y } = await import('./y');",
          'shared/cli/y.ts': "export { z } from '../engine/z.js';",
          'shared/engine/z.ts': "import { x } from '../cli/x';",
          'shared/engine/w.ts': "export type Z = import('./z').Z;\nimport { x } from '../cli/x';",
        }),
      ),
    ).toEqual(['shared/cli/x.ts -> shared/cli/y.ts -> shared/engine/z.ts -> shared/cli/x.ts']);
    expect(
      importCycles(
        graph({
          'shared/engine/index.ts': "import { a } from './a';",
          'shared/engine/a.ts': "import { engine } from '.';",
        }),
      ),
    ).toHaveLength(1);
  });

  it('reads the imports it checks', () => {
    // Enough files and imports that a parser reading none would be noticed.
    expect(files.length).toBeGreaterThan(150);
    const runner = readFileSync(join(root, 'shared/engine/runner.ts'), 'utf8');
    expect(relativeImports('shared/engine/runner.ts', runner)).toEqual(
      expect.arrayContaining(['shared/engine/report', 'shared/openplatform/errors']),
    );
    const deps = readFileSync(join(root, 'shared/engine/deps.ts'), 'utf8');
    // `import type`, and `import('./job-record').Job` in a type position.
    expect(relativeImports('shared/engine/deps.ts', deps)).toEqual(
      expect.arrayContaining(['shared/callbacks/ssrf-guard', 'shared/engine/job-record']),
    );
  });

  it('refuses the engine importing the schedules, the reports or a runtime, in every form', () => {
    const file = 'shared/engine/report.ts';
    for (const source of [
      "import { scheduleChanges } from '../schedules/changes';",
      "import type { ScheduleChanges } from '../schedules/changes';",
      "export { changesMarkdown } from '../schedules/changes.js';",
      "const changes = await import('../schedules/changes');",
      "import { assembleJobReport } from '../reports/job-report';",
      "import type { LocalPipeline } from '../runtime/local/pipeline';",
    ]) {
      expect(violations(file, source), source).toHaveLength(1);
    }
    expect(violations(file, "import type { Job } from './job-record';")).toEqual([]);
    expect(violations(file, "import * as z from 'zod';")).toEqual([]);
  });

  it('refuses a feature importing a backend, and anything importing the command', () => {
    expect(
      violations('shared/schedules/changes.ts', "import { DynamoDbJobStore } from '../backends/aws';"),
    ).toHaveLength(1);
    expect(
      violations('shared/runtime/aws/pipeline.ts', "import { main } from '../../cli/main';"),
    ).toHaveLength(1);
  });
});
