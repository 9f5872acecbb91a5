/**
 * Lambda's recursive loop detection, as the local Lambda host models it. On AWS, each invocation
 * runs with an X-Ray trace header whose `Lineage` counts how many times its chain of events has
 * invoked each function; the SDK copies the header onto every message the function sends (the
 * `X-Amzn-Trace-Id` header, SQS's `AWSTraceHeader`), and Lambda stops invoking a function whose
 * count for one chain would exceed 16, unless the function's `RecursiveLoop` is `Allow` (AWS
 * Lambda developer guide, "Use Lambda recursive loop detection to prevent infinite loops").
 *
 * Here the host installs the invoke store the Lambda runtime provides (`globalThis.awslambda`), so
 * the bundled SDK adds the header exactly as on Lambda; an SQS proxy (sqs-trace-proxy.ts) keeps the
 * header of each message, since fauxqs has no AWSTraceHeader; the SQS event source reads it back
 * and refuses to invoke past the limit.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash, randomBytes } from 'node:crypto';

/** Invocations of one function by one chain before Lambda stops it (the documented "about 16"). */
export const RECURSION_LIMIT = 16;

export type RecursiveLoop = 'Allow' | 'Terminate';

const TRACE_ID_KEY = Symbol.for('_AWS_LAMBDA_X_RAY_TRACE_ID');

interface InvokeStoreLike {
  run<T>(context: Record<symbol, unknown>, fn: () => T): T;
}

/**
 * The Lambda runtime's per-invocation store (what @aws/lambda-invoke-store looks for on
 * `globalThis.awslambda`), built on AsyncLocalStorage so that concurrent simulated instances in one
 * process each see their own trace header. Installed once, before any bundle loads.
 */
export function installInvokeStore(): InvokeStoreLike {
  const global = globalThis as { awslambda?: { InvokeStore?: unknown } };
  global.awslambda ??= {};
  const existing = global.awslambda.InvokeStore as InvokeStoreLike | undefined;
  if (existing) return existing;
  const als = new AsyncLocalStorage<Record<symbol, unknown>>();
  const store = {
    getContext: () => als.getStore(),
    hasContext: () => als.getStore() !== undefined,
    get: (key: symbol) => als.getStore()?.[key],
    set: (key: symbol, value: unknown) => {
      const context = als.getStore();
      if (context) context[key] = value;
    },
    run: <T>(context: Record<symbol, unknown>, fn: () => T) => als.run(context, fn),
    getRequestId: () => '-',
    getXRayTraceId: () => als.getStore()?.[TRACE_ID_KEY] as string | undefined,
    getTenantId: () => undefined,
    getTraceparent: () => undefined,
    getTracestate: () => undefined,
    getBaggage: () => undefined,
  };
  global.awslambda.InvokeStore = store;
  return store;
}

/** The 8-hex-digit id Lineage uses for a function. */
export function lineageId(functionName: string): string {
  return createHash('sha256').update(functionName).digest('hex').slice(0, 8);
}

/** How many times the chain of `traceHeader` has invoked the function of `id` (0 for a new chain). */
export function lineageCount(traceHeader: string | undefined, id: string): number {
  const lineage = /(?:^|;)Lineage=([^;]*)/.exec(traceHeader ?? '')?.[1];
  for (const entry of lineage?.split('|') ?? []) {
    const [entryId, count] = entry.split(':');
    if (entryId === id) return Number(count) || 0;
  }
  return 0;
}

/**
 * The header of an invocation of function `id` caused by records with these headers: the chain of
 * the first (its Root), each function's count the highest among them, this function's one more.
 */
export function invocationTraceHeader(recordHeaders: readonly (string | undefined)[], id: string): string {
  const counts = new Map<string, number>();
  let root: string | undefined;
  for (const header of recordHeaders) {
    root ??= /(?:^|;)Root=([^;]*)/.exec(header ?? '')?.[1];
    const lineage = /(?:^|;)Lineage=([^;]*)/.exec(header ?? '')?.[1];
    for (const entry of lineage?.split('|') ?? []) {
      const [entryId, count] = entry.split(':');
      if (entryId) counts.set(entryId, Math.max(counts.get(entryId) ?? 0, Number(count) || 0));
    }
  }
  counts.set(id, (counts.get(id) ?? 0) + 1);
  root ??= `1-${Math.floor(Date.now() / 1000).toString(16)}-${randomBytes(12).toString('hex')}`;
  const lineage = [...counts].map(([entryId, count]) => `${entryId}:${count}`).join('|');
  return `Root=${root};Parent=${randomBytes(8).toString('hex')};Sampled=0;Lineage=${lineage}`;
}

/** Runs one invocation with its trace header, as the Lambda runtime does. */
export function runWithTraceHeader<T>(store: InvokeStoreLike, traceHeader: string, fn: () => T): T {
  return store.run({ [TRACE_ID_KEY]: traceHeader }, fn);
}
