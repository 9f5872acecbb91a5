/**
 * The ledger: one entry per call the sandbox answered (operations and downloads), for tests and
 * benchmarks to read. Keys appear only as fingerprints (first 16 hex digits of their SHA-256), never
 * raw. `duplicateCreates()` says how many tasks were created twice from the same input.
 */
import { findOperation } from '../openplatform/catalogue';
import type { FaultKind } from './fault-rules';

/**
 * `ok`; `rejected` (an error answer of the key, limit, validation or operation checks); `fault` (an
 * injected fault decided the answer); `abandoned` (the caller went away before its request had
 * arrived whole; it still counted against the key's QPS and quota).
 */
export type CallOutcome = 'ok' | 'rejected' | 'fault' | 'abandoned';

export interface LedgerEntry {
  /** 1, 2, 3, ... in the order calls were answered (or abandoned). */
  seq: number;
  /** The sandbox clock when the call arrived. */
  time: number;
  /** A catalogue operationId, `download` for `/files/...`, or `unknown` for a path it does not serve. */
  operationId: string;
  method: string;
  /** The path without query string (so never an `apikey=`). */
  path: string;
  keyFingerprint?: string;
  httpStatus: number;
  /** The envelope's `error_code`: 0 on success, also 0 when there was no envelope. */
  errorCode: number;
  outcome: CallOutcome;
  /** The injected fault, when one decided the answer. */
  fault?: FaultKind;
  /** What `x-openapi-amount` said (0 when not billed). */
  billedUnits: number;
  correlationId: string;
  /** SHA-256 of the body with sorted keys (operations only). */
  bodyHash?: string;
  /** The request body as parsed (operations only, with the sandbox's `ledgerBodies` option). */
  body?: unknown;
  /** The call created something upstream (a create operation whose work was done, even if its answer was then lost). */
  created: boolean;
  /**
   * The operation's work was done (its handler ran and kept what it did), whatever then became of
   * the answer; absent when it was not. For a create it is `created`; it also marks done updates
   * (a confirmation, an agent search started), which a caller pays for again when it repeats them.
   */
  workDone?: true;
  /** What it created or touched, when known (task id, job id, ...). */
  resourceId?: string;
  /**
   * The asynchronous work this call started upstream (operations only, when it started any): the
   * operation it counts as started by and the duration drawn for it (sandbox clock), so a benchmark
   * can tell a job's own task times from the configured mean.
   */
  startedWork?: StartedWork[];
}

/** One piece of asynchronous work a call started (see `LedgerEntry.startedWork`). */
export interface StartedWork {
  startedBy: string;
  durationMs: number;
  /**
   * What the work's duration was drawn for: the resource it belongs to (a task id, or a task id
   * with `:` and a count for a repeated export), so a benchmark can tell one job's tasks from another's.
   */
  salt?: string;
}

export interface LedgerFilter {
  /** An operationId or its short name (`ai35-1`). */
  operationId?: string;
  outcome?: CallOutcome;
  httpStatus?: number;
  errorCode?: number;
  keyFingerprint?: string;
  fault?: FaultKind;
  created?: boolean;
}

export interface DuplicateCreateGroup {
  operationId: string;
  keyFingerprint: string;
  bodyHash: string;
  count: number;
}

export class Ledger {
  private readonly list: LedgerEntry[] = [];
  private nextSeq = 1;

  /** @internal The sandbox records calls; readers use the other methods. */
  record(entry: Omit<LedgerEntry, 'seq'>): LedgerEntry {
    const recorded = { seq: this.nextSeq++, ...entry };
    this.list.push(recorded);
    return recorded;
  }

  /** Entries matching the filter (all by default), oldest first. */
  entries(filter: LedgerFilter = {}): LedgerEntry[] {
    const operationId = filter.operationId
      ? (findOperation(filter.operationId)?.operationId ?? filter.operationId)
      : undefined;
    return this.list.filter(
      (entry) =>
        (operationId === undefined || entry.operationId === operationId) &&
        (filter.outcome === undefined || entry.outcome === filter.outcome) &&
        (filter.httpStatus === undefined || entry.httpStatus === filter.httpStatus) &&
        (filter.errorCode === undefined || entry.errorCode === filter.errorCode) &&
        (filter.keyFingerprint === undefined || entry.keyFingerprint === filter.keyFingerprint) &&
        (filter.fault === undefined || entry.fault === filter.fault) &&
        (filter.created === undefined || entry.created === filter.created),
    );
  }

  /** How many entries match the filter. */
  count(filter: LedgerFilter = {}): number {
    return this.entries(filter).length;
  }

  /** Entry counts per operationId. */
  countByOperation(filter: LedgerFilter = {}): Record<string, number> {
    const counts: Record<string, number> = {};
    for (const entry of this.entries(filter))
      counts[entry.operationId] = (counts[entry.operationId] ?? 0) + 1;
    return counts;
  }

  /** Units billed in total (or for the filter). */
  billedUnits(filter: LedgerFilter = {}): number {
    return this.entries(filter).reduce((sum, entry) => sum + entry.billedUnits, 0);
  }

  /** Groups of creates with the same key, operation and body that happened more than once. */
  duplicateCreateGroups(): DuplicateCreateGroup[] {
    const groups = new Map<string, DuplicateCreateGroup>();
    for (const entry of this.list) {
      const operation = findOperation(entry.operationId);
      if (!entry.created || operation?.effect !== 'create' || !entry.bodyHash) continue;
      const keyFingerprint = entry.keyFingerprint ?? '';
      const id = `${entry.operationId}\u0000${keyFingerprint}\u0000${entry.bodyHash}`;
      const group = groups.get(id) ?? {
        operationId: entry.operationId,
        keyFingerprint,
        bodyHash: entry.bodyHash,
        count: 0,
      };
      group.count += 1;
      groups.set(id, group);
    }
    return [...groups.values()].filter((group) => group.count > 1);
  }

  /** How many tasks were created again from an input already used (same key, operation and body). */
  duplicateCreates(): number {
    return this.duplicateCreateGroups().reduce((sum, group) => sum + group.count - 1, 0);
  }

  /** Forget every entry (benchmarks reset between runs); `seq` keeps counting. */
  clear(): void {
    this.list.length = 0;
  }

  /** A summary for the admin endpoint and reports. */
  summary() {
    return {
      total: this.list.length,
      byOperation: this.countByOperation(),
      billedUnits: this.billedUnits(),
      duplicateCreates: this.duplicateCreates(),
      faults: this.list.filter((entry) => entry.outcome === 'fault').length,
      rejected: this.list.filter((entry) => entry.outcome === 'rejected').length,
    };
  }
}
