// A streamed answer on AWS, end to end: an llm-chat job created through the API and run by the
// bundled step worker while the sandbox streams a frame every 80 ms; the long poll of GET /events
// (the bundled api function behind the gateway stand-in) delivers the answer's parts while the job
// is still running, each after the one before (offsets follow, or start again at 0 when the step
// called again), and they join into the answer the job keeps. The worker writes the parts itself
// (at most once a second): no job version is one.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EventsPage, pollEvents } from '../../support/events-poll';
import { REAL_PROCESS_TIMEOUT_MS } from '../../support/timeouts';
import { AwsWorld } from './harness/aws-world';

let world: AwsWorld;
beforeAll(async () => {
  world = await AwsWorld.start({ sandbox: { streamChunkDelayMs: 80 } });
}, REAL_PROCESS_TIMEOUT_MS);
afterAll(async () => {
  await world?.stop();
});

async function poll(query: string): Promise<EventsPage> {
  const answer = await pollEvents(world, query);
  expect(answer.status).toBe(200);
  return answer.body;
}

describe('a streamed answer through the long poll on AWS', { timeout: REAL_PROCESS_TIMEOUT_MS }, () => {
  it('delivers the parts of the answer before the job ends, and they join into its answer', async () => {
    let cursor = (await poll('wait=0')).cursor;
    const id = await world.submit({
      workflow: 'llm-chat',
      input: { text: 'What limits the cycle life of solid-state battery separators?', model: 'ai50' },
    });
    const running = world.settle([id]);
    const parts: { offset: number; text: string }[] = [];
    let partsWhileRunning = 0;
    // While the worker streams: poll as a dashboard would, the clock moved past the log's settle time.
    for (let round = 0; round < 100; round++) {
      await new Promise((resolve) => setTimeout(resolve, 400));
      world.advanceTo(Date.now() + 1_500);
      const job = await world.store.get(id);
      const answer = await poll(`wait=0&jobId=${id}&lastEventId=${cursor}`);
      cursor = answer.cursor;
      for (const event of answer.events)
        if (event.type === 'answer' && event.data.answer) parts.push(event.data.answer);
      if (job?.status !== 'SUCCEEDED') partsWhileRunning = parts.length;
      if (job?.status === 'SUCCEEDED') break;
    }
    const [done] = await running;
    expect(done?.status).toBe('SUCCEEDED');
    // Seen before the job was done: the long poll carried the answer as it arrived.
    expect(partsWhileRunning).toBeGreaterThanOrEqual(2);
    await world.deliverStream();
    world.advanceTo(Date.now() + 1_500);
    const rest = await poll(`wait=0&jobId=${id}&lastEventId=${cursor}`);
    for (const event of rest.events)
      if (event.type === 'answer' && event.data.answer) parts.push(event.data.answer);
    // Read as the dashboard reads them: each part follows the text so far. A part already held is
    // passed over: the change log may deliver a change twice (a write slower than half its settle
    // time is written again). A part at offset 0 that differs starts the answer again: only when
    // the step called the platform again (a stream that failed part way is retried).
    let text = '';
    let restarts = 0;
    let kept = 0;
    let twice = 0;
    for (const part of parts) {
      if (text.startsWith(part.text, part.offset) && part.offset + part.text.length <= text.length) {
        twice += 1;
        continue;
      }
      if (part.offset === 0 && text !== '') {
        restarts += 1;
        text = '';
        kept = 0;
      }
      expect(part.offset).toBe(text.length);
      text += part.text;
      kept += 1;
    }
    const usage = done!.usage;
    expect(usage.calls + usage.duplicateCreates).toBeGreaterThanOrEqual(1 + restarts);
    const stored = await world.reports.get(`reports/${id}/steps/answer-ai50.json`);
    const output = JSON.parse(Buffer.from(stored!.body).toString('utf8')) as { text: string };
    expect(text).toBe(output.text);
    // Throttled to once a second: fewer parts than the stream's pieces; few delivered twice.
    expect(twice).toBeLessThanOrEqual(kept);
    expect(kept).toBeLessThan(output.text.split(/\s+/).length / 3);
  });
});
