import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWorld, type World } from './world';

describe('llm-chat against the sandbox', () => {
  let world: World;
  beforeAll(async () => {
    world = await startWorld();
  });
  afterAll(() => world.close());

  it('asks the patent model (the default) and reports the streamed answer with its references', async () => {
    const job = await world.run('llm-chat', { query: 'What limits the cycle life of silicon anodes?' });
    expect(job.status, JSON.stringify(job.lastError)).toBe('SUCCEEDED');
    const { markdown, result } = await world.report(job.id);
    const answer = result.steps['answer-ai50'] as { text: string; tokens: { total: number } };
    expect(answer.text.length).toBeGreaterThan(50);
    expect(markdown).toContain('# ai50 patent model: What limits the cycle life of silicon anodes?');
    expect(markdown).toContain(`## Answer\n\n${answer.text.split('\n')[0]!.slice(0, 40)}`);
    expect(markdown).toMatch(/\| 1 \| patent \| Reference 1 on .+ \|/);
    expect(result.summary).toBe(
      `ai50: answer of ${answer.text.length.toLocaleString('en-US')} characters, ${answer.tokens.total.toLocaleString('en-US')} tokens`,
    );
    expect(world.sandbox.ledger.countByOperation()).toMatchObject({ ai50ChatPatGptStream: 1 });
  });

  it.each([
    ['ai07', 'prompt', 'ai07ChatCcGptStream'],
    ['ai20', 'query', 'ai20ChatPharmGptStream'],
  ] as const)('starts at the %s model step and streams its answer', async (model, field, operationId) => {
    const before = world.sandbox.ledger.countByOperation()[operationId] ?? 0;
    const job = await world.run('llm-chat', {
      model,
      [field]: 'Summarise the main routes to solid-state electrolytes.',
    });
    expect(job.status, JSON.stringify(job.lastError)).toBe('SUCCEEDED');
    const { result } = await world.report(job.id);
    expect(Object.keys(result.steps)).toEqual([`answer-${model}`]);
    expect((result.steps[`answer-${model}`] as { text: string }).text.length).toBeGreaterThan(20);
    expect(world.sandbox.ledger.countByOperation()[operationId]).toBe(before + 1);
  });
});
