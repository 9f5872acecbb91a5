import { describe, expect, it } from 'vitest';
import { answerReferences } from '../../../shared/workflows/common/answer-references';

describe('answer references', () => {
  it('merges the chat references with the streamed ones, without repeats', () => {
    const refDoc = [
      {
        index: '1',
        type: 'paper',
        doc_type_detail: 'Journal article',
        _text_display: 'Semaglutide in type 2 diabetes',
        link: 'https://example.org/papers/1',
        post_time: '2021-06-01',
      },
    ];
    const streamed = [
      { type: 'paper', text: 'Semaglutide in type 2 diabetes', link: 'https://example.org/papers/1' },
      { type: 'patent', value: 'US10000000B2', text: 'GLP-1 analogue' },
      { doc_type: 'paper', text_summary: 'A trial', post_date: 20200101, link: 'https://example.org/t' },
      { type: 'website' },
    ];
    expect(answerReferences(refDoc, streamed)).toEqual([
      {
        type: 'Journal article',
        text: 'Semaglutide in type 2 diabetes',
        date: '2021-06-01',
        link: 'https://example.org/papers/1',
      },
      { type: 'patent', text: 'GLP-1 analogue', date: '', link: '' },
      { type: 'paper', text: 'A trial', date: '20200101', link: 'https://example.org/t' },
    ]);
  });
});
