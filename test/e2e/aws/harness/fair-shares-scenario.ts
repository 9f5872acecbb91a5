/**
 * Tenants sharing one key on a simulated aws deployment (AwsWorld), for the fairness bench's aws
 * leg (bench/fairness-aws.ts): each tenant submits its patent counts through the job API, in the
 * order given, in one instant; the world runs them. Counted in tokens, as the local bench is: the
 * key's grant log (every version of its bucket item on the job table's stream, dynamodb-rate-grants.ts)
 * gives each token once at its time on the line (a token taken over is its cutter's), and each
 * tenant's share of them is measured in every distinct sliding window (bench/fairness-windows.ts
 * `slidingShares`, 60 s by default) while every tenant still has a job waiting for its token (up
 * to the first tenant's last token: a patent count makes one call).
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import {
  type FlowShareRow,
  sharesOfWeights,
  slidingShares,
  tokensOf,
} from '../../../../bench/fairness-windows';
import { rateBucketKey } from '../../../../shared/backends/aws/table';
import type { TokenGrant } from '../../../../shared/engine/admission/priority-lane';
import { keyFingerprint } from '../../../../shared/engine/admission/rate-bucket';
import type { Job } from '../../../../shared/engine/job-record';
import { type AwsWorld, TENANT_KEY } from './aws-world';
import { grantLogsOf } from './grant-log';

export interface ScenarioTenant {
  tenant: string;
  weight: number;
  jobs: number;
}

export interface SharesOutcome {
  jobs: Job[];
  /** The key's calls as the sandbox saw them (downloads out), in time order, and whether each was answered. */
  calls: { at: number; ok: boolean }[];
  /** The key's grant log (its bucket item's versions on the stream), in grant order. */
  grants: TokenGrant[];
  /** Distinct sliding windows looked at, and the fewest tokens in one. */
  windows: number;
  fewestTokens: number;
  spanMs: number;
  /** Per tenant: configured share, least and most in a window, the worst miss (points, relative) and where. */
  rows: FlowShareRow[];
  /** The key's bucket item at the end, as JSON: its size in bytes, and its `shares` attribute. */
  bucketBytes: number;
  ledger: string | undefined;
}

/** What one world measured, as bench/fairness.ts prints it. */
export interface AwsSharesResult {
  label: string;
  windows: number;
  fewestTokens: number;
  spanMs: number;
  rows: FlowShareRow[];
  /** The key's grant log's grants (a token taken over counts twice there, once in the shares). */
  grants: number;
  calls: number;
  throttled: number;
  failed: number;
  bucketBytes: number;
  wallMs: number;
}

/** The tenants' keys: every tenant's secret holds the one key, so their calls share its budget. */
export function shareOneKey(world: AwsWorld, tenants: readonly { tenant: string }[]): void {
  for (const { tenant } of tenants)
    world.emulators.secretsManager!.setSecret(
      `opflow/e2e/api-key/${tenant}`,
      JSON.stringify({ apiKey: TENANT_KEY }),
    );
}

/** The shares setting for the tenants (`alpha=5,beta=3`). */
export function sharesSetting(tenants: readonly { tenant: string; weight: number }[]): string {
  return tenants.map((t) => `${t.tenant}=${t.weight}`).join(',');
}

/** The tenant key's grant log (harness/grant-log.ts). */
async function grantLogOf(world: AwsWorld): Promise<TokenGrant[]> {
  return (await grantLogsOf(world)).get(rateBucketKey(keyFingerprint(TENANT_KEY)).PK) ?? [];
}

export async function runSharesScenario(
  world: AwsWorld,
  tenants: readonly ScenarioTenant[],
  options: { windowMs?: number; maxRounds?: number } = {},
): Promise<SharesOutcome> {
  const windowMs = options.windowMs ?? 60_000;
  const ids: string[] = [];
  for (const { tenant, jobs } of tenants)
    for (let i = 0; i < jobs; i++)
      ids.push(
        await world.submit({
          workflow: 'patent-count',
          input: { query: `TTL:(${tenant} lamp ${i})` },
          tenant,
        }),
      );
  const jobs = await world.settle(ids, { drain: true, maxRounds: options.maxRounds ?? 50_000 });
  const calls = world.sandbox.ledger
    .entries()
    .filter((entry) => entry.operationId !== 'download')
    .map((entry) => ({ at: entry.time, ok: entry.outcome === 'ok' }))
    .sort((a, b) => a.at - b.at);
  const grants = await grantLogOf(world);
  const tenantOf = new Map(jobs.map((job) => [job.id, job.tenant]));
  const tokens = tokensOf(grants, (id) => tenantOf.get(id));
  const from = tokens[0]?.at ?? 0;
  const to = Math.min(
    ...tenants.map(({ tenant }) =>
      Math.max(from, ...tokens.filter((token) => token.flow === tenant).map((token) => token.at)),
    ),
  );
  const shares = slidingShares(
    tokens,
    sharesOfWeights(Object.fromEntries(tenants.map((t) => [t.tenant, t.weight]))),
    { windowMs, from, to },
  );
  const bucket = await world.emulators.clients.documents.send(
    new GetCommand({
      TableName: world.env.OPFLOW_TABLE_NAME,
      Key: rateBucketKey(keyFingerprint(TENANT_KEY)),
    }),
  );
  return {
    jobs,
    calls,
    grants,
    windows: shares.windows,
    fewestTokens: shares.fewestTokens,
    spanMs: to - from,
    rows: shares.rows,
    bucketBytes: JSON.stringify(bucket.Item ?? {}).length,
    ledger: typeof bucket.Item?.shares === 'string' ? bucket.Item.shares : undefined,
  };
}

/** The windows and rows as text (the bench's log). */
export function describeShares(outcome: SharesOutcome): string {
  const pct = (x: number) => `${(100 * x).toFixed(1)} %`;
  return [
    `${outcome.windows} sliding windows over ${(outcome.spanMs / 1000).toFixed(0)} s (fewest tokens ${outcome.fewestTokens}); bucket item ${outcome.bucketBytes} bytes as JSON`,
    ...outcome.rows.map(
      (row) =>
        `${row.flow}: configured ${pct(row.configured)}, least ${pct(row.min)}, most ${pct(row.max)}, worst off ${pct(row.worstRelative)} at +${(row.worstAtMs / 1000).toFixed(1)} s`,
    ),
  ].join('\n');
}
