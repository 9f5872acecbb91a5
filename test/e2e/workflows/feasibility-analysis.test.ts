import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callSequence, lastSeq, startWorld, type World } from './world';

const SOLUTION =
  'Wrap each egg in a soft protective layer that absorbs the impact of a fall: expanded polystyrene, sponge, cotton or bubble wrap, held by a paper sleeve.';

describe('feasibility-analysis against the sandbox', () => {
  let world: World;
  beforeAll(async () => {
    world = await startWorld();
  });
  afterAll(() => world.close());

  it('submits the solution, polls until the assessment is ready, keeps the PDF and leads the report with it', async () => {
    const before = lastSeq(world);
    const started = world.clock.now();
    const job = await world.run('feasibility-analysis', { text: SOLUTION, title: 'Egg sleeve', logo: false });
    expect(job.status, JSON.stringify(job.lastError)).toBe('SUCCEEDED');
    expect(callSequence(world, before)).toEqual(['ai40-1', 'ai40-2', 'download']);
    // The assessment takes 150 ± 45 s of the clock, not of real time.
    expect(world.clock.now() - started).toBeGreaterThan(100_000);

    const { markdown, result } = await world.report(job.id);
    expect(result.attachments).toHaveLength(1);
    expect(result.attachments[0]!.fileName).toMatch(/^feasibility-\w+\.pdf$/);
    const order = ['## Assessment', '## Solution assessed', '## How it was assessed'];
    const at = order.map((title) => markdown.indexOf(`\n${title}\n`));
    expect(at.every((index) => index > 0)).toBe(true);
    expect([...at].sort((a, b) => a - b)).toEqual(at);
    expect(markdown).toMatch(/- \[feasibility-\w+\.pdf\]\(attachments\//);
    expect(markdown).toContain('Language en; without logo');
    expect(result.summary).toMatch(/^Assessment ready: feasibility-\w+\.pdf$/);
    const bytes = await world.attachment(job.id, result.attachments[0]!.fileName);
    expect(Buffer.from(bytes!).subarray(0, 5).toString()).toBe('%PDF-');
    const { extractText } = await import('unpdf');
    const { text } = await extractText(new Uint8Array(bytes!), { mergePages: true });
    expect(text).toMatch(
      /Overall: (feasible|feasible with conditions|not feasible as described) \(\d+\/10\)/,
    );
    expect(text).toContain('Recommendation');
  }, 120_000);

  it('fails with the upstream status when the assessment fails upstream', async () => {
    const job = await world.run('feasibility-analysis', { text: `${SOLUTION} [sandbox:fail]` });
    expect(job.status).toBe('FAILED');
    expect(job.lastError?.message).toContain('the feasibility analysis failed upstream (status 3)');
  }, 60_000);

  it('refuses a bad input before any call, naming the field', async () => {
    const { workflows } = await import('../../../shared/workflows');
    const schema = workflows.get('feasibility-analysis')!.input;
    for (const [value, message] of [
      [{ text: '' }, 'text: the technical solution is empty'],
      [{ text: 'x', lang: 'de' }, 'lang: en or cn'],
      [{ text: 'x', logo: 'yes' }, 'logo: true or false'],
    ] as const) {
      const parsed = schema.safeParse(value);
      expect(parsed.success).toBe(false);
      expect(JSON.stringify(parsed.error?.issues)).toContain(message);
    }
  });
});
