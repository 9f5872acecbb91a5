/**
 * A real HTTP server on 127.0.0.1 (free port) whose answers each test scripts, recording every
 * request it received. Used by the client, stream and redaction tests instead of mocks.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach } from 'vitest';
import {
  createOpenPlatformClient,
  type OpenPlatformClient,
  type OpenPlatformClientOptions,
} from '../../../shared/openplatform';

export interface RecordedRequest {
  method: string;
  /** Path and query as received. */
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

export type ScriptedHandler = (
  request: RecordedRequest,
  response: ServerResponse,
  raw: IncomingMessage,
) => unknown;

export interface ScriptedServer {
  /** `http://127.0.0.1:<port>` */
  url: string;
  requests: RecordedRequest[];
  /** Replace the handler for the next requests. */
  handle(handler: ScriptedHandler): void;
  close(): Promise<void>;
}

export async function startScriptedServer(handler: ScriptedHandler = notScripted): Promise<ScriptedServer> {
  let current = handler;
  const requests: RecordedRequest[] = [];
  const server = createServer((raw, response) => {
    const chunks: Buffer[] = [];
    raw.on('data', (chunk: Buffer) => chunks.push(chunk));
    raw.on('end', () => {
      const request: RecordedRequest = {
        method: raw.method ?? '',
        url: raw.url ?? '',
        headers: raw.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      requests.push(request);
      Promise.resolve(current(request, response, raw)).catch((error: unknown) => {
        response.destroy(error instanceof Error ? error : new Error(String(error)));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    handle: (next) => {
      current = next;
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * The set-up the client tests share, at the top of a test file:
 * `const { server, client } = await scriptedServerForFile(KEY)`. One scripted server for the file,
 * closed after its tests; `client(options)` makes a client against it with the file's key (options
 * override), closed after each test, when the server's recorded requests are also forgotten.
 */
export async function scriptedServerForFile(apiKey: string): Promise<{
  server: ScriptedServer;
  client: (options?: OpenPlatformClientOptions) => OpenPlatformClient;
}> {
  const server = await startScriptedServer();
  const clients: OpenPlatformClient[] = [];
  afterAll(() => server.close());
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((client) => client.close()));
    server.requests.length = 0;
  });
  return {
    server,
    client: (options = {}) => {
      const client = createOpenPlatformClient({ baseUrl: server.url, apiKey, ...options });
      clients.push(client);
      return client;
    },
  };
}

function notScripted(_request: RecordedRequest, response: ServerResponse): void {
  response.writeHead(500, { 'content-type': 'text/plain' }).end('no handler scripted');
}

/** Answer with a JSON body (an envelope unless told otherwise) and extra headers. */
export function answerJson(
  response: ServerResponse,
  body: unknown,
  status = 200,
  headers: Record<string, string> = {},
): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  response
    .writeHead(status, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(text),
      ...headers,
    })
    .end(text);
}

export const okEnvelope = (data: unknown) => ({ data, status: true, error_code: 0 });

/** Write pieces one by one with a pause between them (so frames really arrive split). */
export async function writeSlowly(response: ServerResponse, pieces: string[], pauseMs = 5): Promise<void> {
  for (const piece of pieces) {
    if (response.destroyed) return;
    response.write(piece);
    await new Promise((resolve) => setTimeout(resolve, pauseMs));
  }
}

/** A log sink that keeps every line, for asserting what was (not) logged. */
export function recordingLogger() {
  const lines: { level: string; message: string; fields: Record<string, unknown> | undefined }[] = [];
  const at =
    (level: string) =>
    (message: string, fields?: Record<string, unknown>): void => {
      lines.push({ level, message, fields });
    };
  return { lines, logger: { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') } };
}
