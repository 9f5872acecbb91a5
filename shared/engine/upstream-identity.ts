/**
 * Which upstream served a job: the sandbox (simulated data), or an Open Platform endpoint named by
 * its base URL and the fingerprint of the key used (a short hash, never the key). Kept on the job so
 * that every output can say whether its data is real, and so that an input done on the sandbox is
 * never taken as done on the platform (or on another key or endpoint).
 */
import * as z from 'zod';
import type { JobDeps, StepDeps } from './deps';

/**
 * What naming a tenant's upstream reads: its key and how a key maps to an upstream. A runtime that
 * makes no upstream call (the aws api, schedules and ingest functions) has neither: no upstream.
 */
export type TenantUpstreamDeps = JobDeps & Partial<Pick<StepDeps, 'keys' | 'upstreamOf'>>;

export const upstreamIdentitySchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('sandbox') }),
  z.object({
    kind: z.literal('platform'),
    /** Without credentials (see openplatform/redact.ts). */
    baseUrl: z.string(),
    /** The first 16 hex digits of the key's SHA-256 (the key's rate bucket). */
    keyFingerprint: z.string(),
  }),
]);
export type UpstreamIdentity = z.infer<typeof upstreamIdentitySchema>;

/** One string per distinct upstream: what the skip of done inputs compares. */
export function upstreamKeyOf(identity: UpstreamIdentity): string {
  return identity.kind === 'sandbox' ? 'sandbox' : `platform ${identity.baseUrl} ${identity.keyFingerprint}`;
}

export function sameUpstream(a: UpstreamIdentity | undefined, b: UpstreamIdentity | undefined): boolean {
  return a !== undefined && b !== undefined && upstreamKeyOf(a) === upstreamKeyOf(b);
}

/** For people: "sandbox (simulated data)" or "https://connect.patsnap.com, key 3f2a…". */
export function describeUpstreamIdentity(identity: UpstreamIdentity | undefined): string {
  if (identity === undefined) return 'not recorded';
  if (identity.kind === 'sandbox') return 'sandbox (simulated data, not real publications)';
  return `${identity.baseUrl}, key ${identity.keyFingerprint.slice(0, 8)}`;
}

/** Whether the job's data came from the sandbox (so its outputs must say so). */
export function isSandboxData(job: { upstream?: UpstreamIdentity | undefined }): boolean {
  return job.upstream?.kind === 'sandbox';
}

/**
 * The upstream a new job of this tenant would reach now (its key, then `upstreamOf`); undefined when
 * that cannot be told here (no key, a key store this process may not read, no `upstreamOf`).
 */
export async function upstreamOfTenant(
  deps: TenantUpstreamDeps,
  tenant: string,
): Promise<UpstreamIdentity | undefined> {
  if (!deps.upstreamOf || !deps.keys) return undefined;
  const key = await deps.keys.getKey(tenant).catch(() => undefined);
  return key === undefined ? undefined : deps.upstreamOf(key);
}

const tenantUpstreams = new WeakMap<object, Map<string, Promise<string | undefined>>>();

/**
 * `upstreamOfTenant` as its `upstreamKeyOf`, asked once per tenant for the life of `deps` (bulk
 * ingestion keys every item on it: a key store that cannot be read is not asked again per item).
 */
export function tenantUpstreamKey(deps: TenantUpstreamDeps, tenant: string): Promise<string | undefined> {
  let byTenant = tenantUpstreams.get(deps);
  if (!byTenant) {
    byTenant = new Map();
    tenantUpstreams.set(deps, byTenant);
  }
  let found = byTenant.get(tenant);
  if (!found) {
    found = upstreamOfTenant(deps, tenant).then((identity) => identity && upstreamKeyOf(identity));
    byTenant.set(tenant, found);
  }
  return found;
}
