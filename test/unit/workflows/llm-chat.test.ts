import { describe, expect, it } from 'vitest';
import { llmChat } from '../../../shared/workflows/llm-chat/workflow';
import {
  contextFor,
  decideOf,
  inputProblems,
  rawRequestOf,
  reportOf,
  requestOf,
  stepNamed,
} from './fixtures';

const answer = {
  text: 'Sodium-ion cells trade energy density for cost.',
  references: [{ type: 'patent', value: 'CN115000000A', text: 'Sodium-ion cathode' }],
  tokens: { input: 10, output: 30, total: 40 },
  finishReason: 'finished',
  ids: {},
  events: 5,
};

describe('llm-chat input', () => {
  it('asks ai50 by default; query and prompt name the same question', () => {
    expect(llmChat.input.parse({ query: 'Why sodium?' })).toEqual({ model: 'ai50', query: 'Why sodium?' });
    expect(llmChat.input.parse({ model: 'ai07', prompt: 'Hi' })).toEqual({ model: 'ai07', prompt: 'Hi' });
    expect(llmChat.fromText?.('# Sodium\nWhy sodium?', 'q.md')).toEqual({
      query: 'Why sodium?',
      title: 'Sodium',
    });
  });

  it('holds each model to its limit and says which', () => {
    expect(inputProblems(llmChat, { model: 'ai07', prompt: 'x'.repeat(501) })).toEqual([
      'prompt: prompt: ai07 takes at most 500 characters, this question has 501',
    ]);
    expect(inputProblems(llmChat, { model: 'ai20', query: 'x'.repeat(16_001) })).toEqual([
      'query: query: ai20 takes at most 16,000 characters, this question has 16,001',
    ]);
    expect(inputProblems(llmChat, { query: 'x'.repeat(30_000) })).toEqual([]);
    expect(inputProblems(llmChat, { model: 'gpt' })[0]).toMatch(/model: one of ai07, ai50, ai20/);
    expect(inputProblems(llmChat, {})).toEqual([
      'query: query: the question is required (or give it as prompt)',
    ]);
    expect(inputProblems(llmChat, { query: 'a', prompt: 'b' })).toEqual([
      'prompt: give the question once, as query or as prompt, not both',
    ]);
    expect(inputProblems(llmChat, { query: 'a', sessionId: 's1' })).toEqual([
      'sessionId: sessionId: only ai20 continues sessions, not ai50',
    ]);
  });
});

describe('llm-chat steps', () => {
  it("starts each job at its model's step", () => {
    expect(llmChat.start!(llmChat.input.parse({ query: 'q' }))).toBe('answer-ai50');
    expect(llmChat.start!(llmChat.input.parse({ model: 'ai07', prompt: 'q' }))).toBe('answer-ai07');
    expect(llmChat.start!(llmChat.input.parse({ model: 'ai20', query: 'q' }))).toBe('answer-ai20');
  });

  it('sends each model its own body', () => {
    expect(requestOf(llmChat, 'answer-ai50', contextFor(llmChat, { query: 'Why sodium?' }))).toEqual({
      query: 'Why sodium?',
      stream: true,
    });
    expect(requestOf(llmChat, 'answer-ai07', contextFor(llmChat, { model: 'ai07', query: 'Hi' }))).toEqual({
      prompt: 'Hi',
      stream: true,
    });
    expect(
      requestOf(
        llmChat,
        'answer-ai20',
        contextFor(llmChat, { model: 'ai20', query: 'GLP-1?', sessionId: 's1' }),
      ),
    ).toEqual({
      query: 'GLP-1?',
      session_id: 's1',
    });
    expect(stepNamed(llmChat, 'answer-ai20').kind).toBe('stream');
  });

  it("refuses to ask another model than the job's", () => {
    expect(() =>
      rawRequestOf(llmChat, 'answer-ai50', contextFor(llmChat, { model: 'ai07', prompt: 'Hi' })),
    ).toThrow(/asks ai07 but reached the ai50 step/);
  });

  it('completes with an answer and fails on an empty one', () => {
    const ctx = contextFor(llmChat, { query: 'q' });
    expect(decideOf(llmChat, 'answer-ai50', answer, ctx)).toEqual({ type: 'complete' });
    expect(decideOf(llmChat, 'answer-ai50', { ...answer, text: '' }, ctx)).toMatchObject({ type: 'fail' });
  });

  it('reports the answer with its references', () => {
    const { title, markdown, summary } = reportOf(
      llmChat,
      { query: 'Why sodium-ion cells?' },
      { outputs: { 'answer-ai50': answer } },
    );
    expect(title).toBe('ai50 patent model: Why sodium-ion cells?');
    expect(markdown).toContain('## Answer\n\nSodium-ion cells trade energy density for cost.');
    expect(markdown).toContain('| 1 | patent | Sodium-ion cathode |   |');
    expect(summary).toBe('ai50: answer of 47 characters, 40 tokens');
    const ai20 = reportOf(
      llmChat,
      { model: 'ai20', query: 'q' },
      { outputs: { 'answer-ai20': { ...answer, ids: { session_id: 's9' } } } },
    );
    expect(ai20.markdown).toContain('Session: s9');
  });
});
