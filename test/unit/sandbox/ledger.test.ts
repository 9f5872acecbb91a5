/** The ledger's filters, counts and duplicate-create accounting. */
import { describe, expect, it } from 'vitest';
import { Ledger, type LedgerEntry } from '../../../shared/sandbox/ledger';

const entry = (patch: Partial<LedgerEntry>): Omit<LedgerEntry, 'seq'> => ({
  time: 0,
  operationId: 'ai35-1NoveltySearchSubmit',
  method: 'POST',
  path: '/ai/novelty-search/submit',
  keyFingerprint: 'k1',
  httpStatus: 200,
  errorCode: 0,
  outcome: 'ok',
  billedUnits: 5,
  correlationId: 'c',
  bodyHash: 'h1',
  created: true,
  ...patch,
});

describe('Ledger', () => {
  it('counts duplicates per key, operation and body, only for creates that happened', () => {
    const ledger = new Ledger();
    ledger.record(entry({}));
    ledger.record(entry({}));
    ledger.record(entry({ created: true, outcome: 'fault', fault: 'reset' })); // created, answer lost
    ledger.record(entry({ created: false, outcome: 'fault', fault: 'busy' })); // never created
    ledger.record(entry({ keyFingerprint: 'k2' }));
    ledger.record(entry({ bodyHash: 'h2' }));
    ledger.record(entry({ operationId: 'ai35-2TechSolutionGet', created: false }));
    ledger.record(entry({ operationId: 'ai35-3TechSolutionUpdate' })); // an update, not a create
    ledger.record(entry({ operationId: 'ai35-3TechSolutionUpdate' }));
    expect(ledger.duplicateCreates()).toBe(2);
    expect(ledger.duplicateCreateGroups()).toEqual([
      { operationId: 'ai35-1NoveltySearchSubmit', keyFingerprint: 'k1', bodyHash: 'h1', count: 3 },
    ]);
  });

  it('filters by operation id or short name, outcome and code, and sums billed units', () => {
    const ledger = new Ledger();
    ledger.record(entry({}));
    ledger.record(entry({ operationId: 'p001PatentQuerySearchCount', billedUnits: 1 }));
    ledger.record(entry({ outcome: 'rejected', errorCode: 68300004, billedUnits: 0 }));
    expect(ledger.count({ operationId: 'ai35-1' })).toBe(2);
    expect(ledger.count({ operationId: 'p001PatentQuerySearchCount' })).toBe(1);
    expect(ledger.count({ outcome: 'rejected', errorCode: 68300004 })).toBe(1);
    expect(ledger.billedUnits()).toBe(6);
    expect(ledger.countByOperation()).toEqual({
      'ai35-1NoveltySearchSubmit': 2,
      p001PatentQuerySearchCount: 1,
    });
    expect(ledger.summary()).toMatchObject({ total: 3, rejected: 1, faults: 0, billedUnits: 6 });
  });

  it('keeps numbering after clear', () => {
    const ledger = new Ledger();
    ledger.record(entry({}));
    ledger.clear();
    expect(ledger.count()).toBe(0);
    expect(ledger.record(entry({})).seq).toBe(2);
  });
});
