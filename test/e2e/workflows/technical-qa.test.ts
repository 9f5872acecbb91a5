import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callSequence, lastSeq, startWorld, type World } from './world';

const QUESTION =
  'How can the ceramic separator of a solid-state battery be kept from cracking over many charge cycles?';

describe('technical-qa against the sandbox', () => {
  let world: World;
  beforeAll(async () => {
    world = await startWorld();
  });
  afterAll(() => world.close());

  it('submits the question, polls until the answer is written, and reports the answer first, then its sources', async () => {
    const before = lastSeq(world);
    const job = await world.run('technical-qa', { text: QUESTION, sources: ['patent', 'paper'] });
    expect(job.status, JSON.stringify(job.lastError)).toBe('SUCCEEDED');
    const calls = callSequence(world, before);
    expect(calls[0]).toBe('ai36-1');
    expect(calls.slice(1).every((ref) => ref === 'ai36-2')).toBe(true);
    // The answer takes 90 ± 30 s: the first poll at 60 s, a second one at most a minute later.
    expect(calls.length).toBeGreaterThanOrEqual(2);
    expect(calls.length).toBeLessThanOrEqual(4);

    const { markdown, result } = await world.report(job.id);
    const answer = result.steps['answer'] as {
      task_status: number;
      message_response: { summary: string; references: Record<string, unknown>[] };
    };
    expect(answer.task_status).toBe(2);
    const sources = answer.message_response.references;
    expect(sources.length).toBeGreaterThanOrEqual(3);
    // Only the sources asked for, written with the platform example's upper-case names.
    expect(new Set(sources.map((source) => source['SOLUTION_TYPE']))).toEqual(new Set(['PATENT', 'PAPER']));

    const order = [
      '## Answer',
      '## Sources',
      '## Related questions',
      '## How the question was read',
      '## Question',
    ];
    const at = order.map((title) => markdown.indexOf(`\n${title}\n`));
    expect(at.every((index) => index > 0)).toBe(true);
    expect([...at].sort((a, b) => a - b)).toEqual(at);
    expect(markdown).toContain('| # | Type | Source | Published | Excerpt |');
    expect(markdown).toMatch(
      /\| 1 \| (patent|paper) \| \[.+\]\(https:\/\/eureka\.zhihuiya\.com\/.+\) \| \d{4}-\d{2}-\d{2} \|/,
    );
    // The platform's Markdown heading inside the answer is not a heading of the report.
    expect(markdown.slice(at[0]! + 1, at[1]!)).not.toMatch(/\n#{1,6} /);
    expect(markdown).toContain(`## Question\n\n${QUESTION}`);
    expect(result.summary).toMatch(
      new RegExp(`^Answer of [\\d,]+ characters citing ${sources.length} sources \\(\\d+ (patents?|papers?)`),
    );
  });

  it('the same question twice gives the same answer (the sandbox is seeded by the question)', async () => {
    const first = await world.run('technical-qa', { question: QUESTION, lang: 'en' });
    const second = await world.run('technical-qa', { question: QUESTION, lang: 'en' });
    const answerOf = async (id: string) =>
      ((await world.report(id)).result.steps['answer'] as { message_response: unknown }).message_response;
    expect(await answerOf(second.id)).toEqual(await answerOf(first.id));
  });

  it('fails with the upstream status when the task fails upstream, after polling it', async () => {
    const before = lastSeq(world);
    const job = await world.run('technical-qa', { question: `${QUESTION} [sandbox:fail]` });
    expect(job.status).toBe('FAILED');
    expect(job.lastError?.message).toContain('the technical Q&A task failed upstream (status 3)');
    expect(callSequence(world, before)[0]).toBe('ai36-1');
  });

  it('refuses a bad input before any call, naming the field', async () => {
    const { workflows } = await import('../../../shared/workflows');
    const parsed = workflows
      .get('technical-qa')!
      .input.safeParse({ question: 'x', sources: ['patent', 'tv'] });
    expect(parsed.success).toBe(false);
    expect(JSON.stringify(parsed.error?.issues)).toContain('sources: each one of patent, paper, website');
  });
});
