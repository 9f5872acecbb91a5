/**
 * A job written before steps were linked by typed handles resumes under them: the step names,
 * output names, context keys and pending selection in its record are the persisted names, which
 * the handles carry unchanged. The fixture is what a user's machine held after the code of e646880
 * (the commit before handles) parked a novelty check at its feature selection: the job record as
 * its SQLite store kept it, the step outputs as its report folder kept them, and the sandbox's
 * state file holding the upstream task (test/fixtures/pre-handles/README.md says how it was made).
 */
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Job } from '../../../shared/engine';
import { callSequence, lastSeq, startWorld, type World } from './world';

const fixture = join(__dirname, '../../fixtures/pre-handles/novelty-check-at-features');

describe('a job recorded before typed step handles', () => {
  const dir = mkdtempSync(join(tmpdir(), 'opflow-pre-handles-'));
  const parked = JSON.parse(readFileSync(join(fixture, 'parked.json'), 'utf8')) as {
    clockNow: number;
    job: Job;
  };
  let world: World;
  beforeAll(async () => {
    cpSync(join(fixture, 'out'), join(dir, 'out'), { recursive: true });
    cpSync(join(fixture, 'sandbox-state.json'), join(dir, 'sandbox-state.json'));
    world = await startWorld(
      { stateFile: join(dir, 'sandbox-state.json'), port: 0 },
      { startAt: parked.clockNow, outDir: join(dir, 'out') },
    );
  });
  afterAll(async () => {
    await world?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a novelty check parked at its feature selection goes on to SUCCEEDED with the chosen feature', async () => {
    const { job } = parked;
    // As the earlier code left it: names, not handles.
    expect(job).toMatchObject({
      status: 'AWAITING_INPUT',
      step: 'features',
      pending: { step: 'features', nextStep: 'confirm-features' },
      context: { taskId: expect.any(String) },
    });
    const { created } = await world.pipeline.deps.store.create(job);
    expect(created).toBe(true);

    const before = lastSeq(world);
    const done = await world.answer(job.id, ['f2']);
    expect(done.status, JSON.stringify(done.lastError)).toBe('SUCCEEDED');
    // From the confirmation of the features on: the upstream task the earlier code created, no new submit.
    expect(callSequence(world, before)).toEqual([
      'ai35-5',
      'ai35-6',
      'ai35-7',
      'ai35-8',
      'ai35-10',
      'ai35-11',
      'download',
    ]);

    const { markdown, result } = await world.report(job.id);
    expect(result.selections).toEqual({ features: ['f2'] });
    // The outputs the earlier code kept are read back by name, beside the new ones.
    expect(Object.keys(result.steps)).toEqual(
      expect.arrayContaining([
        'submit',
        'summary',
        'confirm-summary',
        'features',
        'confirm-features',
        'agent-result',
      ]),
    );
    // confirm-features sent the chosen feature of the kept features output: the search compared only it.
    const kept = JSON.parse(readFileSync(join(fixture, 'out', job.id, 'steps', 'features.json'), 'utf8')) as {
      data: { feature_text: string }[];
    };
    const chosen = kept.data[1]!.feature_text;
    type Found = { features: { tech_feature: string }[] };
    const found = (result.steps['agent-result'] as { final_result: Found[] }).final_result;
    expect(found.length).toBeGreaterThan(0);
    expect(new Set(found.flatMap((doc) => doc.features.map((f) => f.tech_feature)))).toEqual(
      new Set([chosen]),
    );
    expect(result.attachments).toHaveLength(1);
    expect(markdown).toContain('# Novelty check: A folding bicycle frame');
    // The calls before the selection were paid once, by the earlier code: the usage goes on from there.
    expect(result.usage.calls).toBeGreaterThan(job.usage.calls);
  });
});
