import { describe, expect, it } from 'vitest';
import { findOperation, isOperationId, similarOperationNames } from '../../../shared/openplatform';

describe('findOperation', () => {
  it('finds an operation by id and by short name, and nothing else', () => {
    expect(findOperation('ai35-1')?.operationId).toBe('ai35-1NoveltySearchSubmit');
    expect(findOperation('p001PatentQuerySearchCount')?.ref).toBe('p001');
    expect(findOperation('ai99')).toBeUndefined();
    expect(isOperationId('toString')).toBe(false);
  });
});

describe('similarOperationNames', () => {
  it.each([
    ['ai35-13', ['ai35-1', 'ai35-12']],
    ['ai33-1step1v3', ['ai33-1Step1V3']],
    ['p01', ['p001']],
    ['NoveltySearchSubmit', ['ai35-1NoveltySearchSubmit']],
    ['weather', []],
  ])('suggests for %j', (name, expected) => {
    const suggestions = similarOperationNames(name);
    for (const item of expected) expect(suggestions).toContain(item);
    if (expected.length === 0) expect(suggestions).toEqual([]);
  });

  it('gives at most the asked number of suggestions', () => {
    expect(similarOperationNames('ai35-', 3)).toHaveLength(3);
  });
});
