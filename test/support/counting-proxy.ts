/**
 * A plain HTTP proxy on 127.0.0.1 in front of one service (the job API's gateway, DynamoDB Local),
 * counting what passes: a child process pointed at it is measured from outside, the way a bill
 * counts requests. Each request is named `METHOD /path` (the query left out), or by its
 * `x-amz-target` operation for an AWS JSON API (`DynamoDB_20120810.GetItem`).
 */
import { once } from 'node:events';
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface CountingProxy {
  url: string;
  /** Requests by name since the start (or the last `reset`). */
  counts(): Map<string, number>;
  /** How many requests whose name matches. */
  count(pattern: RegExp): number;
  reset(): void;
  close(): Promise<void>;
}

export async function startCountingProxy(target: string): Promise<CountingProxy> {
  const upstream = new URL(target);
  const seen = new Map<string, number>();
  const server = createServer((request, response) => {
    const operation = request.headers['x-amz-target'];
    const name =
      typeof operation === 'string' ? operation : `${request.method} ${(request.url ?? '/').split('?')[0]}`;
    seen.set(name, (seen.get(name) ?? 0) + 1);
    const forwarded = httpRequest(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: request.method,
        path: request.url,
        headers: { ...request.headers, host: upstream.host },
      },
      (answer) => {
        response.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(response);
      },
    );
    forwarded.on('error', () => {
      if (!response.headersSent) response.writeHead(502);
      response.end();
    });
    request.pipe(forwarded);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    counts: () => new Map(seen),
    count: (pattern) => [...seen].reduce((sum, [name, n]) => sum + (pattern.test(name) ? n : 0), 0),
    reset: () => seen.clear(),
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, 'close').catch(() => undefined);
    },
  };
}
