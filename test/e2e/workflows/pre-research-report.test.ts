import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callSequence, lastSeq, startWorld, type World } from './world';

const QUESTION = 'How can the energy density of sodium-ion batteries for stationary storage be raised?';

describe('pre-research-report against the sandbox', () => {
  let world: World;
  beforeAll(async () => {
    world = await startWorld();
  });
  afterAll(() => world.close());

  it('from a question: reports key players and key patents first, and keeps the report', async () => {
    const before = lastSeq(world);
    const job = await world.run('pre-research-report', { question: QUESTION });
    expect(callSequence(world, before)).toEqual(['ai34-1', 'ai34-3', 'download']);
    expect(job.status, JSON.stringify(job.lastError)).toBe('SUCCEEDED');
    const { markdown, result } = await world.report(job.id);
    expect(markdown).toContain(`# Pre-research report: ${QUESTION}`);
    expect(markdown).toContain('## Key players\n\n| Player | Country | Type | Patents |');
    expect(markdown).toContain('## Key patents\n\n| Publication | Title | Score |');
    expect(markdown).toMatch(/\| [A-Z]{2}\d+[A-Z0-9]* \| .+ \| \d+ \|/);
    expect(result.attachments).toEqual([
      { fileName: expect.stringMatching(/^pre-research-.+\.html$/), contentType: 'text/html; charset=utf-8' },
    ]);
    const page = Buffer.from((await world.attachment(job.id, result.attachments[0]!.fileName))!).toString(
      'utf8',
    );
    expect(page).toContain('<html');
    expect(markdown).toContain(`(attachments/${result.attachments[0]!.fileName})`);
    expect(result.summary).toMatch(/^\d+ key players, \d+ key patents, report pre-research-/);
    expect(world.sandbox.ledger.count({ operationId: 'ai34-2' })).toBe(0);
  });

  it('from a directory: supplies the chosen chapters, renaming only the custom modules', async () => {
    const before = lastSeq(world);
    const job = await world.run('pre-research-report', {
      question: QUESTION,
      directory: [
        { key: 'HEAD_PLAYER_ANALYSIS' },
        { key: 'key_patent_interpretation' },
        { key: 'CUSTOM_MODULE_1', name: 'Cost per stored kWh' },
      ],
    });
    expect(job.status, JSON.stringify(job.lastError)).toBe('SUCCEEDED');
    const { markdown, result } = await world.report(job.id);
    expect(world.sandbox.ledger.count({ operationId: 'ai34-2' })).toBe(1);
    // ai34-2 needs the report_id of an ai34-1 created without auto_directory
    expect(callSequence(world, before)).toEqual(['ai34-1', 'ai34-2', 'ai34-3', 'download']);
    expect(markdown).toContain('| Cost per stored kWh | CUSTOM_MODULE_1 | customize |');
    expect(markdown).toMatch(
      /\| .+ \| HEAD_PLAYER_ANALYSIS \| model \|\n\| .+ \| KEY_PATENT_INTERPRETATION \| model \|/,
    );
    const page = Buffer.from((await world.attachment(job.id, result.attachments[0]!.fileName))!).toString(
      'utf8',
    );
    expect(page).toContain('Cost per stored kWh');
  });
});
