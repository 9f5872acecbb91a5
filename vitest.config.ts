import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The e2e suites run the real bin/opflow.js: build the CLI from the current sources first.
    globalSetup: ['test/support/build-cli.global.ts'],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // Suites that start emulators (DynamoDB Local, fauxqs) share ports and a JVM; keep file parallelism modest on 2 cores.
    maxWorkers: 2,
  },
});
