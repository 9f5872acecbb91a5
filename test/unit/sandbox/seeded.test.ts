/** Stable hashing and the seeded generator behind the sandbox's deterministic content. */
import { describe, expect, it } from 'vitest';
import { hash32, SeededRandom, stableJson } from '../../../shared/sandbox/seeded';

describe('stableJson', () => {
  it('sorts keys at every depth and drops undefined fields', () => {
    expect(stableJson({ b: 1, a: { d: [2, { f: 1, e: 0 }], c: undefined } })).toBe(
      '{"a":{"d":[2,{"e":0,"f":1}]},"b":1}',
    );
    expect(stableJson({ x: 1, y: 2 })).toBe(stableJson({ y: 2, x: 1 }));
  });
});

describe('SeededRandom', () => {
  it('repeats its sequence for the same seed and differs for another', () => {
    const a = new SeededRandom(42);
    const b = new SeededRandom(42);
    const sequenceA = [a.next(), a.next(), a.next()];
    expect([b.next(), b.next(), b.next()]).toEqual(sequenceA);
    expect(new SeededRandom(43).next()).not.toBe(sequenceA[0]);
  });

  it('draws within bounds and samples distinct items', () => {
    const random = SeededRandom.from('bounds');
    for (let i = 0; i < 200; i++) {
      const value = random.int(3, 5);
      expect(value).toBeGreaterThanOrEqual(3);
      expect(value).toBeLessThanOrEqual(5);
    }
    const sample = random.sample(['a', 'b', 'c', 'd'], 3);
    expect(new Set(sample).size).toBe(3);
    expect(random.sample(['a'], 3)).toEqual(['a']);
    expect(() => random.pick([])).toThrow();
  });

  it('makes UUID-shaped ids and hex strings', () => {
    const random = SeededRandom.from(1, 'ids');
    expect(random.uuid()).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(random.hex(32)).toMatch(/^[0-9a-f]{32}$/);
    expect(random.digits(9)).toMatch(/^[1-9]\d{8}$/);
  });

  it('hashes parts, not their concatenation', () => {
    expect(hash32('ab', 'c')).not.toBe(hash32('a', 'bc'));
    expect(hash32('ab', 'c')).toBe(hash32('ab', 'c'));
  });
});
