import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The e2e suites run the real bin/opflow.js: build the CLI from the current sources first.
    // One DynamoDB Local for the run, started when a file first needs it (docs/guides/testing.md).
    // The aws e2e files share the stack's rules, synthesized once per run (test/support/stack-rules.global.ts).
    globalSetup: [
      'test/support/build-cli.global.ts',
      'test/support/dynamodb-local.global.ts',
      'test/support/stack-rules.global.ts',
    ],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // Suites that start emulators (DynamoDB Local, fauxqs) share ports and a JVM; keep file parallelism modest on 2 cores
    // (4 workers measured no faster than 2, with tests at their limit: docs/guides/testing.md).
    maxWorkers: 2,
    // vitest's own output, and the run's results as JSON (git-ignored): `npm run test:slowest`
    // prints the slowest files from them (scripts/test-slowest.ts). 'default' named: vitest adds its
    // console reporter only when the list is empty (configDefaults.reporters is []).
    reporters: ['default', 'json'],
    outputFile: { json: 'test-artifacts/vitest-results.json' },
  },
});
