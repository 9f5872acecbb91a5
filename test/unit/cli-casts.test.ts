/**
 * The opflow command works with a backend as a whole (shared/runtime/backend.ts): no file of
 * shared/cli reaches past it to an adapter, with a cast (`as never`, `as unknown as`, the former
 * `asLocal`) or by importing shared/backends and building one. What differs between backends is
 * asked of the Backend (`work.where`, `batches()`, `callbackSecrets()`, ...), so a third backend
 * needs no change here.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = resolve(__dirname, '../..');

const forbidden: { pattern: RegExp; why: string }[] = [
  { pattern: /\basLocal\s*\(/, why: 'asLocal() reaches the local pipeline past the Backend' },
  { pattern: /\bas\s+never\b/, why: '`as never` hides a type the code should state' },
  { pattern: /\bas\s+unknown\s+as\b/, why: '`as unknown as` forces one type into another' },
  { pattern: /\bas\s+\w*Pipeline\b/, why: 'a cast to one backend’s own type reaches past the Backend' },
  {
    pattern: /from\s+['"](\.\.\/)+backends\//,
    why: 'an adapter is the backend’s: ask the Backend for the store instead',
  },
  {
    pattern: /import\(\s*['"](\.\.\/)+backends\//,
    why: 'an adapter is the backend’s: ask the Backend for the store instead',
  },
  {
    pattern: /\bnew\s+(Sqlite|DynamoDb|S3|Sqs|SecretsManager|FileReport|EnvKey|InMemoryRate)\w*\s*\(/,
    why: 'an adapter is built by its backend, not by a command',
  },
  { pattern: /\bcreate(Local|Aws)Backend\s*\(/, why: 'a backend is opened through openBackend()' },
];

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return files(path);
    return entry.name.endsWith('.ts') ? [relative(root, path)] : [];
  });
}

/** Every forbidden line of a source, as `file:line: why`. */
function castsIn(file: string, source: string): string[] {
  return source
    .split('\n')
    .flatMap((line, index) =>
      forbidden
        .filter(({ pattern }) => pattern.test(line))
        .map(({ why }) => `${file}:${index + 1}: ${why}: ${line.trim()}`),
    );
}

describe('shared/cli reaches adapters only through the Backend', () => {
  const cliFiles = files(join(root, 'shared/cli'));

  it('reads the command files (the walk finds them)', () => {
    expect(cliFiles).toContain('shared/cli/context.ts');
    expect(cliFiles.length).toBeGreaterThan(20);
  });

  it('has no cast to an adapter and builds no adapter', () => {
    const found = cliFiles.flatMap((file) => castsIn(file, readFileSync(join(root, file), 'utf8')));
    expect(found).toEqual([]);
  });

  it('catches each forbidden form', () => {
    const samples = [
      'const local = asLocal(pipeline);',
      'callbackSenderDeps(pipeline as never, env);',
      'const x = y as unknown as Z;',
      "pipeline = (await openBackend(ctx, options, 'records')) as AwsPipeline;",
      "import { SqliteScheduleStateStore } from '../../backends/local/sqlite-schedule-state-store';",
      "const aws = await import('../../backends/aws');",
      'const states = new DynamoDbScheduleStateStore(client, table);',
      'const local = createLocalBackend({ dbPath });',
    ];
    for (const sample of samples) expect(castsIn('sample.ts', sample), sample).toHaveLength(1);
    expect(castsIn('sample.ts', 'const states = await backend.scheduleStates();')).toEqual([]);
  });
});
