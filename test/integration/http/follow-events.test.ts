// The long poll's follower (shared/job-api-client/follow-events.ts) against a real HTTP server that
// answers as a script says: the cursor sent back, a request that outlasts the server's announced
// wait given up, an outage told once however many tries fail, its end told, and a server that streams
// (opflow serve's text/event-stream) refused rather than read for ever.
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createJobApiClient } from '../../../shared/job-api-client';
import { followEvents, type LongPollPage } from '../../../shared/job-api-client/follow-events';

type Step = (request: IncomingMessage, response: ServerResponse) => void;

const json =
  (body: unknown): Step =>
  (_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify(body));
  };

let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
});

/** A server that answers its n-th request with the n-th step (the last one again after that). */
async function scriptedServer(steps: Step[]) {
  const seen: URLSearchParams[] = [];
  const server = createServer((request, response) => {
    seen.push(new URL(request.url ?? '/', 'http://x').searchParams);
    steps[Math.min(seen.length, steps.length) - 1]!(request, response);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  close = async () => {
    server.closeAllConnections();
    server.close();
  };
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

describe('followEvents: the long poll of GET /events', () => {
  it('sends the cursor back, tells an outage once and its end, and refuses a stream', async () => {
    const batchEvent = { type: 'batch', data: { batch: { id: 'b1' } } };
    const jobEvent = { type: 'job', id: '1700000000000-2', data: { job: { id: 'j1' } } };
    const { url, seen } = await scriptedServer([
      json({ events: [batchEvent], cursor: '1700000000000-1', wait: 0.2 }),
      // Holds the request well past the 0.2 s the server said it waits: given up.
      () => {},
      (_request, response) => {
        response.writeHead(503, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ error: { code: 'unavailable', message: 'busy' } }));
      },
      json({ events: [jobEvent], cursor: '1700000000000-2', wait: 0.2 }),
      // A server that streams: its answer never ends.
      (_request, response) => {
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        response.write(': heartbeat\n\n');
      },
    ]);
    const pages: LongPollPage[] = [];
    const told: string[] = [];
    const stop = new AbortController();
    const following = followEvents(createJobApiClient({ baseUrl: url, token: 'secret-token' }), {
      filter: { batchId: 'b1' },
      signal: stop.signal,
      slackMs: 300,
      sleep: () => Promise.resolve(),
      onAnswer: (page) => pages.push(page),
      onUnreachable: (reason) => {
        told.push(`unreachable: ${reason}`);
        if (told.length === 3) stop.abort();
      },
      onReachable: () => told.push('reachable'),
    });
    await following;

    expect(pages).toEqual([
      { events: [batchEvent], cursor: '1700000000000-1', waitSeconds: 0.2 },
      { events: [jobEvent], cursor: '1700000000000-2', waitSeconds: 0.2 },
    ]);
    expect(told).toEqual([
      'unreachable: GET /events gave no answer within 1 s',
      'reachable',
      "unreachable: GET /events answered text/event-stream, not a long poll's JSON (a server that streams)",
    ]);
    // Filtered by the batch, waiting the most the route allows; the cursor sent back each time.
    expect(seen[0]?.get('batchId')).toBe('b1');
    expect(seen[0]?.get('wait')).toBe('20');
    expect(seen[0]?.has('lastEventId')).toBe(false);
    expect(seen.slice(1, 4).map((query) => query.get('lastEventId'))).toEqual(
      Array(3).fill('1700000000000-1'),
    );
    expect(seen[4]?.get('lastEventId')).toBe('1700000000000-2');
    // The token travels in the header only.
    expect(seen.every((query) => ![...query.values()].includes('secret-token'))).toBe(true);
  });

  it('names a refusal with its status and message, and an answer that is not the long poll’s', async () => {
    const { url } = await scriptedServer([
      (_request, response) => {
        response.writeHead(403, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ error: { code: 'forbidden', message: 'query.tenant: not yours' } }));
      },
    ]);
    const stop = new AbortController();
    const told: string[] = [];
    await followEvents(createJobApiClient({ baseUrl: url }), {
      filter: {},
      signal: stop.signal,
      sleep: () => Promise.resolve(),
      onAnswer: () => undefined,
      onUnreachable: (reason) => {
        told.push(reason);
        stop.abort();
      },
    });
    expect(told).toEqual(['GET /events answered 403: query.tenant: not yours']);

    await close?.();
    const other = await scriptedServer([json({ jobs: [] })]);
    const again = new AbortController();
    await followEvents(createJobApiClient({ baseUrl: other.url }), {
      filter: {},
      signal: again.signal,
      sleep: () => Promise.resolve(),
      onAnswer: () => undefined,
      onUnreachable: (reason) => {
        told.push(reason);
        again.abort();
      },
    });
    expect(told[1]).toBe("GET /events did not answer a long poll's {events, cursor}");
  });
});
