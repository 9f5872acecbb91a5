// The live feed through the real bin: `opflow serve` streams GET /events (text/event-stream, read
// here with fetch and an SSE parser as a browser would), jobs created over its API and by
// `opflow run` in another process both show up, a token scoped to a tenant sees only that tenant,
// a stream ended by its token's expiry resumes with Last-Event-ID and loses nothing, and an expired
// or forged token is refused without the token showing in any log line.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createParser } from 'eventsource-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { childEnv, killRunningOpflows, type OpflowProcess, runOpflow } from './opflow-process';
import { startServe } from './serve-process';

interface SseEvent {
  id: number | undefined;
  type: string;
  data: { job?: { id: string; tenant: string; status: string; version: number } };
}

const serveToken = 'feed-test-token-0123456789abcdef';
const ttlSeconds = 6;

describe('GET /events on opflow serve', () => {
  let dir: string;
  let url: string;
  let serve: OpflowProcess;
  let env: NodeJS.ProcessEnv;
  const bearer = { authorization: `Bearer ${serveToken}` };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'opflow-events-e2e-'));
    env = childEnv({ OPFLOW_SERVE_TOKEN: serveToken, OPFLOW_EVENTS_TOKEN_TTL: String(ttlSeconds) });
    ({ run: serve, url } = await startServe([], { env, cwd: dir }));
  }, 60_000);

  afterAll(async () => {
    serve?.child.kill('SIGINT');
    await serve?.done;
    killRunningOpflows();
    rmSync(dir, { recursive: true, force: true });
  });

  const feedToken = async (body: unknown = {}) => {
    const response = await fetch(`${url}/events/token`, {
      method: 'POST',
      headers: { ...bearer, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return {
      status: response.status,
      answer: (await response.json()) as { token: string; expiresAt: string },
    };
  };

  /**
   * Follows the feed with `query` until `done(events)` holds: a new token for each connection, and
   * after a stream ends (its token expired) a new one resumed with Last-Event-ID, as the dashboard does.
   */
  const follow = async (
    query: Record<string, string>,
    scope: unknown,
    done: (events: SseEvent[]) => boolean,
  ): Promise<{ events: SseEvent[]; connections: number }> => {
    const events: SseEvent[] = [];
    let lastId: string | undefined;
    let connections = 0;
    while (!done(events)) {
      const { answer } = await feedToken(scope);
      const search = new URLSearchParams({ ...query, token: answer.token });
      const response = await fetch(`${url}/events?${search}`, {
        headers: lastId === undefined ? {} : { 'last-event-id': lastId },
      });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
      connections += 1;
      const parser = createParser({
        onEvent: (event) => {
          if (event.id !== undefined) lastId = event.id;
          events.push({
            id: event.id === undefined ? undefined : Number(event.id),
            type: event.event ?? 'message',
            data: JSON.parse(event.data),
          });
        },
      });
      const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
      for (;;) {
        const { value, done: ended } = await reader.read();
        if (ended) break;
        parser.feed(value);
        if (done(events)) {
          await reader.cancel();
          break;
        }
      }
    }
    return { events, connections };
  };

  const createJob = async (tenant: string, query: string) => {
    const response = await fetch(`${url}/jobs`, {
      method: 'POST',
      headers: { ...bearer, 'content-type': 'application/json' },
      body: JSON.stringify({ workflow: 'patent-count', input: { query }, tenant }),
    });
    expect(response.status).toBe(201);
    return ((await response.json()) as { job: { id: string } }).job.id;
  };

  const finished = (events: SseEvent[], id: string) =>
    events.some((event) => event.data.job?.id === id && event.data.job.status === 'SUCCEEDED');

  it('refuses a request without a token, with a forged one, and a tenant beyond its token', async () => {
    expect((await fetch(`${url}/events`)).status).toBe(401);
    const forged = await fetch(`${url}/events?token=${'a'.repeat(40)}.${'b'.repeat(43)}`);
    expect(forged.status).toBe(401);
    const { token } = (await feedToken({ tenant: 'acme' })).answer;
    const beyond = await fetch(`${url}/events?token=${token}&tenant=other`);
    expect(beyond.status).toBe(403);
    expect((await fetch(`${url}/events/token`, { method: 'POST', body: '{}' })).status).toBe(401);
  });

  it('streams jobs of the API and of opflow run in another process, in order, each tenant its own', async () => {
    const ids: string[] = [];
    const all = follow({}, {}, (events) => ids.length === 3 && ids.every((id) => finished(events, id)));
    const acme = follow({}, { tenant: 'acme' }, (events) => ids.length > 0 && finished(events, ids[0]!));
    await new Promise((resolve) => setTimeout(resolve, 500));
    ids.push(await createJob('acme', 'folding helmet'), await createJob('other', 'magnetic buckle'));
    writeFileSync(join(dir, 'count.json'), JSON.stringify({ query: 'textile hinge' }));
    const run = await runOpflow(['run', 'patent-count', 'count.json', '--json'], { env, cwd: dir });
    expect(run.code).toBe(0);
    ids.push((JSON.parse(run.stdout) as { jobs: { id: string }[] }).jobs[0]!.id);

    const seen = await all;
    const numbered = seen.events.filter((event) => event.id !== undefined);
    expect(numbered.map((event) => event.id)).toEqual(
      [...numbered.map((event) => event.id!)].sort((a, b) => a - b),
    );
    for (const id of ids) {
      const versions = numbered.filter((event) => event.data.job?.id === id).map((e) => e.data.job!.version);
      expect(versions[0]).toBe(1);
      expect(versions).toEqual([...new Set(versions)].sort((a, b) => a - b));
    }
    const mine = (await acme).events.filter((event) => event.data.job !== undefined);
    expect(mine.length).toBeGreaterThan(0);
    expect(new Set(mine.map((event) => event.data.job!.tenant))).toEqual(new Set(['acme']));
  }, 90_000);

  it('ends a stream when its token expires; resumed with Last-Event-ID it loses and repeats nothing', async () => {
    const started = Date.now();
    const ids: string[] = [];
    const following = follow({}, {}, (events) => ids.length === 2 && ids.every((id) => finished(events, id)));
    ids.push(await createJob('acme', 'first of two'));
    // Past the first token's lifetime: the second job's events come on a resumed stream.
    await new Promise((resolve) => setTimeout(resolve, ttlSeconds * 1000 + 500));
    ids.push(await createJob('acme', 'second of two'));
    const { events, connections } = await following;
    expect(Date.now() - started).toBeGreaterThan(ttlSeconds * 1000);
    expect(connections).toBeGreaterThanOrEqual(2);
    const numbered = events.filter((event) => event.id !== undefined).map((event) => event.id!);
    expect(numbered).toEqual([...new Set(numbered)].sort((a, b) => a - b));
    for (const id of ids) expect(finished(events, id)).toBe(true);
  }, 60_000);

  it('refuses an expired token, saying so, and never logs a token', async () => {
    const { token } = (await feedToken()).answer;
    await new Promise((resolve) => setTimeout(resolve, ttlSeconds * 1000 + 200));
    const response = await fetch(`${url}/events?token=${token}`);
    expect(response.status).toBe(401);
    expect(((await response.json()) as { error: { message: string } }).error.message).toMatch(/expired/);
    const log = serve.stderrSoFar();
    expect(log).toMatch(/GET \/events 401/);
    expect(log).not.toContain(token);
    expect(log).not.toContain(token.split('.')[1]);
    expect(log).not.toContain(serveToken);
  }, 30_000);
});
