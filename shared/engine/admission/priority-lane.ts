/**
 * The priority lane: a `high` job's call goes ahead of a key's line at the next token due, instead of
 * at the line's end. The tokens of a saturated key are reserved up to a horizon ahead, each by one
 * waiting job, so there is no free token to give it; it takes the next reserved one instead (a
 * **cut-in**), and that token's holder, when it comes for it, finds it gone and takes a new one at
 * the line's end (one interval later for every job behind: never two calls on one token). The
 * SQLite limiter keeps the lane as rows (`rate_lane`: a reserved token's time, and the job that
 * cut in on it), so a cut-in reaches any process's line.
 */

/** A cut-in is kept this long after its token (its holder may come late, a little). */
export const cutInMemoryMs = 60_000;

/**
 * One token a limiter gave (the SQLite limiter's grant log, `rate_grants`): to whom (`by`, a job id;
 * undefined for a caller that named none), when its call first asked (its first refused ask since
 * its previous token, or the grant's own ask), and the token's time on the key's line (now for a
 * token granted now; later for one reserved, or taken over by a cut-in). `seq` is the order of the
 * key's grants, shared by every process on the database. `refused` (an ask refused, when a token
 * would come) is what logs written before the first ask went into the grant held; none is written now.
 */
export interface TokenGrant {
  seq: number;
  by?: string | undefined;
  askedAt: number;
  tokenAt: number;
  kind: 'granted' | 'reserved' | 'cut-in' | 'refused';
}

/**
 * For each token `by` was given, in grant order: how many tokens of other callers the key's line
 * gave between its call's first ask (the grant's `askedAt`, or a refusal logged since its previous token)
 * and its token (`tokenAt` in [ask, token)), counted on the line, not on the wall clock, so a
 * loaded machine does not change it. A token taken over by a cut-in is its cutter's, not its first
 * holder's (who takes a new one). The priority's bound is one: the token already promised when it
 * asked. A token of another caller due before the ask but spent after it (its holder late) was
 * promised before: not counted.
 */
export function tokensWaited(grants: readonly TokenGrant[], by: string): number[] {
  const waited: number[] = [];
  let firstAsk: number | undefined;
  for (const own of grants) {
    if (own.by !== by) continue;
    firstAsk ??= own.askedAt;
    if (own.kind === 'refused') continue;
    waited.push(tokensGivenBetween(grants, by, firstAsk, own.tokenAt));
    firstAsk = undefined;
  }
  return waited;
}

/**
 * How many tokens of callers other than `by` the key's line gave in [from, to), by their time on
 * the line (a token taken over by a cut-in is its cutter's, as in `tokensWaited`).
 */
export function tokensGivenBetween(
  grants: readonly TokenGrant[],
  by: string,
  from: number,
  to: number,
): number {
  const cut = new Set(grants.filter((grant) => grant.kind === 'cut-in').map((grant) => grant.tokenAt));
  return grants.filter(
    (grant) =>
      grant.by !== by &&
      grant.kind !== 'refused' &&
      (grant.kind === 'cut-in' || !cut.has(grant.tokenAt)) &&
      grant.tokenAt >= from &&
      grant.tokenAt < to,
  ).length;
}
