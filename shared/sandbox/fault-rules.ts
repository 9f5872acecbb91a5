/**
 * Fault rules: what can be injected, validated with zod (options, FaultController, admin endpoint).
 *
 * Every rule may name an `operation` (an operationId, a short name such as `ai35-8`, `*` for every
 * operation, or `download` for the `/files/...` links; default `*`), a `probability` (0..1, drawn
 * from the seeded generator; default 1) and `times` (applied at most that many times, then dropped;
 * default unlimited).
 */
import * as z from 'zod';
import { formatIssues } from '../errors/zod-issues';
import { findOperation } from '../openplatform/catalogue';
import { findCatalogueOperation } from '../openplatform/operations';
import { streamVariants } from './operations/contract';

const common = {
  operation: z
    .string()
    .refine(
      (value) =>
        value === '*' ||
        value === 'download' ||
        findOperation(value) !== undefined ||
        findCatalogueOperation(value) !== undefined,
      { message: 'must be an operationId, a short name such as ai35-8, "*" or "download"' },
    )
    .optional(),
  probability: z.number().min(0).max(1).optional(),
  times: z.number().int().positive().optional(),
};

const afterChunks = z.number().int().nonnegative().optional();

export const faultRuleSchema = z.discriminatedUnion('kind', [
  /** Wait a uniform random time in [minMs, maxMs] (wall clock) before answering. Adds up with other faults. */
  z.strictObject({
    kind: z.literal('latency'),
    minMs: z.number().nonnegative().optional(),
    maxMs: z.number().nonnegative(),
    ...common,
  }),
  /** HTTP 429 with `Retry-After` (seconds, default 1) and the 67200002 envelope. */
  z.strictObject({
    kind: z.literal('throttle-429'),
    retryAfterSeconds: z.number().int().nonnegative().optional(),
    ...common,
  }),
  /** HTTP 200 with the 67200002 envelope (the platform's usual QPS answer). */
  z.strictObject({ kind: z.literal('throttle-200'), ...common }),
  /** HTTP 200 with 68300008 ("service busy, try again later"). */
  z.strictObject({ kind: z.literal('busy'), ...common }),
  /** An HTTP 5xx (default 503) with a gateway's HTML body. */
  z.strictObject({
    kind: z.literal('http-5xx'),
    httpStatus: z.number().int().min(500).max(599).optional(),
    ...common,
  }),
  /** Reset the connection: `before` the work is done (default) or `after` it (the task exists, the answer is lost). */
  z.strictObject({ kind: z.literal('reset'), when: z.enum(['before', 'after']).optional(), ...common }),
  /** After the work: announce the full Content-Length, send part of the body, close. Streams: cut a frame. */
  z.strictObject({ kind: z.literal('truncated'), afterChunks, ...common }),
  /** After the work: HTTP 200 with a body that is not JSON. Streams: a frame that is not JSON. */
  z.strictObject({ kind: z.literal('malformed'), afterChunks, ...common }),
  /** Streams: stop sending after `afterChunks` frames (default 2) and never end. */
  z.strictObject({ kind: z.literal('stall-stream'), afterChunks, ...common }),
  /** Streams: end the response after `afterChunks` frames (default 2), without a finish frame. */
  z.strictObject({ kind: z.literal('early-end-stream'), afterChunks, ...common }),
  /** Streams: encode frames this way (see faults-and-ledger.md, "Event streams"). */
  z.strictObject({ kind: z.literal('stream-variant'), streamVariant: z.enum(streamVariants), ...common }),
]);

export type FaultRule = z.input<typeof faultRuleSchema>;
export type FaultKind = FaultRule['kind'];

/** Kinds that only make sense on a stream. */
export const streamOnlyKinds: ReadonlySet<FaultKind> = new Set([
  'stall-stream',
  'early-end-stream',
  'stream-variant',
]);
/** Kinds that apply to `download`. */
export const downloadKinds: ReadonlySet<FaultKind> = new Set([
  'latency',
  'throttle-429',
  'http-5xx',
  'reset',
  'truncated',
]);

/** Parse rules, with an error that names the rule and field. */
export function parseFaultRules(rules: unknown): FaultRule[] {
  const parsed = z.array(faultRuleSchema).safeParse(rules);
  if (!parsed.success) {
    throw new Error(`invalid fault rules: ${formatIssues(parsed.error, { root: 'faults' })}`);
  }
  return parsed.data;
}
