import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callSequence, lastSeq, offered, startWorld, type World } from './world';

const PROBLEM =
  'Increase the energy density of lithium-ion battery cells for electric scooters without reducing cycle life.';

describe('find-solution against the sandbox', () => {
  let world: World;
  beforeAll(async () => {
    world = await startWorld();
  });
  afterAll(() => world.close());

  it('auto: takes all recommendations and the ticked directions, and reports the final solution and its nodes', async () => {
    const before = lastSeq(world);
    const job = await world.run('find-solution', { problem: PROBLEM });
    expect(callSequence(world, before)).toEqual(['ai33-1', 'ai33-2', 'ai33-3', 'ai33-4', 'ai33-5', 'ai33-6']);
    expect(job.status, JSON.stringify(job.lastError)).toBe('SUCCEEDED');
    const { markdown, result } = await world.report(job.id);
    const recommend = (result.steps.recommendations as { recommend: string[] }).recommend;
    const directions = (result.steps.directions as { directions: { reason: string; ticked: boolean }[] })
      .directions;
    expect(result.selections.recommendations).toEqual(recommend.map((_, index) => `r${index + 1}`));
    const ticked = directions.flatMap((direction, index) => (direction.ticked ? [`d${index + 1}`] : []));
    expect(ticked.length).toBeGreaterThan(0);
    expect(result.selections.directions).toEqual(ticked);

    const solution = (result.steps.solution as { solution: { title: string } }).solution;
    expect(markdown).toContain(`## Final solution: ${solution.title}`);
    expect(markdown).toContain('| Node | Title | Route | Innovation |');
    for (const direction of directions.filter((d) => d.ticked))
      expect(markdown).toContain(`| ${direction.reason} |`);
    for (const direction of directions.filter((d) => !d.ticked))
      expect(markdown).not.toContain(`### ${direction.reason}`);
    expect(markdown).toMatch(/### 1\.1 /);
    expect(markdown).toContain('| Publication | Title | Published | Type |');
    expect(result.summary).toMatch(new RegExp(`solution nodes from ${ticked.length} direction`));
  });

  it('manual: asks at both selection points, refuses invalid answers, and follows the valid ones', async () => {
    const atRecommendations = await world.run('find-solution', { problem: PROBLEM }, { mode: 'manual' });
    expect(atRecommendations.status).toBe('AWAITING_INPUT');
    expect(atRecommendations.step).toBe('recommendations');
    const recommendations = offered(atRecommendations);
    expect(recommendations[0]).toMatch(/^r1: /);
    expect(atRecommendations.pending?.options.every((option) => !option.preselected)).toBe(true);
    await expect(world.answer(atRecommendations.id, ['r1', 'r42'])).rejects.toThrow(
      /not among the options offered: r42/,
    );
    await expect(world.answer(atRecommendations.id, ['r2', 'r2'])).rejects.toThrow(/twice/);

    const atDirections = await world.answer(atRecommendations.id, ['r2']);
    expect(atDirections.status).toBe('AWAITING_INPUT');
    expect(atDirections.step).toBe('directions');
    const directions = atDirections.pending!.options;
    expect(directions.map((option) => option.id)).toEqual(directions.map((_, index) => `d${index + 1}`));
    expect(directions.some((option) => option.preselected)).toBe(true);
    await expect(world.answer(atDirections.id, [])).rejects.toThrow(/choose at least 1 option, got 0/);

    const last = directions.at(-1)!;
    const done = await world.answer(atDirections.id, [last.id]);
    expect(done.status, JSON.stringify(done.lastError)).toBe('SUCCEEDED');
    const { markdown, result } = await world.report(done.id);
    expect(result.selections).toEqual({ recommendations: ['r2'], directions: [last.id] });
    // the final solution follows the one direction chosen
    expect(markdown).toContain(`| 1 | ${last.label} |`);
    for (const other of directions.slice(0, -1)) expect(markdown).not.toContain(`| ${other.label} |   |`);
    expect(markdown).toContain(`## Chosen recommendations\n\n- ${recommendations[1]!.replace(/^r2: /, '')}`);
    expect(result.summary).toMatch(/from 1 direction$/);
  });
});
