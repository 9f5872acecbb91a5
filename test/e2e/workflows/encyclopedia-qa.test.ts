import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callSequence, lastSeq, startWorld, type World } from './world';

const QUESTION = 'Which mechanisms explain the cardiovascular benefit of GLP-1 receptor agonists?';

describe('encyclopedia-qa against the sandbox', () => {
  let world: World;
  beforeAll(async () => {
    world = await startWorld();
  });
  afterAll(() => world.close());

  it('creates the chat, streams the answer and reports it with its references', async () => {
    const before = lastSeq(world);
    const job = await world.run('encyclopedia-qa', { question: QUESTION, dataSource: 'paper' });
    expect(callSequence(world, before)).toEqual(['ai68-1', 'ai68-2']);
    expect(job.status, JSON.stringify(job.lastError)).toBe('SUCCEEDED');
    const { markdown, result } = await world.report(job.id);
    const answer = result.steps.answer as { text: string; finishReason: string };
    expect(answer.text.length).toBeGreaterThan(100);
    expect(markdown).toContain(`## Question\n\n${QUESTION}`);
    expect(markdown).toContain(`## Answer\n\n${answer.text.split('\n')[0]!.slice(0, 40)}`);
    expect(markdown).toContain('## References\n\n| # | Type | Reference | Date |');
    expect(markdown).toMatch(
      /\| 1 \| Journal article \| \[Reference 1: .+\]\(https:\/\/sandbox\.invalid\/docs\/[0-9a-f]+\) \| \d{4}-\d{2}-\d{2} \|/,
    );
    expect(result.usage.tokens).toBeGreaterThan(0);
    expect(result.summary).toBe(
      `Answer of ${answer.text.length.toLocaleString('en-US')} characters with 3 references`,
    );
  });
});
