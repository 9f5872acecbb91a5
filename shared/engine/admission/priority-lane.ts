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
