/**
 * The sandbox over real HTTP: authentication both ways, 401/403, validation errors that name the
 * field, QPS and quota limits, headers, the admin endpoints, the ledger and the banner.
 */
import { once } from 'node:events';
import { connect } from 'node:net';
import { request } from 'undici';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { catalogue, operationIds } from '../../../shared/openplatform/catalogue';
import {
  keyFingerprint,
  PlatformCode,
  patentCountFor,
  SANDBOX_API_KEY,
  sandboxBanner,
  startSandbox,
} from '../../../shared/sandbox';
import { startTestSandbox, type TestSandbox } from './sandbox-harness';

let harness: TestSandbox | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

const count = { query_text: 'TACD:(lithium battery)' };

describe('authentication', () => {
  it('accepts the key in the Authorization header and in the apikey query parameter', async () => {
    harness = await startTestSandbox();
    const viaHeader = await harness.call('p001', count);
    const viaQuery = await harness.call('p001', count, { via: 'query' });
    expect(viaHeader.status).toBe(200);
    expect(viaHeader.json).toEqual({
      data: { total_search_result_count: patentCountFor(count.query_text) },
      status: true,
      error_code: 0,
    });
    expect(viaQuery.json).toEqual(viaHeader.json);
  });

  it('answers 401 with 67200008 without a key and 67200202 for an unknown key', async () => {
    harness = await startTestSandbox();
    const missing = await harness.call('p001', count, { key: null });
    expect(missing.status).toBe(401);
    expect(missing.json).toMatchObject({ status: false, error_code: PlatformCode.missingKey });
    const unknownHeader = await harness.call('p001', count, { key: 'sk-not-a-real-key' });
    const unknownQuery = await harness.call('p001', count, { key: 'sk-not-a-real-key', via: 'query' });
    for (const answer of [unknownHeader, unknownQuery]) {
      expect(answer.status).toBe(401);
      expect(answer.json).toMatchObject({ status: false, error_code: PlatformCode.unknownKey });
      expect(answer.text).not.toContain('sk-not-a-real-key');
    }
  });

  it('answers 403 with 67200004 when the key lacks the operation group', async () => {
    harness = await startTestSandbox({ keys: [{ key: 'sk-search-only', groups: ['Patent Data Search'] }] });
    expect((await harness.call('p001', count, { key: 'sk-search-only' })).status).toBe(200);
    const denied = await harness.call('ai35-1', { input: 'x', lang: 'en' }, { key: 'sk-search-only' });
    expect(denied.status).toBe(403);
    expect(denied.json).toMatchObject({ status: false, error_code: PlatformCode.forbidden });
    expect(denied.json.error_msg).toContain('Novelty Search');
  });

  it('keeps one key’s tasks invisible to another key (404)', async () => {
    harness = await startTestSandbox({ keys: [{ key: 'sk-a' }, { key: 'sk-b' }] });
    const { task_id } = await harness.ok('ai35-1', { input: 'A lamp.', lang: 'en' }, { key: 'sk-a' });
    const other = await harness.call('ai35-2', { task_id }, { key: 'sk-b' });
    expect(other.status).toBe(404);
    expect(other.json.error_code).toBe(PlatformCode.notFound);
  });
});

describe('validation', () => {
  it('answers the invalid-parameter envelope naming each wrong field', async () => {
    harness = await startTestSandbox();
    const answer = await harness.call('ai33-1', { lang: 'fr', extra: true });
    expect(answer.status).toBe(200);
    expect(answer.json.status).toBe(false);
    expect(answer.json.error_code).toBe(PlatformCode.invalidParameter);
    expect(answer.json.error_msg).toContain('lang:');
    expect(answer.json.error_msg).toContain('solution_issues: is required');
    expect(answer.json.error_msg).toContain('extra: unknown field');
  });

  it('names nested fields with their index', async () => {
    harness = await startTestSandbox();
    const answer = await harness.call('ai33-5', {
      task_id: 't',
      lang: 'en',
      directions: [{ ticked: 'yes' }],
    });
    expect(answer.json.error_msg).toContain('directions[0].ticked');
  });

  it('refuses a body that is not JSON, and validates the query of the GET operation', async () => {
    harness = await startTestSandbox();
    const notJson = await harness.call('p001', undefined, { rawBody: '{"query_text": ' });
    expect(notJson.json).toMatchObject({ status: false, error_code: PlatformCode.invalidParameter });
    expect(notJson.json.error_msg).toContain('not valid JSON');
    const noReport = await harness.call('ai34-3', {});
    expect(noReport.json.error_msg).toContain('report_id: is required');
  });

  it('answers an unknown path with 404 and 67200101', async () => {
    harness = await startTestSandbox();
    const response = await request(`${harness.sandbox.url}/ai/nothing-here`, { method: 'POST', body: '{}' });
    expect(response.statusCode).toBe(404);
    expect(await response.body.json()).toMatchObject({ status: false, error_code: PlatformCode.notFound });
  });

  it('serves every catalogue operation at its method and path', async () => {
    harness = await startTestSandbox();
    for (const id of operationIds) {
      const entry = catalogue[id];
      const response = await request(`${harness.sandbox.url}${entry.path}`, {
        method: entry.method,
        headers: { authorization: `Bearer ${SANDBOX_API_KEY}`, 'content-type': 'application/json' },
        ...(entry.method === 'POST' ? { body: '{"definitely_not_a_field": 1}' } : {}),
      });
      const body = (await response.body.json()) as { error_code: number };
      expect([id, response.statusCode, body.error_code]).toEqual([id, 200, PlatformCode.invalidParameter]);
    }
  });
});

describe('headers and billing', () => {
  it('sends x-correlation-id on every answer and x-openapi-amount on billed ones', async () => {
    harness = await startTestSandbox();
    const read = await harness.call('p001', count);
    const create = await harness.call('ai35-1', { input: 'A lamp with a sensor.', lang: 'en' });
    const refused = await harness.call('p001', count, { key: null });
    expect(read.headers['x-openapi-amount']).toBe('1');
    expect(Number(create.headers['x-openapi-amount'])).toBeGreaterThan(1);
    expect(refused.headers['x-openapi-amount']).toBeUndefined();
    const ids = [read, create, refused].map((answer) => answer.headers['x-correlation-id']);
    expect(new Set(ids).size).toBe(3);
    expect(harness.sandbox.ledger.billedUnits()).toBe(1 + Number(create.headers['x-openapi-amount']));
  });
});

describe('limits', () => {
  it('throttles calls over the key’s QPS with 67200002 in a 200, in a sliding one-second window', async () => {
    harness = await startTestSandbox({ keys: [{ key: 'sk-slow', qps: 2 }] });
    const codes = async () => {
      const answer = await harness!.call('p001', count, { key: 'sk-slow' });
      return [answer.status, answer.json.error_code];
    };
    expect(await codes()).toEqual([200, 0]);
    harness.advance(500);
    expect(await codes()).toEqual([200, 0]);
    expect(await codes()).toEqual([200, PlatformCode.throttled]);
    harness.advance(501); // the first call left the window
    expect(await codes()).toEqual([200, 0]);
    expect(harness.sandbox.ledger.count({ errorCode: PlatformCode.throttled })).toBe(1);
  });

  it('can answer QPS overruns with HTTP 429 and Retry-After', async () => {
    harness = await startTestSandbox({ keys: [{ key: 'sk-429', qps: 1, qpsExceededAs: 'http-429' }] });
    await harness.call('p001', count, { key: 'sk-429' });
    const throttled = await harness.call('p001', count, { key: 'sk-429' });
    expect(throttled.status).toBe(429);
    expect(throttled.headers['retry-after']).toBe('1');
    expect(throttled.json.error_code).toBe(PlatformCode.throttled);
  });

  it('answers 67200001 once the key’s quota is used up', async () => {
    harness = await startTestSandbox({ keys: [{ key: 'sk-quota', quota: 2 }] });
    const codes: number[] = [];
    for (let i = 0; i < 4; i++) {
      harness.advance(1000);
      codes.push((await harness.call('p001', count, { key: 'sk-quota' })).json.error_code);
    }
    expect(codes).toEqual([0, 0, PlatformCode.quotaExhausted, PlatformCode.quotaExhausted]);
  });
});

describe('ledger', () => {
  it('records every call with time, operation, fingerprint and outcome, never the raw key', async () => {
    harness = await startTestSandbox();
    await harness.call('p001', count);
    harness.advance(1234);
    await harness.call('p001', count, { key: null });
    await harness.call('ai33-1', { lang: 'xx' });
    const entries = harness.sandbox.ledger.entries();
    expect(entries.map((e) => [e.seq, e.operationId, e.httpStatus, e.errorCode, e.outcome])).toEqual([
      [1, 'p001PatentQuerySearchCount', 200, 0, 'ok'],
      [2, 'p001PatentQuerySearchCount', 401, PlatformCode.missingKey, 'rejected'],
      [3, 'ai33-1Step1V3', 200, PlatformCode.invalidParameter, 'rejected'],
    ]);
    expect(entries[1]?.time).toBe((entries[0]?.time ?? 0) + 1234);
    expect(entries[0]?.keyFingerprint).toBe(keyFingerprint(SANDBOX_API_KEY));
    expect(entries[1]?.keyFingerprint).toBeUndefined();
    expect(JSON.stringify(entries)).not.toContain(SANDBOX_API_KEY);
    expect(harness.sandbox.ledger.count({ operationId: 'p001' })).toBe(2);
    expect(harness.sandbox.ledger.countByOperation()).toEqual({
      p001PatentQuerySearchCount: 2,
      'ai33-1Step1V3': 1,
    });
  });

  it('records a caller that goes away mid-body as abandoned (counted against quota), not as an internal error', async () => {
    const lines: string[] = [];
    harness = await startTestSandbox({
      keys: [{ key: 'sk-quota', quota: 1 }],
      logger: (line) => lines.push(line),
    });
    const socket = connect(harness.sandbox.port, '127.0.0.1');
    await once(socket, 'connect');
    socket.write(
      'POST /search/patent/query-search-count HTTP/1.1\r\nHost: sandbox\r\nAuthorization: Bearer sk-quota\r\n' +
        'Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"query_text":',
    );
    socket.destroy();
    await vi.waitFor(() => expect(harness?.sandbox.ledger.count()).toBe(1));
    expect(harness.sandbox.ledger.entries()[0]).toMatchObject({
      operationId: 'p001PatentQuerySearchCount',
      outcome: 'abandoned',
      httpStatus: 0,
      keyFingerprint: keyFingerprint('sk-quota'),
    });
    expect(lines.join('\n')).not.toContain('internal error');
    expect(lines.join('\n')).toContain('abandoned');
    const next = await harness.call('p001', count, { key: 'sk-quota' });
    expect(next.json.error_code).toBe(PlatformCode.quotaExhausted);
  });

  it('records the work a call started with the duration drawn for it, which is when the task is done', async () => {
    harness = await startTestSandbox({
      taskDurations: { 'ai35-1': { meanMs: 2_000, spreadMs: 1_000, shape: 'skewed' } },
    });
    const { task_id } = await harness.ok('ai35-1', { input: 'A lamp with a motion sensor.', lang: 'en' });
    await harness.ok('ai35-2', { task_id });
    const early = await harness.call('ai35-3', { task_id }); // refused: the summary is not done yet
    expect(early.json.status).toBe(false);
    const [submit, poll, refused] = harness.sandbox.ledger.entries();
    const work = submit?.startedWork;
    // Drawn for the task it belongs to (its salt), so a benchmark can tell one job's tasks from another's.
    expect(work).toEqual([
      { startedBy: 'ai35-1NoveltySearchSubmit', durationMs: expect.any(Number), salt: task_id },
    ]);
    const durationMs = work?.[0]?.durationMs ?? 0;
    expect(durationMs).toBeGreaterThanOrEqual(1_000);
    expect(durationMs).toBeLessThanOrEqual(3_000);
    expect(poll?.startedWork).toBeUndefined();
    expect(refused?.startedWork).toBeUndefined();
    // The drawn duration is the task's: running one millisecond before it, done at it.
    harness.advance(durationMs - 1);
    expect((await harness.ok('ai35-2', { task_id })).status).toBe(1);
    harness.advance(1);
    expect((await harness.ok('ai35-2', { task_id })).status).toBe(2);
    // Confirming the summary starts the features' work, drawn for the confirming operation.
    await harness.ok('ai35-3', { task_id });
    const confirm = harness.sandbox.ledger.entries({ operationId: 'ai35-3' }).at(-1);
    expect(confirm?.startedWork?.map((started) => started.startedBy)).toEqual(['ai35-3TechSolutionUpdate']);
  });

  it('counts tasks created twice from the same input for the same key and operation', async () => {
    harness = await startTestSandbox({ keys: [{ key: 'sk-a' }, { key: 'sk-b' }] });
    const input = { input: 'A lamp with a motion sensor.', lang: 'en' };
    await harness.ok('ai35-1', input, { key: 'sk-a' });
    await harness.ok('ai35-1', { lang: 'en', input: input.input }, { key: 'sk-a' }); // same body, other key order
    await harness.ok('ai35-1', input, { key: 'sk-a' });
    await harness.ok('ai35-1', input, { key: 'sk-b' }); // another key: not a duplicate
    await harness.ok('ai35-1', { ...input, lang: 'cn' }, { key: 'sk-a' }); // another input
    await harness.ok('p001', count, { key: 'sk-a' });
    await harness.ok('p001', count, { key: 'sk-a' }); // reads never count
    expect(harness.sandbox.ledger.duplicateCreates()).toBe(2);
    expect(harness.sandbox.ledger.duplicateCreateGroups()).toEqual([
      expect.objectContaining({
        operationId: 'ai35-1NoveltySearchSubmit',
        count: 3,
        keyFingerprint: keyFingerprint('sk-a'),
      }),
    ]);
  });
});

describe('admin endpoints', () => {
  it('reports health, the ledger and the fault rules, and changes the rules at run time', async () => {
    harness = await startTestSandbox();
    const admin = async (method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, body?: unknown) => {
      const response = await request(`${harness!.sandbox.url}/__sandbox/${path}`, {
        method,
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      // biome-ignore lint/suspicious/noExplicitAny: loose JSON
      return { status: response.statusCode, json: (await response.body.json()) as any };
    };
    expect((await admin('GET', 'health')).json).toMatchObject({ status: 'ok', operations: 356 });

    expect(
      (await admin('POST', 'faults', { kind: 'busy', operation: 'p001', times: 1 })).json.rules,
    ).toHaveLength(1);
    expect((await harness.call('p001', count)).json.error_code).toBe(PlatformCode.busy);
    expect((await harness.call('p001', count)).json.error_code).toBe(0);
    expect((await admin('GET', 'faults')).json.rules).toEqual([]);

    const invalid = await admin('POST', 'faults', { rules: [{ kind: 'latency' }] });
    expect(invalid.status).toBe(400);
    expect(invalid.json.error).toContain('faults[0].maxMs');
    await admin('PUT', 'faults', [{ kind: 'http-5xx', operation: 'ai35-1' }]);
    expect((await admin('GET', 'faults')).json.rules).toEqual([{ kind: 'http-5xx', operation: 'ai35-1' }]);
    await admin('DELETE', 'faults');
    expect(harness.sandbox.faults.rules()).toEqual([]);

    const ledger = await admin('GET', 'ledger?since=1');
    expect(ledger.json.summary.total).toBe(2);
    expect(ledger.json.entries.map((entry: { seq: number }) => entry.seq)).toEqual([2]);
    expect(JSON.stringify(ledger.json)).not.toContain(SANDBOX_API_KEY);
    await admin('DELETE', 'ledger');
    expect(harness.sandbox.ledger.count()).toBe(0);
    expect((await admin('GET', 'nothing')).status).toBe(404);
  });
});

describe('startSandbox', () => {
  it('refuses unknown or malformed options, naming them', async () => {
    await expect(startSandbox({ port: -1 })).rejects.toThrow(/options\.port/);
    await expect(startSandbox({ taskDurations: { 'ai99-1': { meanMs: 1, spreadMs: 0 } } })).rejects.toThrow(
      /taskDurations/,
    );
    // @ts-expect-error an option that does not exist
    await expect(startSandbox({ colour: 'blue' })).rejects.toThrow(/options\.colour: unknown field/);
    await expect(startSandbox({ faults: [{ kind: 'busy', operation: 'ai99-9' }] })).rejects.toThrow(
      /operation/,
    );
  });

  it('prints a banner with the URL, the well-known key and a curl line, but no other key', async () => {
    harness = await startTestSandbox({ keys: [{ key: SANDBOX_API_KEY }, { key: 'sk-private-key' }] });
    const banner = sandboxBanner(harness.sandbox);
    expect(banner).toContain(harness.sandbox.url);
    expect(banner).toContain(SANDBOX_API_KEY);
    expect(banner).toContain('curl -s -X POST');
    expect(banner).toContain('1 configured key');
    expect(banner).not.toContain('sk-private-key');
  });

  it('never reissues an earlier sandbox’s ids unless a seed is given, which makes them repeat', async () => {
    const firstIds = async (options: { seed?: number }) => {
      const sandbox = await startTestSandbox(options);
      try {
        const submit = await sandbox.call('ai35-1', { input: 'A lamp.', lang: 'en' });
        return [submit.json.data.task_id, submit.headers['x-correlation-id']];
      } finally {
        await sandbox.close();
      }
    };
    const [restartedA, restartedB] = [await firstIds({}), await firstIds({})];
    expect(restartedA[0]).toMatch(/^[0-9a-f]{32}$/);
    expect(restartedB[0]).not.toBe(restartedA[0]);
    expect(restartedB[1]).not.toBe(restartedA[1]);
    expect(await firstIds({ seed: 7 })).toEqual(await firstIds({ seed: 7 }));
  });

  it('closes at once while a call waits out a long injected latency, which then gets no answer', async () => {
    const timers = () => process.getActiveResourcesInfo().filter((type) => type === 'Timeout').length;
    const timersBefore = timers();
    const sandbox = await startSandbox({
      faults: [{ kind: 'latency', minMs: 600_000, maxMs: 600_000, operation: 'p001', times: 1 }],
    });
    const pending = request(`${sandbox.url}/search/patent/query-search-count`, {
      method: 'POST',
      headers: { authorization: `Bearer ${SANDBOX_API_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify(count),
    });
    const outcome = pending.then(
      () => 'answered',
      () => 'dropped',
    );
    // The rule is used up once the call is waiting out its latency.
    await vi.waitFor(() => expect(sandbox.faults.rules()).toEqual([]));
    await sandbox.close(); // without ending the wait, this would take ten minutes
    expect(await outcome).toBe('dropped');
    expect(sandbox.ledger.count()).toBe(0);
    // No ten-minute timer is left to keep the process alive.
    expect(timers()).toBeLessThanOrEqual(timersBefore);
  });

  it('closes even with a connection kept alive', async () => {
    const sandbox = await startSandbox();
    await (await request(`${sandbox.url}/__sandbox/health`)).body.text();
    await sandbox.close();
    await expect(request(`${sandbox.url}/__sandbox/health`)).rejects.toThrow();
  });
});
