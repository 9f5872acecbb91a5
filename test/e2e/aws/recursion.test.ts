// Lambda's recursive loop detection, enforced by the simulated deployment from the synthesized
// template: the step worker sends each job's next step to the queue that triggers it, so a novelty
// check is one chain of more than 16 invocations. With the function's RecursiveLoop as the stack
// sets it, the chain runs to the end; with Lambda's default (Terminate), the 17th hop is stopped
// and its message heads for the dead-letter queue, as on a real account.
import { afterEach, describe, expect, it } from 'vitest';
import { RECURSION_LIMIT } from '../../../scripts/lambda/recursion';
import { REAL_PROCESS_TIMEOUT_MS } from '../../support/timeouts';
import { AwsWorld } from './harness/aws-world';
import { stackRules } from './harness/template-synth';

const novelty = {
  workflow: 'novelty-check',
  input: {
    text: 'A foldable phone hinge with two rotation axes and a friction damper that holds any opening angle.',
  },
};

// Every upstream task takes 10 minutes of the shared clock: several polls a step, so the chain is
// well over 16 invocations whatever the sandbox's timing.
const sandbox = { defaultTaskDuration: { meanMs: 600_000, spreadMs: 0 } };

let world: AwsWorld | undefined;
afterEach(async () => {
  await world?.stop();
  world = undefined;
});

describe('recursive loop detection', { timeout: REAL_PROCESS_TIMEOUT_MS }, () => {
  it('lets a novelty check run its chain of more than 16 step-worker invocations to the end', async () => {
    world = await AwsWorld.start({ sandbox });
    expect(world.rules.worker.recursiveLoop).toBe('Allow');
    const id = await world.submit(novelty);
    const [job] = await world.settle([id]);
    expect(job?.status).toBe('SUCCEEDED');
    expect(world.source.maxHops).toBeGreaterThan(RECURSION_LIMIT);
    expect(world.source.stopped).toEqual([]);
  });

  it("stops the chain at its 17th invocation when the function keeps Lambda's default (Terminate)", async () => {
    const rules = stackRules((resources) => {
      for (const resource of Object.values(resources)) delete resource.Properties['RecursiveLoop'];
    });
    expect(rules.worker.recursiveLoop).toBe('Terminate');
    world = await AwsWorld.start({ rules, sandbox, maxReceiveCount: 2 });
    const id = await world.submit(novelty);
    // Delivered until the chain is stopped: the job's message comes back and is stopped again.
    for (let round = 0; round < 400 && world.source.stopped.length < 2; round++) await world.deliverOnce();
    expect(world.source.stopped.length).toBeGreaterThanOrEqual(1);
    expect(world.source.stopped[0]).toMatchObject({ hops: RECURSION_LIMIT });
    expect(world.source.stopped[0]?.body).toContain(id);
    expect(world.source.maxHops).toBe(RECURSION_LIMIT);
    const job = await world.store.get(id);
    expect(job?.status).not.toBe('SUCCEEDED');
  });
});
