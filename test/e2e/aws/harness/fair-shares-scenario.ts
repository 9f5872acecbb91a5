/**
 * Tenants sharing one key on a simulated aws deployment (AwsWorld), for the fair-shares e2e
 * (test/e2e/aws/fair-shares.test.ts) and the fairness bench's aws leg (bench/fairness-aws.ts): each
 * tenant submits its patent counts through the job API, in the order given, in one instant; the
 * world runs them; each tenant's share of the key's calls is measured in every 60 s window
 * (stepped by 10 s) while every tenant still has a job waiting for its call (up to the first
 * tenant's last call: a patent count makes one call).
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { rateBucketKey } from '../../../../shared/backends/aws/table';
import { keyFingerprint } from '../../../../shared/engine/admission/rate-bucket';
import type { Job } from '../../../../shared/engine/job-record';
import { type AwsWorld, TENANT_KEY } from './aws-world';

export interface ScenarioTenant {
  tenant: string;
  weight: number;
  jobs: number;
}

export interface WindowShares {
  /** From the first call. */
  startMs: number;
  calls: number;
  /** Per tenant, its share of the window's calls. */
  shares: Record<string, number>;
}

export interface SharesOutcome {
  jobs: Job[];
  /** The key's calls (downloads out), in time order, each with its tenant and whether it was answered. */
  calls: { at: number; tenant: string; ok: boolean }[];
  windows: WindowShares[];
  spanMs: number;
  /** Per tenant: configured share, the least and most it got in a window, and the worst relative miss. */
  rows: { tenant: string; configured: number; min: number; max: number; worst: number }[];
  /** The key's bucket item at the end, as JSON: its size in bytes, and its `shares` attribute. */
  bucketBytes: number;
  ledger: string | undefined;
}

/** What one world measured, as bench/fairness.ts prints it. */
export interface AwsSharesResult {
  label: string;
  windows: number;
  spanMs: number;
  rows: SharesOutcome['rows'];
  /** Each window's shares (bench/fairness.ts prints them side by side with the local ones). */
  perWindow?: WindowShares[] | undefined;
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

export async function runSharesScenario(
  world: AwsWorld,
  tenants: readonly ScenarioTenant[],
  options: { windowMs?: number; stepMs?: number; maxRounds?: number } = {},
): Promise<SharesOutcome> {
  const windowMs = options.windowMs ?? 60_000;
  const stepMs = options.stepMs ?? 10_000;
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
    .map((entry) => ({
      at: entry.time,
      tenant: /TTL:\(([\w-]+) lamp/.exec(JSON.stringify(entry.body))?.[1] ?? '?',
      ok: entry.outcome === 'ok',
    }))
    .sort((a, b) => a.at - b.at);
  const from = calls[0]?.at ?? 0;
  const to = Math.min(
    ...tenants.map(({ tenant }) =>
      Math.max(from, ...calls.filter((c) => c.tenant === tenant).map((c) => c.at)),
    ),
  );
  const windows: WindowShares[] = [];
  for (let start = from; start + windowMs <= to; start += stepMs) {
    const inWindow = calls.filter((call) => call.at >= start && call.at < start + windowMs);
    if (inWindow.length === 0) continue;
    windows.push({
      startMs: start - from,
      calls: inWindow.length,
      shares: Object.fromEntries(
        tenants.map(({ tenant }) => [
          tenant,
          inWindow.filter((call) => call.tenant === tenant).length / inWindow.length,
        ]),
      ),
    });
  }
  const total = tenants.reduce((sum, t) => sum + t.weight, 0);
  const rows = tenants.map(({ tenant, weight }) => {
    const configured = weight / total;
    const seen = windows.map((window) => window.shares[tenant] ?? 0);
    const min = Math.min(...seen);
    const max = Math.max(...seen);
    return { tenant, configured, min, max, worst: Math.max(configured - min, max - configured) / configured };
  });
  const bucket = await world.emulators.clients.documents.send(
    new GetCommand({
      TableName: world.env.OPFLOW_TABLE_NAME,
      Key: rateBucketKey(keyFingerprint(TENANT_KEY)),
    }),
  );
  return {
    jobs,
    calls,
    windows,
    spanMs: to - from,
    rows,
    bucketBytes: JSON.stringify(bucket.Item ?? {}).length,
    ledger: typeof bucket.Item?.shares === 'string' ? bucket.Item.shares : undefined,
  };
}

/** The windows and rows as text (the e2e's failure message, the bench's log). */
export function describeShares(outcome: SharesOutcome): string {
  const pct = (x: number) => `${(100 * x).toFixed(1)} %`;
  return [
    `${outcome.windows.length} windows over ${(outcome.spanMs / 1000).toFixed(0)} s; bucket item ${outcome.bucketBytes} bytes as JSON`,
    ...outcome.rows.map(
      (row) =>
        `${row.tenant}: configured ${pct(row.configured)}, least ${pct(row.min)}, most ${pct(row.max)}, worst off ${pct(row.worst)}`,
    ),
    ...outcome.windows.map(
      (w) =>
        `+${(w.startMs / 1000).toFixed(0)} s: ${w.calls} calls, ${Object.entries(w.shares)
          .map(([tenant, share]) => `${tenant} ${pct(share)}`)
          .join(', ')}`,
    ),
  ].join('\n');
}
