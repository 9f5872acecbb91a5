// The fair-share ledger of a key's DynamoDB bucket item: stored compactly beside the lane, each
// flow's tokens ahead read back from the lane's owners, unreadable text an empty ledger.
import { describe, expect, it } from 'vitest';
import {
  askWorthWriting,
  decodeLedger,
  emptyLedger,
  encodeLedger,
  ledgerAsks,
  ledgerCharged,
  ledgerRefunded,
  maxFlows,
} from '../../../../shared/backends/aws/dynamodb-share-ledger';
import { servedBy } from '../../../../shared/engine/admission/fair-share';

const T0 = 1_750_000_000_000;
const weights = { tenants: { acme: 2 } };

describe('the share ledger of a bucket item', () => {
  it('round-trips flows and owners, and reads each flow its tokens ahead from the lane', () => {
    let ledger = emptyLedger();
    const lane: number[] = [];
    for (let i = 0; i < 6; i++) {
      const at = T0 + 200 * (i + 1);
      const claim = i < 4 ? { tenant: 'acme', batchId: 'b1' } : { tenant: 'beta' };
      ledger = ledgerAsks(ledger, claim, T0).ledger;
      ledger = ledgerCharged(ledger, claim, weights, T0, at);
      lane.push(at);
    }
    const stored = encodeLedger(ledger, lane, T0) as string;
    // Owners run-length coded: four of one flow, two of another.
    expect(JSON.parse(stored).o).toMatch(/^\d\*4,\d\*2$/);
    // Read back 500 ms later: the first two tokens (acme's) have come, the rest are ahead.
    const read = decodeLedger(stored, lane, weights, T0 + 500);
    expect(read.flows['t:acme']?.virtual).toBeCloseTo(2);
    expect(read.flows['b:acme:b1']?.virtual).toBe(4);
    expect(read.flows['t:beta']?.virtual).toBe(2);
    expect(servedBy(read.flows['t:acme']!, T0 + 500)).toBeCloseTo(1);
    expect(servedBy(read.flows['b:acme:b1']!, T0 + 500)).toBe(2);
    expect(servedBy(read.flows['t:beta']!, T0 + 500)).toBe(0);
    expect(read.owners.get(T0 + 1_200)).toBe('b:beta:');
  });

  it('is empty for what does not parse, and forgets idle flows and those past its size', () => {
    for (const stored of ['{', '{"f":[["t:x","one","0"]]}', 42, undefined])
      expect(decodeLedger(stored, [], weights, T0)).toEqual(emptyLedger());
    let ledger = emptyLedger();
    for (let i = 0; i < maxFlows + 10; i++) ledger = ledgerAsks(ledger, { tenant: `t${i}` }, T0 + i).ledger;
    ledger = ledgerAsks(ledger, { tenant: 'old' }, T0 - 11 * 60_000).ledger;
    const read = decodeLedger(encodeLedger(ledger, [], T0 + 100), [], weights, T0 + 100);
    expect(Object.keys(read.flows)).toHaveLength(maxFlows);
    expect(read.flows['t:old']).toBeUndefined();
    // The most recently asked are kept.
    expect(read.flows[`t:t${maxFlows + 9}`]).toBeDefined();
  });

  it('gives a cut token back to its holder, and writes an ask only now and then', () => {
    const claim = { tenant: 'acme', batchId: 'b1' };
    let ledger = ledgerCharged(ledgerAsks(emptyLedger(), claim, T0).ledger, claim, weights, T0, T0 + 400);
    ledger = ledgerRefunded(ledger, weights, T0 + 400);
    expect(ledger.flows['t:acme']?.virtual).toBe(0);
    expect(ledger.flows['b:acme:b1']?.virtual).toBe(0);
    expect(ledger.owners.size).toBe(0);
    expect(askWorthWriting(ledger, claim, T0 + 1_000)).toBe(false);
    expect(askWorthWriting(ledger, claim, T0 + 10_000)).toBe(true);
    expect(askWorthWriting(ledger, { tenant: 'new' }, T0)).toBe(true);
  });
});
