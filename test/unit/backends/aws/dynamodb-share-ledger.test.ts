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
  ledgerCuttable,
  ledgerOrder,
  ledgerRefunded,
  maxFlows,
  tenantsWithWork,
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

  it("lets a tenant or batch behind its share take a leading one's tokens, and none of an even one", () => {
    let ledger = emptyLedger();
    const acme = { tenant: 'acme', batchId: 'b1' };
    // acme (weight 2) reserved the line's first 10 tokens before anyone else asked.
    for (let i = 0; i < 10; i++)
      ledger = ledgerCharged(ledgerAsks(ledger, acme, T0).ledger, acme, weights, T0, T0 + 200 * (i + 1));
    // beta asks: level with the service so far (none of acme's tokens has come), 5 behind acme.
    const beta = { tenant: 'beta', jobId: 'j-beta' };
    const asked = ledgerAsks(ledger, beta, T0);
    expect(asked.standing).toBe('behind');
    const takes = ledgerCuttable(asked.ledger, beta, weights);
    expect(takes?.(T0 + 400)).toBe(true);
    expect(takes?.(T0 + 300)).toBe(false);
    // acme itself takes none of its own; another batch of acme, 10 behind b1, takes b1's.
    expect(ledgerCuttable(asked.ledger, acme, weights)).toBeUndefined();
    const b2 = { tenant: 'acme', batchId: 'b2' };
    expect(ledgerCuttable(ledgerAsks(asked.ledger, b2, T0).ledger, b2, weights)?.(T0 + 400)).toBe(true);
    // Each cut gives acme its token back and charges beta, until beta is within a token of each
    // (1/2 + 1/1 of virtual time) of acme: 7 and 3 of the 10 tokens, for weights 2 and 1.
    let state = asked.ledger;
    let cuts = 0;
    for (let i = 10; i >= 1; i--) {
      const at = T0 + 200 * i;
      if (!ledgerCuttable(state, beta, weights)?.(at)) break;
      state = ledgerCharged(ledgerRefunded(state, weights, at), beta, weights, T0, at);
      cuts++;
    }
    expect(cuts).toBe(3);
    const gap = state.flows['t:acme']!.virtual - state.flows['t:beta']!.virtual;
    expect(gap).toBeGreaterThanOrEqual(0);
    expect(gap).toBeLessThanOrEqual(1.5);
    expect(ledgerCuttable(state, beta, weights)).toBeUndefined();
  });

  it('orders calls by what their tenants are owed, and counts the tenants with work', () => {
    let ledger = emptyLedger();
    const acme = { tenant: 'acme', batchId: 'b1' };
    const beta = { tenant: 'beta' };
    ledger = ledgerAsks(ledger, beta, T0).ledger;
    expect(tenantsWithWork(ledger, T0)).toBe(1);
    // acme (weight 2) charged 6 tokens: 3 ahead of beta.
    for (let i = 0; i < 6; i++)
      ledger = ledgerCharged(ledgerAsks(ledger, acme, T0).ledger, acme, weights, T0, T0 + 200 * (i + 1));
    expect(tenantsWithWork(ledger, T0)).toBe(2);
    // Stored and read back (as the limiter reads it): beta's three calls first, then acme's.
    const stored = decodeLedger(
      encodeLedger(ledger, [...ledger.owners.keys()], T0),
      [...ledger.owners.keys()],
      weights,
      T0,
    );
    expect(ledgerOrder(stored, weights, ['acme', 'beta', 'acme', 'beta', 'beta', 'beta'])).toEqual([
      1, 3, 4, 0, 5, 2,
    ]);
    // A flow with work is one that asked within 45 s.
    expect(tenantsWithWork(ledger, T0 + 46_000)).toBe(0);
  });
});
