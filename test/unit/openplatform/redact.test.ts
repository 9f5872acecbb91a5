import type { Socket } from 'node:net';
import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import {
  type HttpTransport,
  type OpenPlatformClientOptions,
  OpenPlatformError,
  redactError,
  redactSecret,
  redactUrl,
} from '../../../shared/openplatform';
import { answerJson, okEnvelope, recordingLogger, scriptedServerForFile } from './scripted-server';

// A key with characters that change under URL encoding, so every encoded form is checked too.
const KEY = 'sk_live/Zq8+w9=SECRET';
const CALL_KEY = 'tenant+KEY/77';
const encodedForms = (secret: string) => [
  secret,
  encodeURIComponent(secret),
  new URLSearchParams({ s: secret }).toString().slice(2),
];

describe('redactUrl', () => {
  it.each([
    ['https://connect.patsnap.com/x?apikey=abc123&a=1', 'https://connect.patsnap.com/x?apikey=***&a=1'],
    ['/x?a=1&APIKEY=abc#frag', '/x?a=1&APIKEY=***#frag'],
    [
      'https://b.s3.amazonaws.com/r.pdf?X-Amz-Signature=f00&X-Amz-Credential=AKIA/x',
      'https://b.s3.amazonaws.com/r.pdf?X-Amz-Signature=***&X-Amz-Credential=***',
    ],
    ['https://user:pw@host/x', 'https://***@host/x'],
    ['GET http://h/p?apikey=k failed', 'GET http://h/p?apikey=*** failed'],
    ['https://h/p?report=1', 'https://h/p?report=1'],
  ])('%s → %s', (url, redacted) => {
    expect(redactUrl(url)).toBe(redacted);
  });
});

describe('redactSecret', () => {
  it('removes the secret in plain and encoded forms, and URL credentials', () => {
    const text = `key ${KEY} in ${encodeURIComponent(KEY)} and ${new URLSearchParams({ apikey: KEY })} and "${JSON.stringify(KEY)}"`;
    const redacted = redactSecret(text, [KEY, undefined, '']);
    for (const form of encodedForms(KEY)) expect(redacted).not.toContain(form);
    expect(redacted).toContain('***');
  });
});

describe('redactError', () => {
  it('copies a cause chain and aggregated errors with their text redacted and their codes kept', () => {
    const inner = Object.assign(new Error(`connect ECONNREFUSED for ${KEY}`), {
      code: 'ECONNREFUSED',
      syscall: 'connect',
    });
    const aggregate = Object.assign(new AggregateError([inner], `all addresses failed ?apikey=${KEY}`), {
      code: 'ECONNREFUSED',
    });
    const outer = new Error(`request to /x?apikey=${encodeURIComponent(KEY)} failed`, { cause: aggregate });
    const copy = redactError(outer, [KEY]);
    const text = inspect(copy, { depth: 20 }) + JSON.stringify(copy) + copy.stack;
    for (const form of encodedForms(KEY)) expect(text).not.toContain(form);
    expect((copy.cause as { code?: string }).code).toBe('ECONNREFUSED');
    expect((copy.cause as { errors?: { syscall?: string }[] }).errors?.[0]?.syscall).toBe('connect');
  });
});

const { server, client: scriptedClient } = await scriptedServerForFile(KEY);

/** Everything that could carry the key out of an error: message, stack, cause chain, JSON, inspect. */
function serialiseError(error: unknown): string {
  const parts: string[] = [];
  let current: unknown = error;
  for (let depth = 0; current !== undefined && current !== null && depth < 20; depth++) {
    if (current instanceof Error) parts.push(current.message, String(current.stack), String(current));
    parts.push(JSON.stringify(current) ?? '', inspect(current, { depth: 20, showHidden: false }));
    current = (current as { cause?: unknown }).cause;
  }
  return parts.join('\n');
}

function assertNoKey(text: string) {
  for (const secret of [KEY, CALL_KEY]) {
    for (const form of encodedForms(secret)) expect(text).not.toContain(form);
  }
}

describe.each(['header', 'query'] as const)('the key never leaks (auth by %s)', (auth) => {
  function clientFor(options: OpenPlatformClientOptions = {}) {
    const { lines, logger } = recordingLogger();
    const client = scriptedClient({ auth, logger, ...options });
    return { client, lines };
  }

  async function failureText(promise: Promise<unknown>, lines: unknown[]): Promise<OpenPlatformError> {
    try {
      await promise;
    } catch (error) {
      expect(error).toBeInstanceOf(OpenPlatformError);
      assertNoKey(serialiseError(error));
      assertNoKey(JSON.stringify(lines));
      return error as OpenPlatformError;
    }
    throw new Error('expected a failure');
  }

  it('logs a success with a redacted URL and no key, though the key was sent', async () => {
    server.handle((_request, response) => answerJson(response, okEnvelope({ task_id: 't' })));
    const { client, lines } = clientFor();
    await client.call('ai33-2Step2V3', { task_id: 't' });
    await client.call('ai33-2Step2V3', { task_id: 't' }, { apiKey: CALL_KEY });
    const sent = server.requests.slice(-2);
    expect(JSON.stringify(sent.map((request) => [request.url, request.headers['authorization']]))).toContain(
      auth === 'header' ? `Bearer ${KEY}` : encodeURIComponent(KEY).slice(0, 6),
    );
    assertNoKey(JSON.stringify(lines));
    const logged = lines.find((line) => line.fields?.['url'] !== undefined)?.fields?.['url'];
    expect(logged).toContain('/ai/find-solution/step2/v3');
    if (auth === 'query') expect(logged).toContain('apikey=***');
  });

  it('keeps the key out of an error answer that echoes it', async () => {
    server.handle((request, response) =>
      answerJson(
        response,
        {
          status: false,
          error_code: 67200202,
          error_msg: `apikey ${KEY} / ${CALL_KEY} auth error at ${request.url}`,
        },
        401,
      ),
    );
    const { client, lines } = clientFor();
    const error = await failureText(
      client.call('ai33-2Step2V3', { task_id: 't' }, { apiKey: CALL_KEY }),
      lines,
    );
    expect(error.kind).toBe('auth');
    expect(error.message).toContain('***');
  });

  it('keeps the key out of a connection reset before the answer', async () => {
    server.handle((_request, response) => {
      (response.socket as Socket | null)?.resetAndDestroy();
    });
    const { client, lines } = clientFor();
    const error = await failureText(
      client.call('ai33-2Step2V3', { task_id: 't' }, { apiKey: CALL_KEY }),
      lines,
    );
    expect(error.kind).toBe('network');
    expect(error.cause).toBeDefined();
  });

  it('keeps the key out of a connection closed mid-answer', async () => {
    server.handle((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.write('{"data":', () => response.socket?.destroy());
    });
    const { client, lines } = clientFor();
    const error = await failureText(
      client.call('ai35-1NoveltySearchSubmit', { input: 'x', lang: 'en' }),
      lines,
    );
    expect(error.kind).toBe('protocol');
    expect(error.cause).toBeDefined();
  });

  it('keeps the key out of a timeout mid-request', async () => {
    server.handle(() => undefined);
    const { client, lines } = clientFor({ headersTimeoutMs: 50 });
    const error = await failureText(
      client.call('ai35-2TechSolutionGet', { task_id: 't' }, { apiKey: CALL_KEY }),
      lines,
    );
    expect(error.kind).toBe('timeout');
  });

  it('keeps the key out of a stream that fails mid-way', async () => {
    server.handle((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write(`data: {"unexpected": "${KEY}"}\n\n`);
    });
    const { client, lines } = clientFor();
    const error = await failureText(client.stream('ai07ChatCcGptStream', { prompt: 'p' }), lines);
    expect(error.kind).toBe('protocol');
  });

  it('wraps an HTTP-stack error that quotes the request URL and headers in its message and cause', async () => {
    // An interceptor standing for any layer of the HTTP stack that puts the request in its errors.
    const transport: HttpTransport = {
      request: async (options) => {
        const request = `${options.method} ${options.origin}${options.path} ${JSON.stringify(options.headers)}`;
        throw new Error(`request failed: ${request}`, { cause: new Error(`inner: ${request}`) });
      },
      close: async () => undefined,
    };
    const { client, lines } = clientFor({ transport });
    const error = await failureText(client.call('ai33-2Step2V3', { task_id: 't' }), lines);
    expect(error.kind).toBe('network');
    expect(serialiseError(error)).toContain('/ai/find-solution/step2/v3');
  });
});
