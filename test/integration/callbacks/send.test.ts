// One callback attempt (shared/callbacks/send.ts) against real sockets on 127.0.0.1 (allow-listed):
// what a refused connection, a receiver that never answers, one that stops half-way through its
// answer, one that drips its answer a byte at a time, a long answer, a temporary and a permanent
// lookup failure, and shutdown each give.
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

  it('a receiver that accepts and never answers fails at the deadline', async () => {
    const port = await listen(createTcpServer(() => undefined));
    const outcome = await sendCallback(request(port), { policy: policy(port), deadlineMs: 200 });
    expect(outcome).toEqual({
      kind: 'failed',
      message: 'DEADLINE: no complete answer within 200 ms',
    });
  });

  it('a receiver that drips its answer a byte at a time is let go at the deadline, head or body', async () => {
    // The status line a byte every 50 ms: never a whole head.
    const headDrip = await listen(
      createTcpServer((socket) => {
        socket.on('error', () => undefined);
        const head = 'HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\n\r\n';
        let at = 0;
        const timer = setInterval(() => {
          if (at < head.length && !socket.destroyed) socket.write(head[at++]!);
        }, 50);
        socket.on('close', () => clearInterval(timer));
      }),
    );
    let started = Date.now();
    const head = await sendCallback(request(headDrip), { policy: policy(headDrip), deadlineMs: 600 });
    expect(head).toEqual({ kind: 'failed', message: 'DEADLINE: no complete answer within 600 ms' });
    expect(Date.now() - started).toBeLessThan(5_000);

    // A whole head at once, then the body a byte every 50 ms (each byte well within any idle limit).
    const bodyDrip = await listen(
      createServer((req, res) => {
        req.resume();
        req.on('end', () => {
          res.writeHead(200, { 'content-type': 'text/plain' });
          const timer = setInterval(() => res.write('z'), 50);
          res.on('close', () => clearInterval(timer));
        });
      }),
    );
    started = Date.now();
    const body = await sendCallback(request(bodyDrip), { policy: policy(bodyDrip), deadlineMs: 600 });
    expect(Date.now() - started).toBeLessThan(5_000);
    // The status came in time: an answer, with what came of its body.
    expect(body).toMatchObject({ kind: 'answered', status: 200 });
    expect(body.kind === 'answered' && body.answer).toMatch(/^z{3,12}$/);
  });

  it('a temporary lookup failure (EAI_AGAIN) is a failure, retried; a name that does not exist is refused', async () => {
    const lookupError = (code: string) => async () => {
      throw Object.assign(new Error(`getaddrinfo ${code} hooks.example.com`), { code });
    };
    const req = { ...request(443), url: 'https://hooks.example.com/hook?token=do-not-print' };
    const temporary = await sendCallback(req, { resolve: lookupError('EAI_AGAIN') });
    expect(temporary).toEqual({
      kind: 'failed',
      message: 'EAI_AGAIN: looking up hooks.example.com failed; tried again later',
    });
    const missing = await sendCallback(req, { resolve: lookupError('ENOTFOUND') });
    expect(missing).toEqual({
      kind: 'refused',
      message: 'callbackUrl: hooks.example.com does not resolve (ENOTFOUND)',
    });
    // A lookup that never answers ends at the deadline too.
    const stuck = await sendCallback(req, { resolve: () => new Promise(() => undefined), deadlineMs: 200 });
    expect(stuck).toEqual({ kind: 'failed', message: 'DEADLINE: no complete answer within 200 ms' });
  });

  it('shutdown ends an attempt at once, as interrupted (not an attempt)', async () => {
    const port = await listen(createTcpServer(() => undefined));
    const shutdown = new AbortController();
    const started = Date.now();
    setTimeout(() => shutdown.abort(), 100);
    const outcome = await sendCallback(request(port), { policy: policy(port), signal: shutdown.signal });
    expect(outcome).toEqual({ kind: 'interrupted' });
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('an answer cut short by the deadline still has its status and what came', async () => {
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
      { policy: policy(port), deadlineMs: 300 },
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
