/** Text derived from the caller's input: sentences, keywords, titles, stream pieces. */
import { describe, expect, it } from 'vitest';
import { SeededRandom } from '../../../shared/sandbox/seeded';
import {
  answerText,
  keywordsOf,
  sentencesOf,
  streamPieces,
  titleOf,
} from '../../../shared/sandbox/text-content';

describe('sentencesOf', () => {
  it('splits on end punctuation, in English and Chinese, without markers', () => {
    expect(sentencesOf('A phone. It has a camera! Does it read text? [sandbox:fail]')).toEqual([
      'A phone.',
      'It has a camera!',
      'Does it read text?',
    ]);
    expect(sentencesOf('具有图像识别能力的电话机。包括摄像装置。')).toEqual([
      '具有图像识别能力的电话机。',
      '包括摄像装置。',
    ]);
  });

  it('splits a single sentence on commas, and never answers nothing', () => {
    expect(sentencesOf('a camera, a display, a processor')).toEqual(['a camera', 'a display', 'a processor']);
    expect(sentencesOf('   ')).toHaveLength(1);
  });
});

describe('keywordsOf and titleOf', () => {
  it('keeps distinct words of four letters or more, skipping stop words', () => {
    expect(keywordsOf('The camera reads the text; the camera is small and fast.')).toEqual([
      'camera',
      'reads',
      'text',
      'small',
      'fast',
    ]);
    expect(keywordsOf('电话机')).toEqual(['电话']);
  });

  it('cuts long titles on a word boundary', () => {
    expect(titleOf('Short title. Second sentence.')).toBe('Short title');
    const long = titleOf(`${'word '.repeat(40)}end.`, 30);
    expect(long.length).toBeLessThanOrEqual(31);
    expect(long.endsWith('…')).toBe(true);
  });
});

describe('answers and stream pieces', () => {
  it('answers the same question the same way', () => {
    const a = answerText('How to extend battery life?', SeededRandom.from(1, 'q'));
    expect(answerText('How to extend battery life?', SeededRandom.from(1, 'q'))).toBe(a);
    expect(a).toContain('battery');
  });

  it('splits text into pieces that join back exactly', () => {
    const text = 'One two three four five six seven.';
    expect(streamPieces(text, 3)).toEqual(['One two three ', 'four five six ', 'seven.']);
    expect(streamPieces(text).join('')).toBe(text);
  });
});
