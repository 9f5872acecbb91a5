import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // Suites that start emulators (DynamoDB Local, fauxqs) share ports and a JVM; keep file parallelism modest on 2 cores.
    maxWorkers: 2,
  },
});
