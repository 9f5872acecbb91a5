/** Which fault rules fire for a call: targeting, kinds per target, `times`, latency adding up. */
import { describe, expect, it } from 'vitest';
import { FaultController } from '../../../shared/sandbox/fault-controller';

const stream = { operationId: 'ai07ChatCcGptStream', stream: true };
const plain = { operationId: 'p001PatentQuerySearchCount', stream: false };
const download = { operationId: 'download', stream: false };

describe('FaultController', () => {
  it('adds up latency rules and lets the first other rule decide', () => {
    const faults = new FaultController([
      { kind: 'latency', minMs: 10, maxMs: 10 },
      { kind: 'latency', minMs: 5, maxMs: 5, operation: 'p001' },
      { kind: 'busy' },
      { kind: 'http-5xx' },
    ]);
    const decision = faults.decide(plain);
    expect(decision.latencyMs).toBe(15);
    expect(decision.outcome?.kind).toBe('busy');
  });

  it('keeps stream-only rules off plain operations and plain rules off downloads', () => {
    const faults = new FaultController([
      { kind: 'stall-stream' },
      { kind: 'stream-variant', streamVariant: 'openai' },
      { kind: 'busy', operation: 'download' },
      { kind: 'truncated', operation: 'download' },
    ]);
    expect(faults.decide(plain)).toEqual({ latencyMs: 0 });
    expect(faults.decide(stream)).toMatchObject({
      outcome: { kind: 'stall-stream' },
      streamVariant: 'openai',
    });
    expect(faults.decide(download).outcome?.kind).toBe('truncated');
  });

  it('targets by operationId or short name, and never `download` with `*`', () => {
    const faults = new FaultController([{ kind: 'busy', operation: 'ai07' }, { kind: 'http-5xx' }]);
    expect(faults.decide(stream).outcome?.kind).toBe('busy');
    expect(faults.decide(plain).outcome?.kind).toBe('http-5xx');
    expect(faults.decide(download).outcome).toBeUndefined();
  });

  it('spends `times` only when a rule decides, and drops spent rules', () => {
    const faults = new FaultController([
      { kind: 'busy', times: 1 },
      { kind: 'throttle-200', times: 2 },
    ]);
    expect([1, 2, 3, 4].map(() => faults.decide(plain).outcome?.kind)).toEqual([
      'busy',
      'throttle-200',
      'throttle-200',
      undefined,
    ]);
    expect(faults.rules()).toEqual([]);
  });

  it('never fires a rule with probability 0, always one with probability 1', () => {
    const faults = new FaultController(
      [
        { kind: 'busy', probability: 0 },
        { kind: 'http-5xx', probability: 1 },
      ],
      3,
    );
    for (let i = 0; i < 20; i++) expect(faults.decide(plain).outcome?.kind).toBe('http-5xx');
  });

  it('refuses invalid rules with the field named', () => {
    const faults = new FaultController();
    expect(() => faults.set([{ kind: 'http-5xx', httpStatus: 404 }])).toThrow(/faults\[0\]\.httpStatus/);
    // @ts-expect-error not a kind
    expect(() => faults.add({ kind: 'gremlins' })).toThrow(/faults\[0\]\.kind/);
    expect(() => faults.add({ kind: 'busy', operation: 'ai99-9' })).toThrow(/faults\[0\]\.operation/);
  });
});
