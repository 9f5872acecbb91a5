import { createServer, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import {
  type CallUsage,
  createOpenPlatformClient,
  fileNameFromDisposition,
  nodeHttpTransport,
  type OpenPlatformClientOptions,
  OpenPlatformError,
} from '../../../shared/openplatform';
import { answerJson, okEnvelope, recordingLogger, scriptedServerForFile } from './scripted-server';

const KEY = 'test-key-0123456789';
const { server, client: scriptedClient } = await scriptedServerForFile(KEY);

function clientFor(options: OpenPlatformClientOptions = {}) {
  const usages: CallUsage[] = [];
  const client = scriptedClient({ onUsage: (usage) => usages.push(usage), ...options });
  return { client, usages };
}

async function failureOf(promise: Promise<unknown>): Promise<OpenPlatformError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(OpenPlatformError);
    return error as OpenPlatformError;
  }
  throw new Error('expected the call to fail');
}

/** A port nobody listens on (opened, then closed). */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

describe('call: requests', () => {
  it('POSTs the validated body as JSON with a bearer key and returns typed data', async () => {
    server.handle((_request, response) => answerJson(response, okEnvelope({ task_id: 'task-1' })));
    const { client } = clientFor({ userAgent: 'opflow-test/1' });
    const result = await client.call('ai35-1NoveltySearchSubmit', {
      input: 'a new kind of hinge',
      lang: 'en',
    });
    expect(result.data.task_id).toBe('task-1');
    const [request] = server.requests;
    expect(request).toMatchObject({ method: 'POST', url: '/ai/novelty-search/submit' });
    expect(request?.headers['authorization']).toBe(`Bearer ${KEY}`);
    expect(request?.headers['content-type']).toBe('application/json');
    expect(request?.headers['user-agent']).toBe('opflow-test/1');
    expect(JSON.parse(request?.body ?? '')).toEqual({ input: 'a new kind of hinge', lang: 'en' });
  });

  it('sends the key as apikey= instead when auth is query, and a per-call key overrides the default', async () => {
    server.handle((_request, response) => answerJson(response, okEnvelope({ task_id: 't' })));
    const { client } = clientFor({ auth: 'query' });
    await client.call('ai33-2Step2V3', { task_id: 't' }, { apiKey: 'tenant-key' });
    const [request] = server.requests;
    expect(request?.headers['authorization']).toBeUndefined();
    expect(new URL(request?.url ?? '', server.url).searchParams.get('apikey')).toBe('tenant-key');
  });

  it('sends the GET operation (ai34-3) as query parameters without a body', async () => {
    server.handle((_request, response) =>
      answerJson(response, okEnvelope({ report_status: 'SUCCEED', report_url: 'http://x/r.html' })),
    );
    const { client } = clientFor();
    const result = await client.call('ai34-3QuickSearchReportQuery', { report_id: 'r 1&2' });
    expect(result.data.report_status).toBe('SUCCEED');
    const [request] = server.requests;
    expect(request?.method).toBe('GET');
    expect(request?.body).toBe('');
    expect(new URL(request?.url ?? '', server.url).searchParams.get('report_id')).toBe('r 1&2');
  });

  it('reuses keep-alive connections, at most `connections` of them', async () => {
    const sockets = new Set<number | undefined>();
    server.handle((_request, response, raw) => {
      sockets.add(raw.socket.remotePort);
      answerJson(response, okEnvelope({ task_id: 't' }));
    });
    const pooled = clientFor().client;
    for (let index = 0; index < 6; index++) await pooled.call('ai33-2Step2V3', { task_id: 't' });
    expect(sockets.size).toBeLessThan(6);
    sockets.clear();
    const single = clientFor({ connections: 1 }).client;
    await Promise.all(Array.from({ length: 4 }, () => single.call('ai33-2Step2V3', { task_id: 't' })));
    expect(server.requests).toHaveLength(10);
    expect(sockets.size).toBe(1);
  });

  it("retires an idle connection a second before the server's Keep-Alive timeout", async () => {
    const sockets: (number | undefined)[] = [];
    server.handle((_request, response, raw) => {
      sockets.push(raw.socket.remotePort);
      response.setHeader('keep-alive', 'timeout=2');
      answerJson(response, okEnvelope({ task_id: 't' }));
    });
    const { client } = clientFor({ connections: 1 });
    await client.call('ai33-2Step2V3', { task_id: 't' });
    await client.call('ai33-2Step2V3', { task_id: 't' });
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    await client.call('ai33-2Step2V3', { task_id: 't' });
    // The first two share a connection; after 1 s idle (2 s announced, less a second) it is closed.
    expect(sockets[1]).toBe(sockets[0]);
    expect(sockets[2]).not.toBe(sockets[0]);
  });

  it('keeps a base URL path prefix', async () => {
    server.handle((_request, response) => answerJson(response, okEnvelope({ task_id: 't' })));
    const { client } = clientFor({ baseUrl: `${server.url}/gateway/` });
    await client.call('ai33-2Step2V3', { task_id: 't' });
    expect(server.requests[0]?.url).toBe('/gateway/ai/find-solution/step2/v3');
  });

  it('refuses an invalid body naming each bad field, and sends nothing', async () => {
    const { client, usages } = clientFor();
    const error = await failureOf(
      client.call('ai33-1Step1V3', { lang: 'de', solution_issues: 'x'.repeat(600) } as never),
    );
    expect(error.kind).toBe('invalid-request');
    expect(error.retryable).toBe(false);
    expect(error.message).toContain('lang');
    expect(error.message).toContain('solution_issues');
    expect(server.requests).toHaveLength(0);
    expect(usages).toEqual([
      expect.objectContaining({ ok: false, errorKind: 'invalid-request', billedUnits: 0 }),
    ]);
  });

  it('refuses a call without any API key, sending nothing', async () => {
    const client = scriptedClient({ apiKey: undefined });
    const error = await failureOf(client.call('ai33-2Step2V3', { task_id: 't' }));
    expect(error.kind).toBe('auth');
    expect(server.requests).toHaveLength(0);
  });

  it('refuses a streaming operation in call() unless it asks for stream: false, sending nothing', async () => {
    const { client, usages } = clientFor();
    const always = await failureOf(client.call('ai20ChatPharmGptStream', { query: 'q' }));
    expect(always).toMatchObject({ kind: 'invalid-request', operationId: 'ai20ChatPharmGptStream' });
    expect(always.message).toContain('use stream()');
    expect(always.message).not.toContain('stream: false');
    const byDefault = await failureOf(client.call('ai07ChatCcGptStream', { prompt: 'p' }));
    expect(byDefault.message).toContain('call() with stream: false');
    expect(server.requests).toHaveLength(0);
    expect(usages.map((usage) => usage.errorKind)).toEqual(['invalid-request', 'invalid-request']);

    server.handle((_request, response) =>
      answerJson(response, okEnvelope({ output: { content: 'whole', status: 'finished' } })),
    );
    const whole = await client.call('ai07ChatCcGptStream', { prompt: 'p', stream: false });
    expect(whole.data.output?.content).toBe('whole');
    expect(JSON.parse(server.requests[0]?.body ?? '')).toEqual({ prompt: 'p', stream: false });
  });

  it('accepts data: null in a success as empty data', async () => {
    server.handle((_request, response) =>
      answerJson(response, { data: null, status: 'true', error_code: '0' }),
    );
    const { client } = clientFor();
    const result = await client.call('ai35-3TechSolutionUpdate', { task_id: 't', tech_solution: 'x' });
    expect(result.data).toEqual({});
  });
});

describe('call: options', () => {
  it.each([
    [{ baseUrl: 'ftp://example.com' }, 'baseUrl'],
    [{ connectTimeoutMs: -1 }, 'connectTimeoutMs'],
    [{ auth: 'cookie' }, 'auth'],
    [{ apiKey: '' }, 'apiKey'],
    [{ logger: { info: () => undefined } }, 'logger'],
    [{ retries: 3 }, 'retries'],
  ])('refuses %j naming the option', (options, name) => {
    expect(() => createOpenPlatformClient(options as never)).toThrow(name);
  });

  it('refuses a call after close()', async () => {
    const { client } = clientFor();
    await client.close();
    const error = await failureOf(client.call('ai33-2Step2V3', { task_id: 't' }));
    expect(error.message).toContain('closed');
  });
});

describe('call: error answers', () => {
  it.each([
    [67200002, 'throttled', true],
    [68300008, 'busy', true],
    [67200001, 'quota-exhausted', false],
    [67200004, 'forbidden', false],
    [68300004, 'invalid-request', false],
  ] as const)('maps a 200 with status false and code %i to %s', async (code, kind, retryable) => {
    server.handle((_request, response) =>
      answerJson(
        response,
        { data: null, status: 'false', error_code: String(code), error_msg: 'upstream says no' },
        200,
        {
          'x-correlation-id': 'corr-7',
        },
      ),
    );
    const { client } = clientFor();
    const error = await failureOf(client.call('ai35-1NoveltySearchSubmit', { input: 'x', lang: 'en' }));
    expect(error).toMatchObject({
      kind,
      retryable,
      code,
      httpStatus: 200,
      operationId: 'ai35-1NoveltySearchSubmit',
      correlationId: 'corr-7',
    });
    expect(error.message).toContain('upstream says no');
  });

  it.each([
    [401, 'auth'],
    [403, 'forbidden'],
    [404, 'not-found'],
    [429, 'throttled'],
    [500, 'server'],
    [503, 'server'],
  ] as const)('maps HTTP %i without envelope to %s', async (status, kind) => {
    server.handle((_request, response) => response.writeHead(status).end());
    const { client } = clientFor();
    const error = await failureOf(client.call('ai33-2Step2V3', { task_id: 't' }));
    expect(error).toMatchObject({ kind, httpStatus: status, code: undefined });
  });

  it('lets the envelope code of a non-2xx answer win, and quotes an HTML body', async () => {
    server.handle((request, response) =>
      request.url.includes('step2')
        ? answerJson(response, { status: false, error_code: 67200202, error_msg: 'apikey auth error' }, 401)
        : response.writeHead(502, { 'content-type': 'text/html' }).end('<html>Bad Gateway</html>'),
    );
    const { client } = clientFor();
    const auth = await failureOf(client.call('ai33-2Step2V3', { task_id: 't' }));
    expect(auth).toMatchObject({ kind: 'auth', code: 67200202, httpStatus: 401 });
    const gateway = await failureOf(client.call('ai33-6Step5V3', { task_id: 't' }));
    expect(gateway).toMatchObject({ kind: 'server', retryable: true });
    expect(gateway.message).toContain('Bad Gateway');
  });

  it('reads Retry-After as seconds and as an HTTP date', async () => {
    const now = Date.parse('2025-03-01T12:00:00Z');
    server.handle((request, response) =>
      response
        .writeHead(429, {
          'retry-after': request.url.includes('step2') ? '7' : 'Sat, 01 Mar 2025 12:00:42 GMT',
        })
        .end(),
    );
    const { client } = clientFor({ now: () => now });
    expect((await failureOf(client.call('ai33-2Step2V3', { task_id: 't' }))).retryAfterMs).toBe(7000);
    expect((await failureOf(client.call('ai33-6Step5V3', { task_id: 't' }))).retryAfterMs).toBe(42_000);
  });

  it.each([
    ['truncated JSON', '{"data":{"task_id":"t1"},"status":tr'],
    ['not JSON', 'hello'],
    ['an empty body', ''],
    ['data of the wrong shape', '{"data":"just text","status":true,"error_code":0}'],
    ['a JSON array', '[]'],
  ])('calls a 200 with %s a protocol error', async (_what, body) => {
    server.handle((_request, response) => answerJson(response, body));
    const { client } = clientFor();
    const error = await failureOf(client.call('ai33-2Step2V3', { task_id: 't' }));
    expect(error).toMatchObject({ kind: 'protocol', retryable: false, httpStatus: 200 });
  });

  it('refuses an answer larger than maxAnswerBytes, naming the limit', async () => {
    server.handle((_request, response) =>
      answerJson(response, okEnvelope({ status: 'RUNNING', padding: 'x'.repeat(5000) })),
    );
    const { client, usages } = clientFor({ maxAnswerBytes: 1000 });
    const error = await failureOf(client.call('ai33-2Step2V3', { task_id: 't' }));
    expect(error).toMatchObject({ kind: 'protocol', httpStatus: 200, operationId: 'ai33-2Step2V3' });
    expect(error.message).toContain('larger than the accepted 1000 bytes');
    expect(usages[0]).toMatchObject({ ok: false, errorKind: 'protocol' });
  });

  it('calls an answer cut off before its Content-Length a protocol error, retryable only for a read', async () => {
    server.handle((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': 200 });
      response.write('{"data":{"task_id":"t1"},', () => response.socket?.destroy());
    });
    const { client } = clientFor();
    const create = await failureOf(client.call('ai33-1Step1V3', { lang: 'en', solution_issues: 'x' }));
    const read = await failureOf(client.call('ai33-2Step2V3', { task_id: 't' }));
    expect(create).toMatchObject({ kind: 'protocol', retryable: false, httpStatus: 200 });
    expect(create.message).toContain('cut off');
    expect(read).toMatchObject({ kind: 'protocol', retryable: true, httpStatus: 200 });
  });
});

describe('call: usage accounting', () => {
  it('reports billed units, correlation id and duration for a success and a failure', async () => {
    let clock = 1_000;
    server.handle((request, response) => {
      clock += 250;
      if (request.url.includes('step2')) {
        answerJson(response, okEnvelope({ status: 'RUNNING' }), 200, {
          'x-correlation-id': 'c-ok',
          'x-openapi-amount': '2',
        });
      } else {
        answerJson(response, { status: false, error_code: 68300008 }, 200, {
          'x-correlation-id': 'c-busy',
          'x-openapi-amount': 'one',
        });
      }
    });
    const { client, usages } = clientFor({ now: () => clock });
    const result = await client.call('ai33-2Step2V3', { task_id: 't' });
    const error = await failureOf(client.call('ai33-6Step5V3', { task_id: 't' }));
    expect(result.usage).toEqual({
      operationId: 'ai33-2Step2V3',
      durationMs: 250,
      httpStatus: 200,
      correlationId: 'c-ok',
      billedUnits: 2,
      ok: true,
      errorKind: undefined,
    });
    expect(error.usage).toMatchObject({
      operationId: 'ai33-6Step5V3',
      durationMs: 250,
      correlationId: 'c-busy',
      billedUnits: 0,
      ok: false,
      errorKind: 'busy',
    });
    expect(usages).toEqual([result.usage, error.usage]);
  });

  it('survives an onUsage callback that throws, and logs that it did', async () => {
    server.handle((_request, response) => answerJson(response, okEnvelope({})));
    const { lines, logger } = recordingLogger();
    const { client } = clientFor({
      logger,
      onUsage: () => {
        throw new Error('meter broken');
      },
    });
    await expect(client.call('ai33-2Step2V3', { task_id: 't' })).resolves.toBeDefined();
    expect(lines.some((line) => line.message.includes('onUsage'))).toBe(true);
  });
});

describe('call: network failures and the retry rule', () => {
  it('keeps a refused connection retryable even for an operation that creates something', async () => {
    const port = await closedPort();
    const { client, usages } = clientFor({ baseUrl: `http://127.0.0.1:${port}` });
    const error = await failureOf(client.call('ai35-1NoveltySearchSubmit', { input: 'x', lang: 'en' }));
    expect(error).toMatchObject({ kind: 'network', retryable: true, httpStatus: undefined });
    expect(error.message).toContain('nothing was sent');
    expect(usages[0]).toMatchObject({ ok: false, errorKind: 'network', httpStatus: undefined });
  });

  it('keeps a connect timeout retryable (nothing was sent)', async () => {
    // An address lookup that never answers keeps the connection connecting past its limit.
    const transport = nodeHttpTransport({ connections: 1, connectTimeoutMs: 100, lookup: () => undefined });
    const { client } = clientFor({ baseUrl: 'http://platform.invalid:8080', transport });
    const error = await failureOf(client.call('ai35-1NoveltySearchSubmit', { input: 'x', lang: 'en' }));
    expect(error).toMatchObject({ kind: 'timeout', retryable: true, unsent: true });
    expect(error.message).toContain('nothing was sent');
    expect(server.requests).toHaveLength(0);
    await transport.close();
  });

  it.each([
    ['ai35-1NoveltySearchSubmit', false, { input: 'x', lang: 'en' }],
    ['ai35-3TechSolutionUpdate', false, { task_id: 't' }],
    ['ai35-2TechSolutionGet', true, { task_id: 't' }],
  ] as const)(
    'a socket destroyed before answering %s is network, retryable=%s',
    async (op, retryable, body) => {
      server.handle((_request, response) => {
        response.socket?.destroy();
      });
      const { client } = clientFor();
      const error = await failureOf(client.call(op, body as never));
      expect(error).toMatchObject({ kind: 'network', retryable, operationId: op });
      if (!retryable) expect(error.message).toContain('may have been processed');
    },
  );

  it('treats a connection reset before any answer as network, not retryable for a create', async () => {
    server.handle((_request, response) => {
      (response.socket as Socket | null)?.resetAndDestroy();
    });
    const { client } = clientFor();
    const error = await failureOf(client.call('ai35-1NoveltySearchSubmit', { input: 'x', lang: 'en' }));
    expect(error).toMatchObject({ kind: 'network', retryable: false, httpStatus: undefined });
    expect((error.cause as { code?: string }).code).toBe('ECONNRESET');
  });
});

describe('call: timeouts', () => {
  it('times out waiting for headers: retryable for a read, not for a create', async () => {
    server.handle(() => {
      // never answers
    });
    const { client } = clientFor({ headersTimeoutMs: 100 });
    const create = await failureOf(client.call('ai35-1NoveltySearchSubmit', { input: 'x', lang: 'en' }));
    const read = await failureOf(client.call('ai35-2TechSolutionGet', { task_id: 't' }));
    expect(create).toMatchObject({ kind: 'timeout', retryable: false });
    expect(read).toMatchObject({ kind: 'timeout', retryable: true });
  });

  it('times out between body pieces (body timeout)', async () => {
    server.handle((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.write('{"data":');
    });
    const { client } = clientFor({ bodyTimeoutMs: 100 });
    const error = await failureOf(client.call('ai35-1NoveltySearchSubmit', { input: 'x', lang: 'en' }));
    expect(error).toMatchObject({ kind: 'timeout', retryable: false, httpStatus: 200 });
  });

  it('applies the overall per-call time limit', async () => {
    server.handle(() => undefined);
    const { client } = clientFor();
    const error = await failureOf(client.call('ai35-2TechSolutionGet', { task_id: 't' }, { timeoutMs: 80 }));
    expect(error).toMatchObject({ kind: 'timeout', retryable: true });
    expect(error.message).toContain('80 ms');
  });

  it('stops when the caller aborts', async () => {
    server.handle(() => undefined);
    const { client } = clientFor();
    const controller = new AbortController();
    const pending = client.call(
      'ai35-1NoveltySearchSubmit',
      { input: 'x', lang: 'en' },
      { signal: controller.signal },
    );
    setTimeout(() => controller.abort(), 30);
    const error = await failureOf(pending);
    expect(error.message).toContain('aborted by the caller');
    expect(error.retryable).toBe(false);
  });
});

describe('callByName', () => {
  it('resolves a short documentation name', async () => {
    server.handle((_request, response) => answerJson(response, okEnvelope({ task_id: 'n1' })));
    const { client } = clientFor();
    const result = await client.callByName('ai35-1', { input: 'x', lang: 'en' });
    expect(result.data).toEqual({ task_id: 'n1' });
    expect(server.requests[0]?.url).toBe('/ai/novelty-search/submit');
  });

  it('refuses an unknown name listing close matches', async () => {
    const { client } = clientFor();
    const error = await failureOf(client.callByName('ai35-13', {}));
    expect(error.kind).toBe('invalid-request');
    expect(error.message).toContain('unknown operation "ai35-13"');
    expect(error.message).toContain('ai35-1');
    expect(error.message).toContain('ai35-12');
  });

  it('still validates the body', async () => {
    const { client } = clientFor();
    const error = await failureOf(client.callByName('ai35-1NoveltySearchSubmit', { input: 'x' }));
    expect(error.message).toContain('lang');
    expect(server.requests).toHaveLength(0);
  });
});

describe('fetchDocument', () => {
  it('downloads bytes with their type and name, without sending any key', async () => {
    const bytes = Buffer.from([0x50, 0x4b, 0x03, 0x04, 0xff]);
    server.handle((_request, response) =>
      response
        .writeHead(200, {
          'content-type': 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
          'content-disposition': `attachment; filename="x.docx"; filename*=UTF-8''disclosure%20r%C3%A9sum%C3%A9.docx`,
        })
        .end(bytes),
    );
    for (const auth of ['header', 'query'] as const) {
      const { client } = clientFor({ auth });
      const document = await client.fetchDocument(`${server.url}/files/abc?X-Amz-Signature=s1g&expires=1`);
      expect(Buffer.from(document.body)).toEqual(bytes);
      expect(document.contentType).toContain('wordprocessingml');
      expect(document.fileName).toBe('disclosure résumé.docx');
      expect(document.usage).toMatchObject({ operationId: 'fetchDocument', ok: true });
    }
    for (const request of server.requests) {
      expect(request.headers['authorization']).toBeUndefined();
      expect(request.url).not.toContain('apikey');
      expect(request.url).not.toContain(KEY);
    }
  });

  it('names the file after the URL path when there is no Content-Disposition, and follows redirects', async () => {
    server.handle((request, response) => {
      if (request.url.startsWith('/moved')) {
        response.writeHead(302, { location: '/reports/pre%20research.html' }).end();
      } else {
        response.writeHead(200, { 'content-type': 'text/html' }).end('<h1>report</h1>');
      }
    });
    const { client } = clientFor();
    const document = await client.fetchDocument(`${server.url}/moved`);
    expect(document.fileName).toBe('pre research.html');
    expect(Buffer.from(document.body).toString()).toBe('<h1>report</h1>');
  });

  it.each([403, 404, 410])(
    'calls HTTP %i an expired link (not-found) and logs the URL redacted',
    async (status) => {
      server.handle((_request, response) => response.writeHead(status).end('gone'));
      const { lines, logger } = recordingLogger();
      const { client } = clientFor({ logger });
      const error = await failureOf(
        client.fetchDocument(`${server.url}/r.pdf?Signature=SECRETSIG&OSSAccessKeyId=AK1`),
      );
      expect(error).toMatchObject({ kind: 'not-found', retryable: false, httpStatus: status });
      expect(error.message).toContain('expired');
      const everything = JSON.stringify(lines) + error.message + error.stack;
      expect(everything).not.toContain('SECRETSIG');
      expect(everything).not.toContain('AK1');
      expect(everything).toContain('Signature=***');
    },
  );

  it('maps other failures by status and refuses a non-http URL', async () => {
    server.handle((_request, response) => response.writeHead(503).end());
    const { client } = clientFor();
    expect((await failureOf(client.fetchDocument(`${server.url}/r.pdf`))).kind).toBe('server');
    expect((await failureOf(client.fetchDocument('file:///etc/passwd'))).kind).toBe('invalid-request');
  });

  it('refuses a document larger than the limit', async () => {
    server.handle((_request, response) => response.writeHead(200).end(Buffer.alloc(5000)));
    const { client } = clientFor({ maxDocumentBytes: 1000 });
    expect((await failureOf(client.fetchDocument(`${server.url}/big.bin`))).message).toContain('larger');
  });
});

describe('fileNameFromDisposition', () => {
  it.each([
    ['attachment; filename="report.docx"', 'report.docx'],
    ['attachment; filename=plain.pdf', 'plain.pdf'],
    ["attachment; filename*=UTF-8''%E6%8A%A5%E5%91%8A.pdf", '报告.pdf'],
    ['attachment; filename="../../etc/passwd"', 'passwd'],
    ['inline', undefined],
    [undefined, undefined],
  ])('%j gives %j', (header, name) => {
    expect(fileNameFromDisposition(header)).toBe(name);
  });
});
