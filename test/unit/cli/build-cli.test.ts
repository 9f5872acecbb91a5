// The CLI's JavaScript build (scripts/build-cli.mjs): what it produces, and how a stale build is
// recognised so bin/opflow.js never runs code older than the sources.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  buildCli,
  currentEntry,
  PROJECT_ROOT,
  readManifest,
  staleReason,
} from '../../../scripts/build-cli.mjs';
import { captureIo } from './capture-io';

let outDir: string;
beforeAll(() => {
  outDir = mkdtempSync(path.join(tmpdir(), 'opflow-cli-build-'));
});
afterAll(() => rmSync(outDir, { recursive: true, force: true }));

const packageVersion = JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8')).version;

describe('the CLI build', () => {
  it('has nothing to run before the first build', () => {
    expect(staleReason(PROJECT_ROOT, outDir)).toBe('no build yet');
    expect(currentEntry(PROJECT_ROOT, outDir)).toBeUndefined();
  });

  it('builds every command from the entry, and the build runs', { timeout: 120_000 }, async () => {
    const entry = await buildCli(PROJECT_ROOT, outDir);
    expect(currentEntry(PROJECT_ROOT, outDir)).toBe(entry);
    expect(staleReason(PROJECT_ROOT, outDir)).toBeUndefined();
    const manifest = readManifest(PROJECT_ROOT, outDir)!;
    // Found by following imports: every command file is an input, with no list to keep.
    expect(manifest.inputs).toContain('shared/cli/main.ts');
    expect(manifest.inputs).toContain('shared/cli/commands/status.ts');
    expect(manifest.inputs.some((input) => input.includes('node_modules'))).toBe(false);

    const { main } = (await import(pathToFileURL(entry).href)) as typeof import('../../../shared/cli/main');
    const io = captureIo();
    expect(await main(['node', 'opflow', '--version'], { io })).toBe(0);
    expect(io.out()).toBe(`${packageVersion}\n`);
  });

  it('starts without the AWS SDK or the PDF library: no static import of the entry reaches them', () => {
    // A command's start-up is every module its entry imports statically (the rest is loaded by
    // `import()` when a command needs it). pdf-lib's fontkit alone (one 2 MB CommonJS file) took
    // about a second of CPU of every command, `--version` included; the AWS SDK is for `--backend aws`.
    const entry = currentEntry(PROJECT_ROOT, outDir)!;
    const packages = new Set<string>();
    const seen = new Set<string>();
    const visit = (file: string) => {
      if (seen.has(file)) return;
      seen.add(file);
      const code = readFileSync(file, 'utf8');
      for (const [, specifier] of code.matchAll(/^\s*(?:import|export)\s[^'"]*?['"]([^'"]+)['"];?\s*$/gm)) {
        if (specifier!.startsWith('.')) visit(path.resolve(path.dirname(file), specifier!));
        else if (!specifier!.startsWith('node:'))
          packages.add(
            specifier!
              .split('/')
              .slice(0, specifier!.startsWith('@') ? 2 : 1)
              .join('/'),
          );
      }
    };
    visit(entry);
    // Enough was read to mean something: the entry's chunks and the packages every command uses.
    expect(seen.size).toBeGreaterThan(3);
    expect(packages).toContain('zod');
    const heavy = [...packages].filter((name) => /^(@aws-sdk|@smithy|pdf-lib|@pdf-lib)(\/|$)/.test(name));
    expect(heavy).toEqual([]);
  });

  it('is stale when a source it was built from changed or is gone', () => {
    const manifest = readManifest(PROJECT_ROOT, outDir)!;
    const file = path.join(outDir, 'manifest.json');
    writeFileSync(file, JSON.stringify({ ...manifest, builtAt: 0 }));
    expect(staleReason(PROJECT_ROOT, outDir)).toMatch(/ changed since the last build$/);
    expect(currentEntry(PROJECT_ROOT, outDir)).toBeUndefined();

    writeFileSync(file, JSON.stringify({ ...manifest, inputs: [...manifest.inputs, 'shared/cli/gone.ts'] }));
    expect(staleReason(PROJECT_ROOT, outDir)).toBe('shared/cli/gone.ts was removed since the last build');

    writeFileSync(file, JSON.stringify({ ...manifest, entry: 'b-missing/main.js' }));
    expect(staleReason(PROJECT_ROOT, outDir)).toBe('the last build is missing');

    writeFileSync(file, '{"format": 1');
    expect(staleReason(PROJECT_ROOT, outDir)).toBe('no build yet');
  });
});
