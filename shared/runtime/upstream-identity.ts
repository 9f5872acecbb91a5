/**
 * Which upstream a call reaches, from the key it carries and the base URL it goes to: what each job
 * records (engine/upstream-identity.ts). Small on purpose: the Lambda functions import it.
 */
import { keyFingerprint } from '../engine/runner';
import type { UpstreamIdentity } from '../engine/upstream-identity';
import { redactUrl } from '../openplatform/redact';
import { SANDBOX_API_KEY } from '../sandbox/constants';

/**
 * The sandbox's well-known key is served only by a sandbox (built-in, or `opflow sandbox`); any
 * other key by the endpoint at `baseUrl`, named with the key's fingerprint (never the key).
 */
export function identifyUpstream(apiKey: string, baseUrl: string): UpstreamIdentity {
  if (apiKey === SANDBOX_API_KEY) return { kind: 'sandbox' };
  return { kind: 'platform', baseUrl: redactUrl(baseUrl), keyFingerprint: keyFingerprint(apiKey) };
}
