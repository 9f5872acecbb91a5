// GET /events on AWS, end to end: jobs created through the API and run by the bundled step worker;
// the job table's stream read by the bundled events function the way Lambda's stream event source
// reads it (the filter and batch size of the synthesized mapping); the long poll answered by the
// bundled api function behind the gateway stand-in (its 10 s timeout, the HTTP API's 30 s). A job's
// changes arrive in order, resumed after a cursor, each caller's own tenant only, a change the log
// holds twice answered once, and a poll waiting for a change is answered when it arrives.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StreamHandler } from '../../../scripts/lambda/dynamodb-stream-source';
import { pollEvents } from '../../support/events-poll';
import { REAL_PROCESS_TIMEOUT_MS } from '../../support/timeouts';
import { AwsWorld } from './harness/aws-world';

let world: AwsWorld;
beforeAll(async () => {
  world = await AwsWorld.start();
}, REAL_PROCESS_TIMEOUT_MS);
afterAll(async () => {
  await world?.stop();
});

const poll = (query: string, headers: Record<string, string> = {}) => pollEvents(world, query, headers);

/** The stream handed to the events function, and the clock past the log's settle time (1 s). */
async function logChanges() {
  const delivered = await world.deliverStream();
  world.advanceTo(world.now() + 1_500);
  return delivered;
}

const patentCount = { workflow: 'patent-count', input: { query: 'foldable hinge' } };

describe('GET /events on AWS: the long poll of the change log', { timeout: REAL_PROCESS_TIMEOUT_MS }, () => {
  it("answers a job's changes in order, resumes after a cursor, and moves its cursor on when nothing came", async () => {
    const start = await poll('wait=0');
    expect(start.status).toBe(200);
    expect(start.body.events).toEqual([]);

    const id = await world.submit(patentCount);
    const [job] = await world.settle([id]);
    expect(job?.status).toBe('SUCCEEDED');
    expect(await logChanges()).toBeGreaterThanOrEqual(job!.version);
    // Only job items reach the function: rate buckets, idempotency and history items are filtered out.
    expect(world.stream.filtered).toBeGreaterThan(0);

    const all = await poll(`wait=0&jobId=${id}&lastEventId=${start.body.cursor}`);
    expect(all.status).toBe(200);
    const versions = all.body.events.map((event) => event.data.job?.version);
    expect(versions).toEqual(Array.from({ length: job!.version }, (_, index) => index + 1));
    expect(all.body.events[0]).toMatchObject({ type: 'job', data: { job: { id, status: 'QUEUED' } } });
    expect(all.body.events.at(-1)).toMatchObject({ type: 'job', data: { job: { id, status: 'SUCCEEDED' } } });

    // Resumed after the second event (the header, as a client's Last-Event-ID): the rest, in order.
    const second = all.body.events[1]!.id!;
    const rest = await poll(`wait=0&jobId=${id}`, { 'last-event-id': second });
    expect(rest.body.events.map((event) => event.data.job?.version)).toEqual(versions.slice(2));
    // After the answer's cursor nothing is left, and a poll that found nothing still moves on.
    const none = await poll(`wait=0&lastEventId=${all.body.cursor}`);
    expect(none.body.events).toEqual([]);
    expect(none.body.cursor >= all.body.cursor).toBe(true);
  });

  it('answers once a change the events function logged twice (ended after its write, its batch handed again)', async () => {
    const start = (await poll('wait=0')).body.cursor;
    const id = await world.submit(patentCount);
    const [job] = await world.settle([id]);
    const { handler } = await world.bundles.load<{ handler: StreamHandler }>('events');
    let invocations = 0;
    // The first invocation writes its changes, then is ended (a timeout): Lambda hands the batch again.
    const endedOnce: StreamHandler = async (event, context) => {
      const answer = await handler(event, context);
      if (++invocations === 1) throw new Error('Task timed out after 30.00 seconds');
      return answer;
    };
    expect(await world.stream.drain(endedOnce)).toBe(0);
    // Handed again a moment later: the changes are written again under a later stamp.
    world.advanceTo(world.now() + 200);
    expect(await world.stream.drain(endedOnce)).toBeGreaterThanOrEqual(job!.version);
    expect(invocations).toBe(2);
    world.advanceTo(world.now() + 1_500);
    const answer = await poll(`wait=0&jobId=${id}&lastEventId=${start}`);
    const versions = answer.body.events.map((event) => event.data.job?.version);
    expect(versions).toEqual(Array.from({ length: job!.version }, (_, index) => index + 1));
  });

  it("shows a caller bound to a tenant only its own tenant's changes", async () => {
    const start = (await poll('wait=0')).body.cursor;
    const ours = await world.submit(patentCount);
    world.gateway.claims = { sub: 'user-2', tenant: 'acme' };
    try {
      const theirs = await world.submit(patentCount);
      await logChanges();
      const acme = await poll(`wait=0&lastEventId=${start}`);
      const ids = new Set(acme.body.events.map((event) => event.data.job?.id));
      expect(ids).toEqual(new Set([theirs]));
      const refused = await poll(`wait=0&tenant=default&lastEventId=${start}`);
      expect(refused.status).toBe(403);
      expect(refused.body.error?.message).toContain('acme');
    } finally {
      world.gateway.claims = undefined;
    }
    // An operator (IAM) sees both tenants, or one when it names it.
    const operator = await poll(`wait=0&tenant=default&lastEventId=${start}`);
    expect(new Set(operator.body.events.map((event) => event.data.job?.id))).toEqual(new Set([ours]));
    await world.settle([ours]);
  });

  it('waits for a change and answers it when it arrives, within the function and gateway limits', async () => {
    const start = (await poll('wait=0')).body.cursor;
    const started = performance.now();
    const waiting = poll(`wait=20&lastEventId=${start}`);
    const id = await world.submit(patentCount);
    await logChanges();
    const answer = await waiting;
    expect(answer.status).toBe(200);
    expect(answer.body.events.map((event) => event.data.job?.id)).toContain(id);
    // Answered as the change came, not at the end of the wait (20 s).
    expect(performance.now() - started).toBeLessThan(8_000);
    await world.settle([id]);
  });

  it('refuses a token in the URL, an event id of another feed and a wait over 20 s', async () => {
    const token = await poll('wait=0&token=abc.def');
    expect(token.status).toBe(400);
    expect(token.body.error?.message).toContain('query.token');
    const id = await poll('wait=0&lastEventId=42');
    expect(id.status).toBe(400);
    expect(id.body.error?.message).toContain('is not an event id of this feed');
    const wait = await poll('wait=25');
    expect(wait.status).toBe(400);
    expect(wait.body.error?.message).toContain('query.wait');
  });
});
