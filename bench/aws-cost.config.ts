// vitest configuration of `npm run bench:aws-cost` (bench/aws-cost.ts): one file, no time limits.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['bench/aws-cost.ts'],
    // The default cells take about an hour on a loaded machine; the whole matrix, hours.
    testTimeout: 6 * 3_600_000,
    hookTimeout: 600_000,
    pool: 'forks',
    maxWorkers: 1,
  },
});
