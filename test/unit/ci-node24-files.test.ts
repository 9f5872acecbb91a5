/**
 * CI runs the whole aws e2e on Node 20 (in `npm test`) and, on Node 24 (Lambda's runtime), the files
 * `.ci/run` lists in `node24_files`: they must load and run every Lambda function, so a function added
 * under functions/ without a listed file that runs it fails here instead of never running on Node 24.
 * Each function is recognised in a listed file by how the aws e2e harness (test/e2e/aws/harness)
 * reaches it: AwsWorld.start loads the step worker, api and sweeper; `inbox: true` the ingest
 * function; the other functions by their bundle's name or the world's method that invokes them.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FUNCTIONS_WITH_EXTRACTORS, functionEntries, PROJECT_ROOT } from '../../infra/lib/function-bundling';

/** The files of the `node24_files=( ... )` array in .ci/run. */
function node24Files(): string[] {
  const script = readFileSync(join(PROJECT_ROOT, '.ci/run'), 'utf8');
  const list = /^node24_files=\(\n([\s\S]*?)\n\)$/m.exec(script)?.[1];
  if (!list) throw new Error('.ci/run: no node24_files=( ... ) array');
  expect(script).toMatch(/^bash \.ci\/node24\.sh "\$\{node24_files\[@\]\}"$/m);
  return list
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
}

/** How a listed file shows that it runs a function. */
const runs: Record<string, RegExp> = {
  worker: /AwsWorld\.start\(/,
  api: /AwsWorld\.start\(/,
  sweeper: /AwsWorld\.start\(/,
  ingest: /AwsWorld\.start\(\{[^}]*inbox: true/,
  events: /bundles\.load<[\s\S]{0,200}?>\(\s*'events'|\.deliverStream\(/,
  callbacks: /bundles\.load<[\s\S]{0,200}?>\(\s*'callbacks'|\.deliverCallbacks\(/,
  webhooks: /\/webhooks\/\$\{/,
  schedules: /bundles\.load<[\s\S]{0,200}?>\(\s*'schedules'/,
};

describe('the Node 24 leg of CI (.ci/run)', () => {
  const files = node24Files();

  it('lists files that exist, once each', () => {
    expect(files.length).toBeGreaterThan(0);
    expect(new Set(files).size).toBe(files.length);
    for (const file of files) expect(existsSync(join(PROJECT_ROOT, file)), file).toBe(true);
  });

  it('runs every Lambda function in at least one listed file', () => {
    const texts = files.map((file) => readFileSync(join(PROJECT_ROOT, file), 'utf8'));
    for (const name of Object.keys(functionEntries())) {
      const rule = runs[name];
      expect(
        rule,
        `function ${name}: list in .ci/run's node24_files a file that runs it, and add its rule here`,
      ).toBeDefined();
      expect(
        texts.some((text) => rule!.test(text)),
        `function ${name}: no file in .ci/run's node24_files runs it`,
      ).toBe(true);
    }
  });

  it('reads documents through the extractor files the ingest bundle loads', () => {
    expect(FUNCTIONS_WITH_EXTRACTORS.length).toBeGreaterThan(0);
    expect(files).toContain('test/infra/lambda/document-extractors.test.ts');
  });
});
