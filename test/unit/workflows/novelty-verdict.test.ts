/**
 * The novelty verdict when every compared feature is found but in no one document: "in
 * combination" only of two documents or more that together cover them, none background (A) and
 * one at least rated Y; with no Y reference, or a feature only a close variant in the closest
 * document, the verdict says where each feature is and why no combination is established.
 */
import { describe, expect, it } from 'vitest';
import { analyseNovelty, type Reference } from '../../../shared/workflows/novelty-check/analysis';

const features = [
  { feature_text: 'a ceramic separator' },
  { feature_text: 'a woven glass-fibre mesh' },
  { feature_text: 'embedded during tape casting' },
];
const all = new Set(['f1', 'f2', 'f3']);

/** A reference of the agent search: its category, and the platform's judgement per feature. */
function reference(
  id: string,
  category: 'X' | 'Y' | 'A',
  types: Record<string, 'public' | 'obvious' | 'unpublic'>,
): Reference {
  return {
    patent_id: id,
    comparative_literature_type: category,
    public_score: 0.7,
    features: Object.entries(types).map(([text, type]) => ({ tech_feature: text, type, score: 70 })),
  } as Reference;
}

describe('the novelty verdict "in combination"', () => {
  it('is said of an X and a Y document that together disclose every feature', () => {
    const { conclusion } = analyseNovelty(features, all, [
      reference('CN1A', 'X', { 'a ceramic separator': 'public', 'a woven glass-fibre mesh': 'public' }),
      reference('CN2A', 'Y', { 'embedded during tape casting': 'public' }),
    ]);
    expect(conclusion.verdict).toBe(
      'Not anticipated by a single document, but every compared feature is found in combination (D1 + D2): inventive step is in question.',
    );
  });

  it('is not said when no reference is rated Y: the verdict says where each feature is', () => {
    const { conclusion, references } = analyseNovelty(features, all, [
      reference('CN1A', 'X', {
        'a ceramic separator': 'public',
        'a woven glass-fibre mesh': 'public',
        'embedded during tape casting': 'obvious',
      }),
      reference('CN2A', 'A', { 'embedded during tape casting': 'obvious' }),
    ]);
    expect(references.filter((cited) => cited.category === 'Y')).toHaveLength(0);
    expect(conclusion.verdict).not.toMatch(/in combination \(/);
    expect(conclusion.verdict).toBe(
      'Not anticipated by a single document: D1 discloses f1, f2; f3 only as a close variant in D1 (X), D2 (A). No combination of documents is established: no reference is rated Y (relevant in combination with another document).',
    );
  });

  it('is not said of two X documents either', () => {
    const { conclusion } = analyseNovelty(features, all, [
      reference('CN1A', 'X', { 'a ceramic separator': 'public', 'a woven glass-fibre mesh': 'public' }),
      reference('CN2A', 'X', { 'embedded during tape casting': 'public', 'a ceramic separator': 'public' }),
    ]);
    expect(conclusion.verdict).toBe(
      'Not anticipated by a single document: D1 discloses f1, f2; f3 only in D2 (X). No combination of documents is established: no reference is rated Y (relevant in combination with another document).',
    );
  });

  it('is not said when a Y exists but only a background document holds the last feature', () => {
    const { conclusion } = analyseNovelty(features, all, [
      reference('CN1A', 'X', { 'a ceramic separator': 'public' }),
      reference('CN2A', 'Y', { 'a woven glass-fibre mesh': 'obvious' }),
      reference('CN3A', 'A', { 'embedded during tape casting': 'public' }),
    ]);
    expect(conclusion.verdict).toBe(
      'Not anticipated by a single document: D1 discloses f1; f2 only as a close variant in D2 (Y); f3 only in D3 (A). No combination of documents is established: the documents rated X or Y do not together disclose f3.',
    );
  });
});
