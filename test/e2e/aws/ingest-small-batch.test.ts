// A small batch on the aws backend finishes as its jobs end, not at the sweeper's next minute: a
// 2-line manifest uploaded under inbox/ (the bucket's notification invokes the bundled ingest
// function), its two jobs run by the bundled step workers, and each job's end wakes the batch's
// entry of the ingest schedule and invokes the ingest function, which releases, counts and writes
// the final outputs. The sweeper here runs only when nothing else is due, 55 s after the clock
// stopped (the worst phase its minute can have): the batch must not need it. Without the wake, the
// batch waited for that pass (58 s on aws-local against about 10 s with the old ingest queue).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoDbIngestSchedule } from '../../../shared/backends/aws/dynamodb-ingest-schedule';
import type { Batch } from '../../../shared/engine/batch-store';
import { isTerminal } from '../../../shared/engine/job-record';
import { listAll } from '../../../shared/runtime/job-queries';
import { type InboxUploads, inboxUploads } from '../../support/inbox-uploads';
import { AwsWorld } from './harness/aws-world';

describe('a small batch on aws (S3 inbox event → ingest function → step workers → wake)', () => {
  let world: AwsWorld;
  let inbox: InboxUploads;

  beforeAll(async () => {
    world = await AwsWorld.start({ workers: 2, inbox: true });
    inbox = inboxUploads(world);
  }, 300_000);
  afterAll(async () => {
    await world?.stop();
  });

  /**
   * Delivers what is due (ingest invocations, work messages), the clock jumping to the next due one;
   * when nothing is due, the sweeper's pass 55 s later. The sweeps it took.
   */
  async function runUntilSettled(batchId: string): Promise<{ batch: Batch; sweeps: number }> {
    const invoker = world.inbox!.invoker;
    let sweeps = 0;
    for (let round = 0; round < 2_000; round++) {
      const batch = await inbox.batches.get(batchId);
      if (batch?.status === 'FINISHED' && batch.inFlight.length === 0 && invoker.waiting === 0)
        return { batch, sweeps };
      if ((await invoker.runDue()) > 0) continue;
      const work = world.queueState();
      if (work.ready > 0) {
        await world.deliverOnce();
        continue;
      }
      const next = Math.min(invoker.nextAt(), work.nextAt);
      if (Number.isFinite(next)) {
        world.advanceTo(next);
        continue;
      }
      world.advanceTo(world.now() + 55_000);
      await world.sweep();
      sweeps += 1;
    }
    throw new Error(`batch ${batchId} did not settle in 2,000 rounds`);
  }

  it('reaches its final summary within 20 s of its last job ending, without the sweeper', async () => {
    const lines = [
      { id: 'p1', query: 'TTL:(pair lamp)' },
      { id: 'p2', query: 'TTL:(pair sensor)' },
    ];
    await inbox.upload(
      'inbox/patent-count/pair/pair.jsonl',
      `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`,
    );
    const { batch, sweeps } = await runUntilSettled('pair');
    expect(batch).toMatchObject({ status: 'FINISHED', items: 2, settled: { succeeded: 2, failed: 0 } });

    const jobs = await listAll(world.store, { batchId: 'pair' });
    expect(jobs).toHaveLength(2);
    expect(jobs.every((job) => isTerminal(job.status))).toBe(true);
    const lastEnd = Math.max(...jobs.map((job) => job.finishedAt ?? job.updatedAt));
    expect(batch.finishedAt).toBeDefined();
    const lag = batch.finishedAt! - lastEnd;
    expect(lag, `batch finished ${lag} ms after its last job`).toBeLessThanOrEqual(20_000);
    expect(sweeps).toBe(0);
    // The final outputs are written with it: both rows in the summary.
    const summary = Buffer.from(
      (await world.reports.get('batches/pair/summary.csv'))?.body ?? new Uint8Array(),
    )
      .toString('utf8')
      .trim()
      .split('\n');
    expect(summary).toHaveLength(3);
    expect(summary[1]).toMatch(/^p1,.*,patent-count,SUCCEEDED,/);
    expect(summary[2]).toMatch(/^p2,.*,patent-count,SUCCEEDED,/);

    // Settled, the batch leaves the schedule (a later end of a job run again puts it back: the next
    // test), and nothing of the ingest function waits or was stopped.
    const schedule = new DynamoDbIngestSchedule(
      world.emulators.clients.documents,
      world.env.OPFLOW_TABLE_NAME!,
    );
    expect(await schedule.entries()).toEqual([]);
    expect(await schedule.wake('pair', world.now())).toBe('none');
    expect(world.inbox!.invoker.stopped).toEqual([]);
    expect(world.inbox!.invoker.dead).toEqual([]);
  }, 600_000);
  it("rewrites the finished batch's summary.csv and index.html in S3 when a retry makes its failed item succeed", async () => {
    // The second count has a deadline it cannot meet: the batch finishes with it FAILED.
    await inbox.upload(
      'inbox/patent-count/again/again.jsonl',
      `${JSON.stringify({ id: 'ok', query: 'TTL:(again lamp)' })}\n${JSON.stringify({ id: 'late', query: 'TTL:(again hinge)', deadline: '1ms' })}\n`,
    );
    const first = (await runUntilSettled('again')).batch;
    expect(first).toMatchObject({ status: 'FINISHED', settled: { succeeded: 1, failed: 1 } });
    const text = async (name: string) =>
      Buffer.from((await world.reports.get(`batches/again/${name}`))?.body ?? new Uint8Array()).toString(
        'utf8',
      );
    const rowOf = async (id: string) =>
      (await text('summary.csv')).split('\n').find((line) => line.startsWith(`${id},`)) ?? '';
    const total = async (label: string) =>
      new RegExp(`<div><b>(\\d+)</b>${label}</div>`).exec(await text('index.html'))?.[1];
    expect(await rowOf('late')).toMatch(/,patent-count,FAILED,/);
    expect([await total('succeeded'), await total('failed or cancelled')]).toEqual(['1', '1']);
    const late = (await listAll(world.store, { batchId: 'again' })).find((job) => job.status === 'FAILED')!;

    // Retried through the job API (as opflow retry and the dashboard do), with time to finish.
    const retried = await world.api('POST', `/jobs/${late.id}/retry`, { body: { deadlineMs: 600_000 } });
    expect(retried.status).toBe(200);
    // The step worker's end of the job finds the batch out of the schedule and has the ingest
    // function drive it once: the job counted, the batch finished again, its files rewritten.
    const again = (await runUntilSettled('again')).batch;
    expect(again).toMatchObject({ status: 'FINISHED', inFlight: [], settled: { succeeded: 2, failed: 0 } });
    // (The harness clock stands still between deliveries: not before its first finish.)
    expect(again.finishedAt).toBeGreaterThanOrEqual(first.finishedAt!);
    expect(await rowOf('late')).toMatch(/,patent-count,SUCCEEDED,/);
    expect([await total('succeeded'), await total('failed or cancelled')]).toEqual(['2', '0']);
    expect(again.outputsOfFinish).toBe(again.finishedAt);
    expect(world.inbox!.invoker.stopped).toEqual([]);
    expect(world.inbox!.invoker.dead).toEqual([]);
  }, 600_000);
});
