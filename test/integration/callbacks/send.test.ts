// One callback attempt (shared/callbacks/send.ts) against real sockets on 127.0.0.1 (allow-listed):
// what a refused connection, a receiver that never answers, one that stops half-way through its
// answer, and a long answer each give.
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { type AddressInfo, createServer as createTcpServer, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { type CallbackRequest, sendCallback } from '../../../shared/callbacks/send';

const secret = `whsec_${Buffer.from('a test secret of thirty-two bytes').toString('base64')}`;
const request = (port: number): CallbackRequest => ({
  url: `http://127.0.0.1:${port}/hook?token=do-not-print`,
  messageId: 'msg_1',
  body: '{"type":"job.succeeded"}',
  secret,
  timestampSeconds: 1_700_000_000,
});
const policy = (port: number) => ({ allowHosts: [`127.0.0.1:${port}`] });

describe('sendCallback', () => {
  const servers: { close(): void }[] = [];
  const sockets: Socket[] = [];
  afterEach(() => {
    for (const socket of sockets.splice(0)) socket.destroy();
    for (const server of servers.splice(0)) server.close();
  });

  async function listen(server: Server | ReturnType<typeof createTcpServer>): Promise<number> {
    servers.push(server);
    server.on('connection', (socket: Socket) => sockets.push(socket));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return (server.address() as AddressInfo).port;
  }

  it('a refused connection fails with its code, naming no path or query', async () => {
    const server = createTcpServer();
    const port = await listen(server);
    server.close();
    await once(server, 'close');
    const outcome = await sendCallback(request(port), { policy: policy(port) });
    expect(outcome.kind).toBe('failed');
    expect(outcome.kind === 'failed' && outcome.message).toMatch(/^ECONNREFUSED: /);
    expect(JSON.stringify(outcome)).not.toContain('do-not-print');
  });

  it('a receiver that accepts and never answers fails after the headers timeout', async () => {
    const port = await listen(createTcpServer(() => undefined));
    const outcome = await sendCallback(request(port), { policy: policy(port), headersTimeoutMs: 200 });
    expect(outcome).toEqual({
      kind: 'failed',
      message: 'HEADERS_TIMEOUT: waiting for the answer timed out after 200 ms',
    });
  });

  it('an answer cut short by the body timeout still has its status and what came', async () => {
    const port = await listen(
      createServer((req, res) => {
        req.resume();
        req.on('end', () => {
          res.writeHead(202, { 'retry-after': '7' });
          res.write('accepted, more to come');
        });
      }),
    );
    const outcome = await sendCallback(
      request(port),
      { policy: policy(port), bodyTimeoutMs: 200 },
      Date.parse('2026-01-01T00:00:00Z'),
    );
    expect(outcome).toEqual({
      kind: 'answered',
      status: 202,
      retryAfterMs: 7_000,
      answer: 'accepted, more to come',
    });
  });

  it('sends the signed body once and keeps at most maxAnswerBytes of a long answer', async () => {
    const bodies: string[] = [];
    const port = await listen(
      createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (chunk: Buffer) => chunks.push(chunk));
        req.on('end', () => {
          bodies.push(Buffer.concat(chunks).toString('utf8'));
          res.writeHead(200, { 'content-type': 'text/plain' });
          res.end('y'.repeat(1_000_000));
        });
      }),
    );
    const outcome = await sendCallback(request(port), { policy: policy(port), maxAnswerBytes: 50 });
    expect(outcome).toEqual({
      kind: 'answered',
      status: 200,
      retryAfterMs: undefined,
      answer: 'y'.repeat(50),
    });
    expect(bodies).toEqual(['{"type":"job.succeeded"}']);
  });
});
