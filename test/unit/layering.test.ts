/**
 * The layering of shared/ (docs/DESIGN.md): imports point down. Every relative import of every
 * TypeScript file under shared/ (`import`, `import type`, `export ... from`, `import('...')`) is
 * resolved to the folder it lands in and checked against the rules below. The engine sits under the
 * features (workflows, reports, schedules) and the runtimes: it gets what they provide through its
 * ports and hooks (EngineDeps.writeReport writes a finished job's report, schedule changes included).
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
  /(?:^|[\s;])(?:import|export)\s+(?:type\s+)?(?:[^'";]*?\sfrom\s+)?['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g;

/** The repository paths (`shared/...`, without extension) a file's relative imports point at. */
function relativeImports(file: string, source: string): string[] {
  const found: string[] = [];
  for (const match of source.matchAll(importPattern)) {
    const specifier = match[1] ?? match[2]!;
    if (!specifier.startsWith('.')) continue;
    found.push(relative(root, resolve(root, dirname(file), specifier)).replace(/\.(js|ts)$/, ''));
  }
  return found;
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
    from: (area) => area === 'openplatform',
    allows: (_target, to) => ['openplatform', 'log'].includes(to),
    why: 'the Open Platform client imports only shared/log',
  },
  {
    from: (area) => area === 'sandbox',
    allows: (_target, to) => ['sandbox', 'openplatform', 'log'].includes(to),
    why: 'the sandbox imports only the Open Platform catalogue and schemas, and shared/log',
  },
  {
    from: (area) => area === 'engine',
    allows: (target, to) =>
      ['engine', 'log', 'openplatform'].includes(to) || target === 'shared/callbacks/ssrf-guard',
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

describe('layering of shared/', () => {
  const files = sharedFiles();

  it('every import points down', () => {
    const found = files.flatMap((file) => violations(file, readFileSync(join(root, file), 'utf8')));
    expect(found).toEqual([]);
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
