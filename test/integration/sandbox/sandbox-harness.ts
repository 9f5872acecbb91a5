/**
 * Test harness for the sandbox suites: a sandbox on a free port with a hand-driven clock, and small
 * helpers to call operations over real HTTP (undici) the way a client would.
 */
import { Agent, type Dispatcher, request } from 'undici';
import { findOperation } from '../../../shared/openplatform/catalogue';
import { SANDBOX_API_KEY, type Sandbox, type SandboxOptions, startSandbox } from '../../../shared/sandbox';

export interface CallOptions {
  /** The key to send; `null` sends none. Default: the sandbox key. */
  key?: string | null;
  /** How to send it (default: the Authorization header). */
  via?: 'header' | 'query';
  headers?: Record<string, string>;
  /** A raw body instead of JSON. */
  rawBody?: string;
}

export interface CallAnswer {
  status: number;
  headers: Dispatcher.ResponseData['headers'];
  text: string;
  // biome-ignore lint/suspicious/noExplicitAny: tests read answers loosely.
  json: any;
}

export const START_TIME = Date.UTC(2025, 0, 1);

export interface TestSandbox {
  sandbox: Sandbox;
  clock: { now: number };
  advance(ms: number): void;
  /** Call an operation by operationId or short name; GET operations take the body as query. */
  call(ref: string, body?: unknown, options?: CallOptions): Promise<CallAnswer>;
  /** Call and return `data`, failing with the envelope's message when `status` is not true. */
  // biome-ignore lint/suspicious/noExplicitAny: tests read answers loosely.
  ok(ref: string, body?: unknown, options?: CallOptions): Promise<any>;
  get(url: string): Promise<{ status: number; headers: Dispatcher.ResponseData['headers']; body: Buffer }>;
  close(): Promise<void>;
}

/** `clock` lets a restarted sandbox go on with the time of the one before (default: a new one at START_TIME). */
export async function startTestSandbox(
  options: SandboxOptions = {},
  clock: { now: number } = { now: START_TIME },
): Promise<TestSandbox> {
  const sandbox = await startSandbox({ now: () => clock.now, streamChunkDelayMs: 0, ...options });
  // Connections of its own: a sandbox started again on the same port never meets a closed one.
  const dispatcher = new Agent();

  const call = async (
    ref: string,
    body: unknown = {},
    callOptions: CallOptions = {},
  ): Promise<CallAnswer> => {
    const operation = findOperation(ref);
    if (!operation) throw new Error(`no operation ${ref}`);
    const url = new URL(sandbox.url + operation.path);
    const key = callOptions.key === undefined ? SANDBOX_API_KEY : callOptions.key;
    const headers: Record<string, string> = { ...callOptions.headers };
    if (key !== null && callOptions.via === 'query') url.searchParams.set('apikey', key);
    else if (key !== null) headers.authorization = `Bearer ${key}`;
    let payload: string | undefined;
    if (operation.method === 'GET') {
      for (const [name, value] of Object.entries(body as Record<string, string>))
        url.searchParams.set(name, value);
    } else {
      headers['content-type'] = 'application/json';
      payload = callOptions.rawBody ?? JSON.stringify(body);
    }
    const response = await request(url, { method: operation.method, headers, body: payload, dispatcher });
    const text = await response.body.text();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: response.statusCode, headers: response.headers, text, json };
  };

  return {
    sandbox,
    clock,
    advance: (ms) => {
      clock.now += ms;
    },
    call,
    ok: async (ref, body, callOptions) => {
      const answer = await call(ref, body, callOptions);
      if (answer.status !== 200 || answer.json?.status !== true) {
        throw new Error(`${ref} answered HTTP ${answer.status}: ${answer.text}`);
      }
      return answer.json.data;
    },
    get: async (url) => {
      const response = await request(url, { dispatcher });
      return {
        status: response.statusCode,
        headers: response.headers,
        body: Buffer.from(await response.body.arrayBuffer()),
      };
    },
    close: async () => {
      await sandbox.close();
      await dispatcher.destroy();
    },
  };
}

/** The `data:` payloads of an event stream's text, in order. */
export function dataFrames(text: string): string[] {
  return text
    .split('\n\n')
    .map((block) => block.trim())
    .filter((block) => block.startsWith('data:'))
    .map((block) => block.slice('data:'.length).trim());
}
