import { describe, expect, it } from 'vitest';
import {
  chosenRecommendations,
  recommendationOptions,
} from '../../../shared/workflows/common/recommendations';

describe('recommendations', () => {
  it('offers each as r1, r2... unmarked, and echoes the chosen ones back unchanged', () => {
    const recommend = ['Cost increase of at most 15%', { title: 'An object recommendation' }, ''];
    expect(recommendationOptions(recommend)).toEqual([
      { id: 'r1', label: 'Cost increase of at most 15%', preselected: false },
      { id: 'r2', label: 'An object recommendation', preselected: false },
      { id: 'r3', label: 'recommendation 3', preselected: false },
    ]);
    expect(chosenRecommendations(recommend, new Set(['r2', 'r9']))).toEqual([
      { title: 'An object recommendation' },
    ]);
  });
});
