/**
 * Shares of a key's tokens in sliding windows, for the fairness bench (bench/fairness.ts): each
 * flow's (a tenant's, or a batch's within its tenant) part of the tokens the key's line gave in
 * every window of `windowMs` within a span, against its configured share. Pure but for the grant
 * log's copy (`keepGrantLog`, `readKeptGrants`): tested in test/unit/bench/fairness-windows.test.ts.
 */
import type { LocalDatabase } from '../shared/backends/local/database';
import { readTokenGrants } from '../shared/backends/local/sqlite-rate-limiter';
import type { TokenGrant } from '../shared/engine/admission/priority-lane';

/**
 * Keeps a copy of every row of a database's grant log (`rate_grants`) in `bench_grants`, by a
 * trigger: the limiter prunes its log of grants asked more than ten minutes before
 * (`grantMemoryMs`), so a run longer than that, read at its end, would miss its first tokens (and a
 * long waiter's later ones: pruned by when it first asked), and its windows would start wherever
 * the log happens to. Call it once the limiter has opened the database (its table exists).
 */
export function keepGrantLog(db: LocalDatabase): void {
  db.exec(`CREATE TABLE IF NOT EXISTS bench_grants (
    bucket TEXT NOT NULL, seq INTEGER NOT NULL, by TEXT, asked_at REAL NOT NULL, token_at REAL NOT NULL,
    kind TEXT NOT NULL, PRIMARY KEY (bucket, seq)
  ) STRICT, WITHOUT ROWID;
  CREATE TRIGGER IF NOT EXISTS bench_keep_grants AFTER INSERT ON rate_grants BEGIN
    INSERT OR REPLACE INTO bench_grants VALUES (NEW.bucket, NEW.seq, NEW.by, NEW.asked_at, NEW.token_at, NEW.kind);
  END;`);
}

/** Every grant `keepGrantLog` kept, by key, in grant order (read as the limiter's own log is). */
export function readKeptGrants(db: LocalDatabase): Map<string, TokenGrant[]> {
  return readTokenGrants(db, 'bench_grants');
}

/** A token the key's line gave, at its time on the line, and the flow it counts in. */
export interface FlowToken {
  at: number;
  flow: string;
}

/**
 * The tokens a grant log gave, once each, at their time on the line: a token taken over by a
 * cut-in is its cutter's (its first holder took another, logged as its own grant). `flowOf` names
 * the flow of a grant's job (undefined: not counted, e.g. a caller that named no job).
 */
export function tokensOf(
  grants: readonly TokenGrant[],
  flowOf: (jobId: string) => string | undefined,
): FlowToken[] {
  const cut = new Set(grants.filter((grant) => grant.kind === 'cut-in').map((grant) => grant.tokenAt));
  const tokens: FlowToken[] = [];
  for (const grant of grants) {
    if (grant.kind === 'refused' || (grant.kind !== 'cut-in' && cut.has(grant.tokenAt))) continue;
    const flow = grant.by === undefined ? undefined : flowOf(grant.by);
    if (flow !== undefined) tokens.push({ at: grant.tokenAt, flow });
  }
  return tokens.sort((a, b) => a.at - b.at);
}

/** One flow's shares over the windows: configured, least, most, and the worst miss both ways. */
export interface FlowShareRow {
  flow: string;
  configured: number;
  min: number;
  max: number;
  /** The worst |share - configured|, in points of the window's tokens (0.05 is 5 points). */
  worstAbsolute: number;
  /** The same over the configured share (0.1 is 10 % of it): the measure. */
  worstRelative: number;
  /** Where the worst window starts, from the span's start (ms). */
  worstAtMs: number;
}

export interface WindowShares {
  /** How many distinct windows were looked at (each a different set of tokens). */
  windows: number;
  /** The fewest tokens in a window (a share of few tokens moves in big steps). */
  fewestTokens: number;
  rows: FlowShareRow[];
}

/**
 * Every sliding window [s, s + windowMs) with `from` <= s and s + windowMs <= `to`: a window's
 * tokens change only when its start passes a token's time (the token leaves) or a token's time
 * less the window (it comes in), so the windows starting at those times, and at `from`, are all
 * the distinct ones. For each, every flow's share of its tokens; a flow of `configured` that got
 * none in a window has share 0 there. Windows without tokens are skipped. None when the span is
 * shorter than a window.
 */
export function slidingShares(
  tokens: readonly FlowToken[],
  configured: Readonly<Record<string, number>>,
  { windowMs, from, to }: { windowMs: number; from: number; to: number },
): WindowShares {
  const flows = Object.keys(configured);
  const starts = new Set<number>([from]);
  for (const token of tokens) {
    for (const start of [token.at, token.at - windowMs])
      if (start >= from && start + windowMs <= to) starts.add(start);
  }
  const seen = new Map<string, number[]>(flows.map((flow) => [flow, []]));
  const worst = new Map<string, { miss: number; at: number }>();
  let windows = 0;
  let fewestTokens = Number.POSITIVE_INFINITY;
  const sorted = [...tokens].sort((a, b) => a.at - b.at);
  for (const start of [...starts].sort((a, b) => a - b)) {
    if (start + windowMs > to) continue;
    const inWindow = sorted.filter((token) => token.at >= start && token.at < start + windowMs);
    if (inWindow.length === 0) continue;
    windows++;
    fewestTokens = Math.min(fewestTokens, inWindow.length);
    for (const flow of flows) {
      const share = inWindow.filter((token) => token.flow === flow).length / inWindow.length;
      seen.get(flow)?.push(share);
      const miss = Math.abs(share - (configured[flow] as number));
      if (miss > (worst.get(flow)?.miss ?? -1)) worst.set(flow, { miss, at: start - from });
    }
  }
  return {
    windows,
    fewestTokens: windows === 0 ? 0 : fewestTokens,
    rows: flows.map((flow) => {
      const share = configured[flow] as number;
      const got = seen.get(flow) ?? [];
      const min = got.length === 0 ? Number.NaN : Math.min(...got);
      const max = got.length === 0 ? Number.NaN : Math.max(...got);
      const worstAbsolute = Math.max(share - min, max - share);
      const worstAtMs = worst.get(flow)?.at ?? 0;
      return {
        flow,
        configured: share,
        min,
        max,
        worstAbsolute,
        worstRelative: worstAbsolute / share,
        worstAtMs,
      };
    }),
  };
}

/** Configured shares from weights: each flow's weight over their sum. */
export function sharesOfWeights(weights: Readonly<Record<string, number>>): Record<string, number> {
  const total = Object.values(weights).reduce((sum, weight) => sum + weight, 0);
  return Object.fromEntries(Object.entries(weights).map(([flow, weight]) => [flow, weight / total]));
}
