/**
 * Authentication and per-key limits, the way the platform answers them: a missing key 401/67200008,
 * an unknown key 401/67200202, a key without the operation's group 403/67200004, calls over the
 * key's QPS 67200002 (HTTP 200, or 429 when the key says so), calls past its quota 67200001.
 */
import { createHash } from 'node:crypto';
import type { OperationEntry } from '../openplatform/catalogue';
import { PlatformCode } from './constants';
import type { SandboxKey } from './options';
import { SandboxRejection } from './sandbox-rejection';

/** How the sandbox names a key in its ledger and logs: the first 16 hex digits of its SHA-256. */
export function keyFingerprint(key: string): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 16);
}

export interface KeyState {
  readonly fingerprint: string;
  readonly config: SandboxKey;
  /** Clock readings of the calls admitted in the last second. */
  recent: number[];
  used: number;
}

export class KeyGate {
  private readonly byKey = new Map<string, KeyState>();

  constructor(keys: readonly SandboxKey[]) {
    for (const config of keys) {
      this.byKey.set(config.key, { fingerprint: keyFingerprint(config.key), config, recent: [], used: 0 });
    }
  }

  /** The calling key, from `Authorization: Bearer` (preferred) or the `apikey` query parameter. */
  identify(authorization: string | undefined, queryKey: string | null): KeyState {
    const bearer = authorization?.match(/^\s*Bearer\s+(\S+)\s*$/i)?.[1];
    const key = bearer ?? (queryKey || undefined);
    if (!key) {
      throw new SandboxRejection(
        401,
        PlatformCode.missingKey,
        'apikey not pass: send Authorization: Bearer <key> or apikey=<key>',
      );
    }
    const state = this.byKey.get(key);
    if (!state)
      throw new SandboxRejection(401, PlatformCode.unknownKey, 'apikey auth error: the key is not known');
    return state;
  }

  /** Throw unless the key may call the operation's group. */
  checkGroup(state: KeyState, operation: Pick<OperationEntry, 'group' | 'ref'>): void {
    const groups = state.config.groups;
    if (groups && !groups.includes(operation.group)) {
      throw new SandboxRejection(
        403,
        PlatformCode.forbidden,
        `no permission: the key may not call group '${operation.group}' (${operation.ref})`,
      );
    }
  }

  /** Admit one call at `now` under the key's QPS (sliding one-second window of admitted calls). */
  admit(state: KeyState, now: number): void {
    const qps = state.config.qps;
    if (qps === undefined) return;
    state.recent = state.recent.filter((at) => at > now - 1000 && at <= now);
    if (state.recent.length >= qps) {
      const message = `calls exceed the key's limit of ${qps} per second`;
      if (state.config.qpsExceededAs === 'http-429') {
        throw new SandboxRejection(429, PlatformCode.throttled, message, { 'retry-after': '1' });
      }
      throw new SandboxRejection(200, PlatformCode.throttled, message);
    }
    state.recent.push(now);
  }

  /**
   * Calls counted so far by each key that has a quota, by fingerprint (what a state file keeps; keys
   * without a quota are never refused for their count, so theirs is not worth keeping).
   */
  quotaUsed(): Record<string, number> {
    const used: Record<string, number> = {};
    for (const state of this.byKey.values()) {
      if (state.config.quota !== undefined) used[state.fingerprint] = state.used;
    }
    return used;
  }

  /** Take back counts kept by `quotaUsed` (by fingerprint; fingerprints of keys not accepted now are ignored). */
  restoreQuotaUsed(used: Readonly<Record<string, number>>): void {
    for (const state of this.byKey.values()) {
      const count = used[state.fingerprint];
      if (count !== undefined) state.used = count;
    }
  }

  /** Count one call against the key's quota. */
  charge(state: KeyState): void {
    const quota = state.config.quota;
    if (quota !== undefined && state.used >= quota) {
      throw new SandboxRejection(
        200,
        PlatformCode.quotaExhausted,
        `the account's call quota of ${quota} is exhausted`,
      );
    }
    state.used += 1;
  }
}
