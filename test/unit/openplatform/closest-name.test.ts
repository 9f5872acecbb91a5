// The "did you mean" of an unknown workflow or command name (shared/openplatform/edit-distance.ts).
import { describe, expect, it } from 'vitest';
import { closestName, didYouMean } from '../../../shared/openplatform/closest-name';
import { workflows as registry } from '../../../shared/workflows';

const workflows = [...registry.keys()].sort();

describe('closestName', () => {
  it.each([
    ['novely', 'novelty-check'],
    ['novelty-chek', 'novelty-check'],
    ['tecnical-disclosure', 'technical-disclosure'],
    ['tecnical', 'technical-disclosure'],
    ['patentcount', 'patent-count'],
    ['find-solutions', 'find-solution'],
    ['Translaton', 'translation'],
  ])('suggests for %s: %s', (typed, meant) => {
    expect(closestName(typed, workflows)).toBe(meant);
  });

  it.each(['nope', 'xyz', 'summarise-everything'])(
    'suggests nothing for %s, which is near no name',
    (typed) => {
      expect(closestName(typed, workflows)).toBeUndefined();
    },
  );

  it('says it in parentheses, or says nothing', () => {
    expect(didYouMean('novely', workflows)).toBe(' (did you mean novelty-check?)');
    expect(didYouMean('nope', workflows)).toBe('');
  });
});
