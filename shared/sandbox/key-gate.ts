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
  /** Clock readings of the calls admitted in the last second (sliding window). */
  recent: number[];
  /** Token bucket: tokens left and when they were counted. Fixed window: the second and its calls. */
  tokens?: number | undefined;
  tokensAt?: number | undefined;
  windowSecond?: number | undefined;
  windowCalls?: number | undefined;
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

  /**
   * Admit one call at `now` under the key's QPS, by the key's limiter (`SandboxKey.limiter`): a
   * sliding one-second window of admitted calls (default), a token bucket of `burst` tokens refilled
   * at `qps` a second, or a count per second of the clock (a fixed window aligned to the second).
   */
  admit(state: KeyState, now: number): void {
    const qps = state.config.qps;
    if (qps === undefined) return;
    if (!admitted(state, qps, now)) {
      const message = `calls exceed the key's limit of ${qps} per second`;
      if (state.config.qpsExceededAs === 'http-429') {
        throw new SandboxRejection(429, PlatformCode.throttled, message, { 'retry-after': '1' });
      }
      throw new SandboxRejection(200, PlatformCode.throttled, message);
    }
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

/** Whether the key's limiter lets one more call through at `now` (and counts it when it does). */
function admitted(state: KeyState, qps: number, now: number): boolean {
  switch (state.config.limiter ?? 'sliding-window') {
    case 'token-bucket': {
      const burst = state.config.burst ?? Math.max(1, qps);
      const elapsed = Math.max(0, now - (state.tokensAt ?? now));
      const tokens = Math.min(burst, (state.tokens ?? burst) + (elapsed / 1000) * qps);
      state.tokensAt = Math.max(state.tokensAt ?? now, now);
      if (tokens < 1) {
        state.tokens = tokens;
        return false;
      }
      state.tokens = tokens - 1;
      return true;
    }
    case 'fixed-window': {
      const second = Math.floor(now / 1000);
      if (state.windowSecond !== second) {
        state.windowSecond = second;
        state.windowCalls = 0;
      }
      if ((state.windowCalls ?? 0) >= qps) return false;
      state.windowCalls = (state.windowCalls ?? 0) + 1;
      return true;
    }
    default:
      state.recent = state.recent.filter((at) => at > now - 1000 && at <= now);
      if (state.recent.length >= qps) return false;
      state.recent.push(now);
      return true;
  }
}
