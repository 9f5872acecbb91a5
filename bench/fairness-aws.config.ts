// vitest configuration of the fairness bench's aws leg (bench/fairness-aws.ts, run by bench/fairness.ts).
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['bench/fairness-aws.ts'],
    testTimeout: 3 * 3_600_000,
    hookTimeout: 1_800_000,
    pool: 'forks',
    maxWorkers: 1,
  },
});
