// What SQS may do to the bundled step worker: deliver one message several times at once, deliver
// an old version after a newer one, carry a body that is not a work message, or arrive when the
// function has little time left. One record per event and three instances, so copies run in parallel.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqsEventSource } from '../../../scripts/lambda/sqs-event-source';
import { REAL_PROCESS_TIMEOUT_MS } from '../../support/timeouts';
import { AwsWorld } from './harness/aws-world';

let world: AwsWorld;
beforeAll(async () => {
  world = await AwsWorld.start({ workers: 3, batchSize: 1, maxReceiveCount: 3 });
}, REAL_PROCESS_TIMEOUT_MS);
afterAll(async () => {
  await world?.stop();
});

const novelty = {
  workflow: 'novelty-check',
  input: { text: 'A bicycle chain lubricated by a wax reservoir inside each roller, refilled by heat.' },
};
const body = (jobId: string, version: number) => JSON.stringify({ jobId, version });

describe('opflow on AWS: delivery faults (bundled step worker)', { timeout: REAL_PROCESS_TIMEOUT_MS }, () => {
  it('runs a step once when the same message is delivered three times at once', async () => {
    const id = await world.submit(novelty);
    await world.enqueueRaw(body(id, 1));
    await world.enqueueRaw(body(id, 1));
    expect(world.queueState().ready).toBe(3);
    const before = world.source.invocations.length;
    await Promise.all(world.workers.map((worker) => world.source.poll(worker)));
    const concurrent = world.source.invocations.slice(before);
    expect(concurrent.map((invocation) => invocation.received)).toEqual([1, 1, 1]);
    // Every copy was handled (none left for redelivery), but the job moved one version only.
    expect(concurrent.every((invocation) => invocation.failed === 0)).toBe(true);
    expect((await world.store.get(id))?.version).toBe(3);
    // The create call of the first step went upstream once: the losers lost before calling.
    const first = world.sandbox.ledger
      .entries()
      .filter((entry) => entry.operationId === 'ai35-1NoveltySearchSubmit');
    expect(first.length).toBe(1);

    const [job] = await world.settle([id], { drain: true });
    expect(job?.status).toBe('SUCCEEDED');
    expect(job?.usage.duplicateCreates).toBe(0);
  });

  it('sends a billed read once when its message is delivered three times at once', async () => {
    // A patent count is one billed read (p001): the deliveries that lose its claim never call.
    const id = await world.submit({ workflow: 'patent-count', input: { query: 'bicycle AND chain' } });
    await world.enqueueRaw(body(id, 1));
    await world.enqueueRaw(body(id, 1));
    // The api's first message may wait for its token: all three copies due before any is delivered.
    while (world.queueState().ready < 3) world.advanceTo(world.queueState().nextAt);
    expect(world.queueState().ready).toBe(3);
    await Promise.all(world.workers.map((worker) => world.source.poll(worker)));
    const counts = world.sandbox.ledger
      .entries()
      .filter((entry) => entry.operationId === 'p001PatentQuerySearchCount' && entry.workDone);
    expect(counts.length).toBe(1);

    const [job] = await world.settle([id], { drain: true });
    expect(job?.status).toBe('SUCCEEDED');
    expect(job?.usage).toMatchObject({ calls: 1, billedUnits: counts[0]!.billedUnits, duplicateCreates: 0 });
    // Three deliveries and no crash: the read was not repeated, and none is counted.
    expect(job?.usage.duplicateReads).toBeUndefined();
  });

  it('drops an older version delivered after a newer one, leaving the job as it is', async () => {
    const id = await world.submit(novelty);
    let job = (await world.store.get(id))!;
    while (job.version < 4) {
      await world.deliverOnce();
      job = (await world.store.get(id))!;
    }
    const seen = job.version;
    await world.enqueueRaw(body(id, 2));
    await world.enqueueRaw(body(id, 1));
    const [done] = await world.settle([id], { drain: true });
    expect(done?.status).toBe('SUCCEEDED');
    expect(done!.version).toBeGreaterThan(seen);
    const stale = world.logLines().filter((line) => line.jobId === id && line.reason === 'stale');
    expect(stale.map((line) => line.messageVersion).sort()).toEqual([1, 2]);
    // A finished job's late copies are dropped too, and deleted rather than retried.
    await world.enqueueRaw(body(id, done!.version));
    await world.settle([id], { drain: true });
    expect((await world.store.get(id))?.version).toBe(done!.version);
    expect(world.dlqBodies()).not.toContain(body(id, done!.version));
  });

  it('sends a message that is not a work message to the dead-letter queue after maxReceiveCount', async () => {
    await world.enqueueRaw('{"jobId": 42}');
    await world.enqueueRaw('not json at all');
    const id = await world.submit(novelty);
    const [job] = await world.settle([id], { drain: true });
    expect(job?.status).toBe('SUCCEEDED');
    expect(world.dlqBodies().sort()).toEqual(['not json at all', '{"jobId": 42}']);
    const refusals = world
      .logLines()
      .filter((line) => String(line.message).startsWith('unreadable work message'));
    // Received maxReceiveCount (3) times each before SQS gave up on them.
    expect(refusals.length).toBe(6);
    expect(refusals[0]).toMatchObject({ level: 'ERROR', error: expect.stringMatching(/not JSON|jobId/) });
  });

  it('leaves records it has no time for, so they come back, instead of being cut off', async () => {
    const id = await world.submit(novelty);
    const hurried = new SqsEventSource({
      sqs: world.emulators.clients.sqs,
      queueUrl: world.queueUrl,
      queueArn: 'arn:aws:sqs:us-east-1:000000000000:work',
      functionTimeoutMs: 5_000,
    });
    const invocation = await hurried.poll(world.workers[0]!);
    expect(invocation).toMatchObject({ received: 1, failed: 1, deleted: 0, crashed: false });
    expect((await world.store.get(id))?.version).toBe(1);
    expect(world.logLines().some((line) => String(line.message).startsWith('deadline near'))).toBe(true);
    // After the visibility timeout the same message comes back to a worker with time, and runs.
    const [job] = await world.settle([id], { drain: true });
    expect(job?.status).toBe('SUCCEEDED');
  });
});
