/**
 * Every injectable fault, over real HTTP: latency, throttling (429 and 67200002 in a 200), busy,
 * 5xx, connection resets before and after the work, truncated and malformed bodies, and the stream
 * faults; plus targeting, `times`, seeded probability and download-link faults.
 */
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { type FaultRule, PlatformCode, SANDBOX_API_KEY } from '../../../shared/sandbox';
import { dataFrames, startTestSandbox, type TestSandbox } from './sandbox-harness';

let harness: TestSandbox | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

const count = { query_text: 'TACD:(graphene)' };
const submit = { input: 'A lamp with a motion sensor. The sensor dims the lamp.', lang: 'en' };
const prompt = { prompt: 'What limits perovskite solar cell lifetime?' };

async function withFaults(faults: FaultRule[]): Promise<TestSandbox> {
  harness = await startTestSandbox({ faults });
  return harness;
}

describe('faults that answer instead of the platform', () => {
  it('throttles with HTTP 429 and Retry-After', async () => {
    const h = await withFaults([{ kind: 'throttle-429', retryAfterSeconds: 7 }]);
    const answer = await h.call('p001', count);
    expect(answer.status).toBe(429);
    expect(answer.headers['retry-after']).toBe('7');
    expect(answer.json).toMatchObject({ status: false, error_code: PlatformCode.throttled });
    expect(h.sandbox.ledger.entries()[0]).toMatchObject({
      outcome: 'fault',
      fault: 'throttle-429',
      httpStatus: 429,
    });
  });

  it('throttles with 67200002 in a 200, and answers busy with 68300008', async () => {
    const h = await withFaults([
      { kind: 'throttle-200', operation: 'p001' },
      { kind: 'busy', operation: 'ai35-1NoveltySearchSubmit' },
    ]);
    expect((await h.call('p001', count)).json).toMatchObject({
      status: false,
      error_code: PlatformCode.throttled,
    });
    const busy = await h.call('ai35-1', submit);
    expect(busy.status).toBe(200);
    expect(busy.json).toMatchObject({ status: false, error_code: PlatformCode.busy });
    expect(h.sandbox.ledger.count({ created: true })).toBe(0);
  });

  it('answers a gateway 5xx page', async () => {
    const h = await withFaults([{ kind: 'http-5xx', httpStatus: 502 }]);
    const answer = await h.call('p001', count);
    expect(answer.status).toBe(502);
    expect(answer.headers['content-type']).toBe('text/html');
    expect(answer.text).toContain('502 Bad Gateway');
    expect(answer.headers['x-correlation-id']).toBeDefined();
  });

  it('adds latency from the rule’s range (wall clock)', async () => {
    const h = await withFaults([{ kind: 'latency', minMs: 60, maxMs: 80, operation: 'p001' }]);
    const started = performance.now();
    expect((await h.call('p001', count)).status).toBe(200);
    expect(performance.now() - started).toBeGreaterThanOrEqual(55);
  });
});

describe('broken connections and bodies', () => {
  it('resets the connection before the work: nothing is created', async () => {
    const h = await withFaults([{ kind: 'reset', operation: 'ai35-1', times: 1 }]);
    await expect(h.call('ai35-1', submit)).rejects.toThrow();
    expect(h.sandbox.ledger.entries()[0]).toMatchObject({ outcome: 'fault', fault: 'reset', created: false });
    await h.ok('ai35-1', submit);
    expect(h.sandbox.ledger.duplicateCreates()).toBe(0);
  });

  it('marks the work done or not in the ledger, and keeps the bodies when asked', async () => {
    harness = await startTestSandbox({
      ledgerBodies: true,
      faults: [
        { kind: 'reset', operation: 'ai35-1', times: 1 },
        { kind: 'reset', when: 'after', operation: 'ai35-1', times: 1 },
      ],
    });
    await expect(harness.call('ai35-1', submit)).rejects.toThrow();
    await expect(harness.call('ai35-1', submit)).rejects.toThrow();
    await harness.ok('p001', count);
    expect(harness.sandbox.ledger.entries().map(({ workDone, body }) => ({ workDone, body }))).toEqual([
      { workDone: undefined, body: undefined },
      { workDone: true, body: submit },
      { workDone: true, body: count },
    ]);
  });

  it('resets after the work: the task exists, so a blind retry is a duplicate create', async () => {
    const h = await withFaults([{ kind: 'reset', when: 'after', operation: 'ai35-1', times: 1 }]);
    await expect(h.call('ai35-1', submit)).rejects.toThrow();
    await h.ok('ai35-1', submit);
    expect(h.sandbox.ledger.duplicateCreates()).toBe(1);
    expect(h.sandbox.ledger.entries({ fault: 'reset' })[0]?.resourceId).toMatch(/^[0-9a-f]{32}$/);
  });

  it('truncates a body: Content-Length promises more than arrives', async () => {
    const h = await withFaults([{ kind: 'truncated', operation: 'p001' }]);
    const response = await request(`${h.sandbox.url}/search/patent/query-search-count`, {
      method: 'POST',
      headers: { authorization: `Bearer ${SANDBOX_API_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify(count),
    });
    expect(response.statusCode).toBe(200);
    expect(Number(response.headers['content-length'])).toBeGreaterThan(10);
    await expect(response.body.text()).rejects.toThrow();
  });

  it('sends a malformed body that is not JSON', async () => {
    const h = await withFaults([{ kind: 'malformed' }]);
    const answer = await h.call('p001', count);
    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toContain('application/json');
    expect(() => JSON.parse(answer.text)).toThrow();
  });
});

describe('stream faults', () => {
  it('stalls a stream after some frames without ending it', async () => {
    const h = await withFaults([{ kind: 'stall-stream', afterChunks: 3 }]);
    const response = await request(`${h.sandbox.url}/chat/cc-gpt-stream`, {
      method: 'POST',
      headers: { authorization: `Bearer ${SANDBOX_API_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify(prompt),
    });
    const iterator = response.body[Symbol.asyncIterator]();
    let text = '';
    while (dataFrames(text).length < 3) {
      const next = await iterator.next();
      if (next.done) throw new Error('the stream ended');
      text += Buffer.from(next.value).toString('utf8');
    }
    const pending = iterator.next().then(
      (next) => (next.done ? 'ended' : 'more data'),
      () => 'broken',
    );
    const outcome = await Promise.race([
      pending,
      new Promise((resolve) => setTimeout(resolve, 300, 'silent')),
    ]);
    expect(outcome).toBe('silent');
    expect(dataFrames(text)).toHaveLength(3);
    await h.close();
    expect(await pending).not.toBe('more data');
  });

  it('ends a stream early, without a finish frame', async () => {
    const h = await withFaults([{ kind: 'early-end-stream', afterChunks: 2 }]);
    const frames = dataFrames((await h.call('ai07', prompt)).text).map((frame) => JSON.parse(frame));
    expect(frames).toHaveLength(2);
    expect(frames.every((frame) => frame.data.output.status === 'running')).toBe(true);
  });

  it('cuts a stream mid-frame, and sends a frame that is not JSON', async () => {
    const h = await withFaults([
      { kind: 'truncated', operation: 'ai07', times: 1, afterChunks: 1 },
      { kind: 'malformed', operation: 'ai07', times: 1, afterChunks: 1 },
    ]);
    await expect(h.call('ai07', prompt)).rejects.toThrow();
    const frames = dataFrames((await h.call('ai07', prompt)).text);
    const broken = frames.filter((frame) => {
      try {
        JSON.parse(frame);
        return false;
      } catch {
        return true;
      }
    });
    expect(broken).toHaveLength(1);
    expect(frames.indexOf(broken[0] ?? '')).toBe(1);
  });

  it('picks the stream variant by rule, and the header wins over it', async () => {
    const h = await withFaults([{ kind: 'stream-variant', streamVariant: 'openai', operation: 'ai07' }]);
    expect(dataFrames((await h.call('ai07', prompt)).text).at(-1)).toBe('[DONE]');
    const withHeader = await h.call('ai07', prompt, {
      headers: { 'x-sandbox-stream-variant': 'cumulative' },
    });
    expect(JSON.parse(dataFrames(withHeader.text).at(-1) ?? '{}').data.output.status).toBe('finished');
  });
});

describe('rule selection', () => {
  it('targets one operation, applies `times` times, and can be changed at run time', async () => {
    const h = await withFaults([{ kind: 'busy', operation: 'ai35-1', times: 2 }]);
    expect((await h.call('p001', count)).json.error_code).toBe(0);
    const codes = [];
    for (let i = 0; i < 3; i++) codes.push((await h.call('ai35-1', submit)).json.error_code);
    expect(codes).toEqual([PlatformCode.busy, PlatformCode.busy, 0]);
    expect(h.sandbox.faults.rules()).toEqual([]);

    h.sandbox.faults.add({ kind: 'http-5xx' });
    expect((await h.call('p001', count)).status).toBe(503);
    h.sandbox.faults.set([{ kind: 'throttle-200', operation: 'p001' }]);
    expect((await h.call('p001', count)).json.error_code).toBe(PlatformCode.throttled);
    h.sandbox.faults.clear();
    expect((await h.call('p001', count)).json.error_code).toBe(0);
    expect(() => h.sandbox.faults.add({ kind: 'latency' } as FaultRule)).toThrow(/faults\[0\]\.maxMs/);
  });

  it('draws probabilities from the seed: the same pattern for the same seed', async () => {
    const pattern = async (seed: number) => {
      const h = await startTestSandbox({ seed, faults: [{ kind: 'busy', probability: 0.5 }] });
      const codes = [];
      for (let i = 0; i < 24; i++)
        codes.push((await h.call('p001', count)).json.error_code === PlatformCode.busy);
      await h.close();
      return codes;
    };
    const first = await pattern(7);
    expect(await pattern(7)).toEqual(first);
    expect(first.filter(Boolean).length).toBeGreaterThan(3);
    expect(first.filter((busy) => !busy).length).toBeGreaterThan(3);
  });

  it('faults download links only through rules that name `download`', async () => {
    const h = await withFaults([
      { kind: 'http-5xx', operation: 'download', times: 1 },
      { kind: 'truncated', operation: 'download', times: 1 },
    ]);
    const { report_id } = await h.ok('ai34-1', { technical_issues: 'Graphene heat spreaders' });
    h.advance(600_000);
    const { report_url } = await h.ok('ai34-3', { report_id });
    expect((await h.get(report_url)).status).toBe(503);
    await expect(h.get(report_url)).rejects.toThrow();
    expect((await h.get(report_url)).status).toBe(200);
  });
});
