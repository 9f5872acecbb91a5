// The connections the aws e2e tests hold to the emulators (the S3 PUT that failed with `SocketError:
// other side closed`): the S3 notification proxy and the SQS trace proxy answer with their own
// keep-alive hint, not fauxqs' (fastify's 72 s, longer than the 5 s after which a proxy closes an
// idle socket), and the tests'
// freshFetch sends every request on a connection of its own. The upstream here answers as
// fastify does; both run in-process on loopback.
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type S3NotificationProxy,
  startS3NotificationProxy,
} from '../../../scripts/lambda/s3-notification-proxy';
import { type SqsTraceProxy, startSqsTraceProxy } from '../../../scripts/lambda/sqs-trace-proxy';
import { freshFetch } from '../../support/fresh-fetch';

let upstream: Server;
let proxy: S3NotificationProxy;
let sqsProxy: SqsTraceProxy;

beforeAll(async () => {
  upstream = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      // What fastify writes by default (its keepAliveTimeout is 72 s).
      response.writeHead(200, { connection: 'keep-alive', 'keep-alive': 'timeout=72', etag: '"e"' });
      // No length: Node frames it chunked, and the proxy frames its own answer.
      response.write('up');
      response.end('stream');
    });
  });
  upstream.listen(0, '127.0.0.1');
  await once(upstream, 'listening');
  proxy = await startS3NotificationProxy({
    target: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`,
    notifications: [],
  });
  sqsProxy = await startSqsTraceProxy({
    target: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`,
  });
});
afterAll(async () => {
  await proxy?.close();
  await sqsProxy?.close();
  upstream?.closeAllConnections();
  await new Promise((resolve) => upstream?.close(resolve));
});

describe('connections to the emulators', () => {
  it("the proxy's keep-alive hint is its own, not the upstream's", async () => {
    // A keep-alive client (global fetch), the one that reads the hint.
    const answer = await fetch(`${proxy.url}/bucket/key`, { method: 'PUT', body: 'x' });
    expect(await answer.text()).toBe('upstream');
    expect(answer.status).toBe(200);
    expect(answer.headers.get('etag')).toBe('"e"');
    // Node's http.Server default (keepAliveTimeout 5 s), which is when the proxy closes an idle socket.
    expect(answer.headers.get('keep-alive')).toBe('timeout=5');
  });

  it("the SQS trace proxy's hint is its own too, and its answer framed by its length", async () => {
    const answer = await fetch(sqsProxy.url, {
      method: 'POST',
      headers: { 'x-amz-target': 'AmazonSQS.GetQueueAttributes' },
      body: '{}',
    });
    expect(await answer.text()).toBe('upstream');
    expect(answer.status).toBe(200);
    expect(answer.headers.get('etag')).toBe('"e"');
    expect(answer.headers.get('keep-alive')).toBe('timeout=5');
    expect(answer.headers.get('content-length')).toBe('8');
    expect(answer.headers.get('transfer-encoding')).toBeNull();
  });

  it('freshFetch sends each request on a connection of its own', async () => {
    let connections = 0;
    const server = createServer((request, response) => {
      request.resume();
      request.on('end', () => {
        response.writeHead(200, { connection: 'keep-alive', 'keep-alive': 'timeout=72' });
        response.end('ok');
      });
    });
    server.on('connection', () => {
      connections += 1;
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
      for (const body of ['a', 'b', 'c']) {
        const answer = await freshFetch(url, { method: 'PUT', body });
        expect(await answer.text()).toBe('ok');
      }
      // Three requests, three connections: none was reused after its answer (a kept-alive socket
      // would have carried all three).
      expect(connections).toBe(3);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
