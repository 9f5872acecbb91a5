/**
 * The fairness bench's aws leg (bench/fairness.ts runs it with `--aws=on`, the default for the
 * shares part): tenants on one key of the simulated deployment (test/e2e/aws/harness/aws-world.ts:
 * the bundled api and step worker on the emulators, the key's bucket item in DynamoDB Local, tokens
 * held by SQS messages, admission on), each submitting patent counts through the job API in that
 * order (test/e2e/aws/harness/fair-shares-scenario.ts), with the shares on and off. vitest runs
 * this file (the world's clock is vitest's fake Date); it writes what it measured as JSON to
 * OPFLOW_BENCH_FAIRNESS_OUT for bench/fairness.ts to print beside the local cases. Nothing here
 * asserts: the share ledger's rules are tested in test/integration/backends/aws/dynamodb-rate-limiter.test.ts;
 * the 60 s-window goal is measured here, not asserted (its figures: bench/fairness.md).
 *
 * Environment: OPFLOW_BENCH_FAIRNESS_OUT (the JSON file), OPFLOW_BENCH_FAIRNESS_TENANTS (JSON
 * `[{tenant, weight, jobs}]`), OPFLOW_BENCH_FAIRNESS_QPS (default 5), OPFLOW_BENCH_FAIRNESS_CASES
 * (`on,off`: the shares setting of each world, in order), OPFLOW_BENCH_FAIRNESS_WINDOW_MS (the sliding
 * window, default 60 s).
 */
import { writeFileSync } from 'node:fs';
import { it } from 'vitest';
import * as z from 'zod';
import { AwsWorld } from '../test/e2e/aws/harness/aws-world';
import {
  type AwsSharesResult,
  describeShares,
  runSharesScenario,
  shareOneKey,
  sharesSetting,
} from '../test/e2e/aws/harness/fair-shares-scenario';

const envSchema = z.object({
  OPFLOW_BENCH_FAIRNESS_OUT: z.string().min(1),
  OPFLOW_BENCH_FAIRNESS_TENANTS: z
    .string()
    .transform((text) => JSON.parse(text) as unknown)
    .pipe(
      z
        .array(
          z.object({
            tenant: z.string().regex(/^[\w-]{1,32}$/),
            weight: z.number().positive(),
            jobs: z.number().int().min(1).max(5_000),
          }),
        )
        .min(2),
    ),
  OPFLOW_BENCH_FAIRNESS_QPS: z.coerce.number().positive().max(100).default(5),
  OPFLOW_BENCH_FAIRNESS_WINDOW_MS: z.coerce.number().int().min(1_000).max(600_000).default(60_000),
  OPFLOW_BENCH_FAIRNESS_CASES: z
    .string()
    .default('on,off')
    .transform((text) => text.split(','))
    .pipe(z.array(z.enum(['on', 'off'])).min(1)),
});

it('aws fair shares', async () => {
  const env = envSchema.parse(process.env);
  const results: AwsSharesResult[] = [];
  for (const shares of env.OPFLOW_BENCH_FAIRNESS_CASES) {
    const started = performance.now();
    const world = await AwsWorld.start({
      keyQps: env.OPFLOW_BENCH_FAIRNESS_QPS,
      sandbox: { ledgerBodies: true },
      env: (vars) => ({
        ...vars,
        OPFLOW_QPS: String(env.OPFLOW_BENCH_FAIRNESS_QPS),
        OPFLOW_ADMISSION: 'on',
        OPFLOW_SHARES: shares === 'on' ? sharesSetting(env.OPFLOW_BENCH_FAIRNESS_TENANTS) : 'off',
      }),
    });
    try {
      shareOneKey(world, env.OPFLOW_BENCH_FAIRNESS_TENANTS);
      const outcome = await runSharesScenario(world, env.OPFLOW_BENCH_FAIRNESS_TENANTS, {
        windowMs: env.OPFLOW_BENCH_FAIRNESS_WINDOW_MS,
      });
      process.stderr.write(`${describeShares(outcome)}\n`);
      results.push({
        label: `shares ${shares} (aws)`,
        windows: outcome.windows,
        fewestTokens: outcome.fewestTokens,
        spanMs: outcome.spanMs,
        rows: outcome.rows,
        grants: outcome.grants.length,
        calls: outcome.calls.length,
        throttled: outcome.calls.filter((call) => !call.ok).length,
        failed: outcome.jobs.filter((job) => job.status !== 'SUCCEEDED').length,
        bucketBytes: outcome.bucketBytes,
        wallMs: performance.now() - started,
      });
    } finally {
      await world.stop();
    }
  }
  writeFileSync(env.OPFLOW_BENCH_FAIRNESS_OUT, JSON.stringify(results));
});
