import { describe, expect, it } from 'vitest';
import { encyclopediaQa } from '../../../shared/workflows/encyclopedia-qa/workflow';
import { contextFor, decideOf, inputProblems, kept, reportOf, requestOf } from './fixtures';

const QUESTION = 'What are the approved indications of semaglutide?';

const chat = {
  chat_id: 'c1',
  chat_item_id: 'i1',
  ref_doc: [
    {
      index: '1',
      type: 'paper',
      doc_type_detail: 'Journal article',
      text: 'Semaglutide in type 2 diabetes',
      _text_display: 'Semaglutide in type 2 diabetes',
      link: 'https://example.org/papers/1',
      post_time: '2021-06-01',
    },
    { index: '2', type: 'label', text: 'FDA label <b>Wegovy</b>', link: 'javascript:alert(1)' },
  ],
};

const streamed = {
  text: 'Semaglutide is approved for type 2 diabetes.\n\n## Obesity\nIt is also approved for weight management.',
  references: [
    { type: 'paper', text: 'Semaglutide in type 2 diabetes', link: 'https://example.org/papers/1' },
    { type: 'patent', value: 'US10000000B2', text: 'GLP-1 analogue' },
  ],
  tokens: { input: 12, output: 40, total: 52 },
  finishReason: 'stop',
  ids: { chat_id: 'c1' },
  events: 9,
};

describe('encyclopedia-qa', () => {
  it('takes a question with search options, defaults off', () => {
    expect(encyclopediaQa.input.parse({ question: QUESTION })).toEqual({
      question: QUESTION,
      deepSearch: false,
      longThink: false,
      searchWebsite: false,
    });
    expect(inputProblems(encyclopediaQa, { question: QUESTION, dataSource: 'blog' })[0]).toMatch(
      /dataSource: one of all, paper, patent/,
    );
    expect(encyclopediaQa.fromText?.(`# Semaglutide\n${QUESTION}`, 'q.md')).toEqual({
      question: QUESTION,
      title: 'Semaglutide',
    });
  });

  it('creates the chat with the data source as the platform numbers it, and keeps the chat ids', () => {
    const ctx = contextFor(encyclopediaQa, {
      question: QUESTION,
      dataSource: 'clinical-trial',
      deepSearch: true,
    });
    expect(requestOf(encyclopediaQa, 'create-chat', ctx)).toEqual({
      query: QUESTION,
      deep_search: true,
      long_think: false,
      search_website: false,
      data_source: 4,
    });
    expect(decideOf(encyclopediaQa, 'create-chat', chat, ctx)).toEqual({
      type: 'next',
      context: { chatId: 'c1', chatItemId: 'i1' },
    });
    expect(decideOf(encyclopediaQa, 'create-chat', { chat_id: 'c1' }, ctx)).toMatchObject({ type: 'fail' });
  });

  it('streams the answer with the chat ids, and fails on an empty answer', () => {
    const ctx = contextFor(
      encyclopediaQa,
      { question: QUESTION },
      { context: { chatId: 'c1', chatItemId: 'i1' } },
    );
    expect(requestOf(encyclopediaQa, 'answer', ctx)).toEqual({ chat_id: 'c1', chat_item_id: 'i1' });
    expect(decideOf(encyclopediaQa, 'answer', streamed, ctx)).toEqual({ type: 'complete' });
    expect(decideOf(encyclopediaQa, 'answer', { ...streamed, text: ' ' }, ctx)).toMatchObject({
      type: 'fail',
      message: /no answer/,
    });
  });

  it('reports the answer first, then its references as safe links', () => {
    const { title, markdown, summary } = reportOf(
      encyclopediaQa,
      { question: QUESTION },
      {
        outputs: { 'create-chat': kept('ai68-1ChatAiLsChat', chat), answer: streamed },
      },
    );
    expect(title).toBe(`Encyclopedia Q&A: ${QUESTION}`);
    expect(markdown).toContain(
      '## Answer\n\nSemaglutide is approved for type 2 diabetes.\n\n\\## Obesity  \nIt is also',
    );
    expect(markdown).toContain(
      '| 1 | Journal article | [Semaglutide in type 2 diabetes](https://example.org/papers/1) | 2021-06-01 |',
    );
    expect(markdown).toContain('| 2 | label | FDA label \\<b\\>Wegovy\\</b\\> |   |');
    expect(markdown).not.toContain('javascript:');
    expect(summary).toBe(`Answer of ${streamed.text.length} characters with 3 references`);
  });
});
