/**
 * A job written before steps were linked by typed handles resumes under them: the step names,
 * output names, context keys and pending selection in its record are the persisted names, which
 * the handles carry unchanged. The fixture is what a user's machine held after the code of e646880
 * (the commit before handles) parked a novelty check at its feature selection: the job record as
 * its SQLite store kept it, the step outputs as its report folder kept them, and the sandbox's
 * state file holding the upstream task (test/fixtures/pre-handles/README.md says how it was made).
 * The same job on DynamoDB Local and S3: test/e2e/aws/persisted-jobs.test.ts.
 */
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  callsAfterAnswer,
  expectParkedByName,
  expectResumedReport,
  parked,
  preHandlesFixture,
} from '../../support/pre-handles';
import { callSequence, lastSeq, startWorld, type World } from './world';

describe('a job recorded before typed step handles (SQLite, report folder)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'opflow-pre-handles-'));
  let world: World;
  beforeAll(async () => {
    cpSync(join(preHandlesFixture, 'out'), join(dir, 'out'), { recursive: true });
    cpSync(join(preHandlesFixture, 'sandbox-state.json'), join(dir, 'sandbox-state.json'));
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
    expectParkedByName(job);
    const { created } = await world.pipeline.deps.store.create(job);
    expect(created).toBe(true);

    const before = lastSeq(world);
    const done = await world.answer(job.id, ['f2']);
    expect(done.status, JSON.stringify(done.lastError)).toBe('SUCCEEDED');
    expect(callSequence(world, before)).toEqual(callsAfterAnswer);
    expectResumedReport(await world.report(job.id));
  });
});
