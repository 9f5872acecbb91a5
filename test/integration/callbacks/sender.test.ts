// The callback sender against a real HTTP receiver on 127.0.0.1 (allow-listed, as tests may), over
// the real SQLite outbox and job store, with a manual clock: delivery, the signature as a receiver
// checks it (standardwebhooks), the retry schedule, Retry-After, 410, exhaustion and resend, a
// temporary lookup failure retried, the payload's report links, and a slow receiver that does not
// hold the others.
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type LocalDatabase, openLocalDatabase } from '../../../shared/backends/local/database';
import {
  LocalCallbackSecrets,
  SqliteCallbackOutbox,
} from '../../../shared/backends/local/sqlite-callback-outbox';
import { SqliteJobStore } from '../../../shared/backends/local/sqlite-job-store';
import {
  type CallbackSenderDeps,
  callbackRetryDelaysMs,
  DeliverySlots,
  resendCallback,
  runCallbackSender,
  servedReportLinks,
} from '../../../shared/callbacks/sender';
import { callbackForNewRun } from '../../../shared/engine/callback-record';
import type { Job } from '../../../shared/engine/job-record';
import { ManualClock } from '../../../shared/runtime/time';
import { makeJob, T0 } from '../../support/factories';

interface Received {
  headers: IncomingMessage['headers'];
  body: string;
}

const secret = `whsec_${Buffer.from('a test secret of thirty-two bytes').toString('base64')}`;

describe('callback sender', () => {
  let server: Server;
  let url: string;
  let received: Received[];
  let answers: { status: number; headers?: Record<string, string> }[];
  let db: LocalDatabase;
  let store: SqliteJobStore;
  let outbox: SqliteCallbackOutbox;
  let clock: ManualClock;
  let deps: CallbackSenderDeps;

  beforeEach(async () => {
    received = [];
    answers = [];
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
        const answer = answers.shift() ?? { status: 204 };
        res.writeHead(answer.status, answer.headers ?? {});
        res.end('x'.repeat(100_000));
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const port = (server.address() as AddressInfo).port;
    url = `http://127.0.0.1:${port}/hooks/opflow?token=t0ps3cret`;
    db = openLocalDatabase(':memory:');
    store = new SqliteJobStore(db);
    outbox = new SqliteCallbackOutbox(db);
    clock = new ManualClock(T0);
    deps = {
      store,
      outbox,
      secrets: new LocalCallbackSecrets(db, { OPFLOW_CALLBACK_SECRET_ACME: secret }),
      clock,
      send: { policy: { allowHosts: [`127.0.0.1:${port}`] } },
    };
  });
  afterEach(async () => {
    server.close();
    db.close();
  });

  const finishedJob = async (overrides: Partial<Job> = {}) => {
    const job = makeJob({
      tenant: 'acme',
      status: 'SUCCEEDED',
      finishedAt: T0,
      callbackUrl: url,
      usage: {
        calls: 4,
        failedCalls: 0,
        throttledCalls: 0,
        billedUnits: 12,
        tokens: 0,
        callMs: 0,
        duplicateCreates: 0,
      },
      outputs: ['reports/x/report.md'],
      ...overrides,
    });
    await store.create(job);
    await outbox.add(job.id, T0);
    return job;
  };

  it('delivers a signed summary that standardwebhooks verifies, and records the attempt', async () => {
    const job = await finishedJob();
    const result = await runCallbackSender(deps);
    expect(result).toMatchObject({ attempted: 1, delivered: 1 });
    expect(received).toHaveLength(1);
    const [{ headers, body }] = received as [Received];
    // The receiver's check, with the package the issue names (its own clock: real time).
    const timestamp = Math.floor(Date.now() / 1000);
    const resigned = new Webhook(secret).sign(
      String(headers['webhook-id']),
      new Date(timestamp * 1000),
      body,
    );
    const payload = new Webhook(secret).verify(body, {
      'webhook-id': String(headers['webhook-id']),
      'webhook-timestamp': String(timestamp),
      'webhook-signature': resigned,
    }) as { type: string; data: Record<string, unknown> };
    expect(payload.type).toBe('job.succeeded');
    expect(payload.data).toMatchObject({ jobId: job.id, status: 'SUCCEEDED', workflow: 'novelty-check' });
    expect(payload.data.usage).toEqual({ calls: 4, billedUnits: 12 });
    // And the signature as sent, over the bytes as sent, at the timestamp sent.
    const signed = new Webhook(secret).sign(
      String(headers['webhook-id']),
      new Date(Number(headers['webhook-timestamp']) * 1000),
      body,
    );
    expect(headers['webhook-signature']).toBe(signed);
    expect(headers['webhook-timestamp']).toBe(String(Math.floor(T0 / 1000)));
    expect(headers['webhook-id']).toBe(`msg_${job.id}_1`);
    const stored = await store.get(job.id);
    expect(stored?.callback).toMatchObject({ state: 'delivered', round: 1, deliveredAt: T0 });
    expect(stored?.callback?.attempts).toEqual([expect.objectContaining({ round: 1, at: T0, status: 204 })]);
    expect(await outbox.due(T0 + 10 * 24 * 3_600_000, 10)).toEqual([]);
  });

  it('retries after a 500 on the schedule, and after a 429 no sooner than its Retry-After', async () => {
    const job = await finishedJob();
    answers.push({ status: 500 }, { status: 429, headers: { 'retry-after': '120' } }, { status: 200 });
    await runCallbackSender(deps);
    expect(received).toHaveLength(1);
    // Not before the 5 s of the schedule.
    clock.advance(4_999);
    await runCallbackSender(deps);
    expect(received).toHaveLength(1);
    clock.advance(1);
    await runCallbackSender(deps);
    expect(received).toHaveLength(2);
    // The schedule says 5 minutes after the second attempt; Retry-After 120 s is shorter, so 5 minutes.
    const afterSecond = (await store.get(job.id))!.callback!;
    expect(afterSecond.nextAttemptAt).toBe(clock.now() + 5 * 60_000);
    clock.advance(5 * 60_000);
    await runCallbackSender(deps);
    expect(received).toHaveLength(3);
    const done = (await store.get(job.id))!.callback!;
    expect(done.state).toBe('delivered');
    expect(done.attempts.map((attempt) => attempt.status)).toEqual([500, 429, 200]);
    expect(done.attempts[1]?.retryAfterMs).toBe(120_000);
    // Every attempt of a round carries the same webhook-id.
    expect(new Set(received.map((r) => r.headers['webhook-id'])).size).toBe(1);
  });

  it('waits as long as a Retry-After longer than the schedule', async () => {
    const job = await finishedJob();
    answers.push({ status: 429, headers: { 'retry-after': '60' } });
    await runCallbackSender(deps);
    expect((await store.get(job.id))!.callback!.nextAttemptAt).toBe(T0 + 60_000);
  });

  it('stops at a 410', async () => {
    const job = await finishedJob();
    answers.push({ status: 410 });
    await runCallbackSender(deps);
    clock.advance(24 * 3_600_000);
    await runCallbackSender(deps);
    expect(received).toHaveLength(1);
    expect((await store.get(job.id))!.callback!.state).toBe('gone');
  });

  it('gives up after the seventh attempt, and `resend` starts a new round with a new webhook-id', async () => {
    const job = await finishedJob();
    for (let i = 0; i < 7; i++) answers.push({ status: 503 });
    await runCallbackSender(deps);
    for (const delay of callbackRetryDelaysMs.slice(1)) {
      clock.advance(delay);
      await runCallbackSender(deps);
    }
    expect(received).toHaveLength(7);
    clock.advance(48 * 3_600_000);
    await runCallbackSender(deps);
    expect(received).toHaveLength(7);
    const exhausted = (await store.get(job.id))!.callback!;
    expect(exhausted.state).toBe('exhausted');
    const gaps = exhausted.attempts.slice(1).map((attempt, i) => attempt.at - exhausted.attempts[i]!.at);
    expect(gaps).toEqual(callbackRetryDelaysMs.slice(1));

    await resendCallback(deps, job.id);
    await runCallbackSender(deps);
    expect(received).toHaveLength(8);
    expect(received[7]?.headers['webhook-id']).toBe(`msg_${job.id}_2`);
    const again = (await store.get(job.id))!.callback!;
    expect(again).toMatchObject({ state: 'delivered', round: 2 });
    expect(again.attempts).toHaveLength(8);
    await expect(resendCallback(deps, job.id)).resolves.toBeDefined();
  });

  it('waits for a job that has not ended, then delivers', async () => {
    const job = await finishedJob({ status: 'RUNNING', finishedAt: undefined });
    expect(await runCallbackSender(deps)).toMatchObject({ attempted: 0, waiting: 1 });
    const running = (await store.get(job.id))!;
    await store.commit(
      { ...running, status: 'FAILED', version: running.version + 1, finishedAt: T0 },
      running.version,
    );
    // Looked at again after the recheck (a job's end in a running process brings it forward at once).
    clock.advance(15 * 60_000 - 1);
    expect(await runCallbackSender(deps)).toMatchObject({ attempted: 0 });
    clock.advance(1);
    expect(await runCallbackSender(deps)).toMatchObject({ attempted: 1, delivered: 1 });
    expect(JSON.parse(received[0]!.body).type).toBe('job.failed');
  });

  it('a retried job gets a new round for its new end', async () => {
    const job = await finishedJob({ status: 'FAILED' });
    await runCallbackSender(deps);
    const first = (await store.get(job.id))!;
    expect(first.callback?.state).toBe('delivered');
    // What retryJob writes (and the outbox entry it adds), then the second run ends.
    await store.commit(
      { ...first, version: first.version + 1, callback: callbackForNewRun(first) },
      first.version,
    );
    await outbox.add(job.id, clock.now());
    await runCallbackSender(deps);
    const second = (await store.get(job.id))!.callback!;
    expect(second).toMatchObject({ state: 'delivered', round: 2 });
    expect(received.map((r) => r.headers['webhook-id'])).toEqual([`msg_${job.id}_1`, `msg_${job.id}_2`]);
  });

  it('an attempt whose job was retried meanwhile is not written on the new run, which gets its own delivery', async () => {
    const job = await finishedJob({ status: 'FAILED' });
    let retried: Job | undefined;
    const answer = deps.attempt;
    deps.attempt = async () => {
      // `opflow retry` while the attempt is out: what retryJob writes (its outbox entry, the new
      // run queued with a message at its version).
      const ended = (await store.get(job.id))!;
      retried = {
        ...ended,
        status: 'QUEUED',
        version: ended.version + 1,
        finishedAt: undefined,
        runs: [
          {
            status: 'FAILED',
            step: ended.step,
            retriedAt: clock.now(),
            retriedFrom: ended.step,
            fromStart: false,
            usage: ended.usage,
          },
        ],
        callback: callbackForNewRun(ended),
      };
      expect(await store.commit(retried, ended.version)).toBe(true);
      await outbox.add(job.id, clock.now());
      return { kind: 'answered', status: 204, answer: '' };
    };
    expect(await runCallbackSender(deps)).toMatchObject({ attempted: 1 });
    // The new run is left as the retry wrote it: its message still names its version.
    expect(await store.get(job.id)).toEqual(retried);
    deps.attempt = answer;

    const running = (await store.get(job.id))!;
    await store.commit(
      { ...running, status: 'SUCCEEDED', version: running.version + 1, finishedAt: T0 },
      running.version,
    );
    expect(await runCallbackSender(deps)).toMatchObject({ attempted: 1, delivered: 1 });
    expect(received.map((r) => JSON.parse(r.body).type)).toEqual(['job.succeeded']);
    expect(received[0]!.headers['webhook-id']).toBe(`msg_${job.id}_2`);
    expect((await store.get(job.id))!.callback).toMatchObject({ state: 'delivered', round: 2 });
  });

  it('refuses a resend of a job retried while the resend was being made', async () => {
    const job = await finishedJob({
      status: 'FAILED',
      callback: { state: 'exhausted', round: 1, messageId: 'm', attempts: [] },
    });
    const realGet = store.get.bind(store);
    let reads = 0;
    store.get = async (id: string) => {
      const read = await realGet(id);
      // `opflow retry` right after the resend read the job: the new run is queued.
      if (++reads === 1 && read)
        await store.commit(
          {
            ...read,
            status: 'QUEUED',
            version: read.version + 1,
            runs: [
              {
                status: 'FAILED',
                step: read.step,
                retriedAt: T0,
                retriedFrom: read.step,
                fromStart: false,
                usage: read.usage,
              },
            ],
          },
          read.version,
        );
      return read;
    };
    await expect(resendCallback(deps, job.id)).rejects.toThrow(/was retried meanwhile/);
    store.get = realGet;
    expect((await store.get(job.id))!).toMatchObject({ status: 'QUEUED', version: job.version + 1 });
  });

  it('two senders at once deliver once', async () => {
    await finishedJob();
    await Promise.all([runCallbackSender(deps), runCallbackSender(deps), runCallbackSender(deps)]);
    expect(received).toHaveLength(1);
  });

  it('refuses (and records) a callback whose name resolves to loopback, without sending', async () => {
    const job = await finishedJob({ callbackUrl: 'https://localhost:1/hook' });
    await runCallbackSender({ ...deps, send: {} });
    const callback = (await store.get(job.id))!.callback!;
    expect(callback.state).toBe('refused');
    expect(callback.attempts[0]?.error).toMatch(/localhost:1 resolves to (127\.0\.0\.1|::1), a loopback/);
  });

  it('connects to the address it vetted, never looking the name up again (no DNS rebinding)', async () => {
    const port = (server.address() as AddressInfo).port;
    // The system resolver knows no such name: only the pinned address can reach the receiver.
    const job = await finishedJob({ callbackUrl: `http://pinned.invalid:${port}/hook` });
    await runCallbackSender({
      ...deps,
      send: {
        policy: { allowHosts: [`pinned.invalid:${port}`] },
        resolve: async () => [{ address: '127.0.0.1', family: 4 }],
      },
    });
    expect(received).toHaveLength(1);
    expect(received[0]?.headers.host).toBe(`pinned.invalid:${port}`);
    expect((await store.get(job.id))!.callback!.state).toBe('delivered');
  });

  it('refuses a resend of a job that is not finished or has no callback', async () => {
    const running = await finishedJob({ status: 'RUNNING', finishedAt: undefined });
    await expect(resendCallback(deps, running.id)).rejects.toThrow(/is RUNNING/);
    const plain = makeJob({ status: 'SUCCEEDED' });
    await store.create(plain);
    await expect(resendCallback(deps, plain.id)).rejects.toThrow(/has no callbackUrl/);
    await expect(resendCallback(deps, 'nope')).rejects.toThrow(/no job nope/);
  });

  it('retries a temporary lookup failure (EAI_AGAIN) on the schedule and then delivers', async () => {
    const port = (server.address() as AddressInfo).port;
    const job = await finishedJob({ callbackUrl: `http://hooks.test:${port}/hook` });
    let lookups = 0;
    const send = {
      policy: { allowHosts: [`hooks.test:${port}`] },
      resolve: async () => {
        lookups += 1;
        if (lookups === 1)
          throw Object.assign(new Error('getaddrinfo EAI_AGAIN hooks.test'), { code: 'EAI_AGAIN' });
        return [{ address: '127.0.0.1', family: 4 }];
      },
    };
    await runCallbackSender({ ...deps, send });
    const first = (await store.get(job.id))!.callback!;
    expect(first.state).toBe('pending');
    expect(first.attempts[0]?.error).toMatch(/^EAI_AGAIN: /);
    clock.advance(callbackRetryDelaysMs[1]);
    await runCallbackSender({ ...deps, send });
    expect(received).toHaveLength(1);
    expect((await store.get(job.id))!.callback!.state).toBe('delivered');
  });

  it('names the report files without a local path, or with the job API link of a public URL', async () => {
    const job = await finishedJob();
    const withFiles = { ...job, outputs: [`reports/${job.id}/report.md`, `reports/${job.id}/steps/1.json`] };
    await store.commit({ ...withFiles, version: job.version + 1 }, job.version);
    await runCallbackSender(deps);
    const plain = JSON.parse(received[0]!.body).data.report;
    expect(plain.files).toEqual([{ name: 'report.md' }]);
    expect(received[0]!.body).not.toContain('/tmp');

    await resendCallback(deps, job.id);
    await runCallbackSender({ ...deps, reportLinks: servedReportLinks('https://opflow.example.com/') });
    const linked = JSON.parse(received[1]!.body).data.report;
    expect(linked.files).toEqual([
      { name: 'report.md', url: `https://opflow.example.com/jobs/${job.id}/report/report.md` },
    ]);
  });

  it('a slow receiver holds neither the other receivers nor more than two deliveries', async () => {
    // A receiver that drips its answer's head a byte every 100 ms: each delivery to it runs to the deadline.
    const slowHits: number[] = [];
    let slowEndedAt = Number.POSITIVE_INFINITY;
    const slow = createServer((req) => {
      slowHits.push(Date.now());
      req.resume();
      const socket = req.socket;
      const head = 'HTTP/1.1 200 OK\r\n\r\n';
      let at = 0;
      const timer = setInterval(() => {
        if (at < head.length - 2 && !socket.destroyed) socket.write(head[at++]!);
      }, 100);
      socket.on('close', () => {
        clearInterval(timer);
        slowEndedAt = Math.min(slowEndedAt, Date.now());
      });
      socket.on('error', () => undefined);
    });
    slow.listen(0, '127.0.0.1');
    await once(slow, 'listening');
    const slowPort = (slow.address() as AddressInfo).port;
    try {
      // Three slow callbacks due first, then one to the quick receiver.
      const slowJobs: Job[] = [];
      for (let i = 0; i < 3; i++)
        slowJobs.push(await finishedJob({ callbackUrl: `http://127.0.0.1:${slowPort}/slow` }));
      clock.advance(1);
      const quick = await finishedJob();
      await outbox.add(quick.id, clock.now());
      let quickAt = Number.POSITIVE_INFINITY;
      server.once('request', () => {
        quickAt = Date.now();
      });
      const result = await runCallbackSender({
        ...deps,
        slots: new DeliverySlots({ concurrency: 8, perHost: 2 }),
        send: { policy: { allowHosts: [`127.0.0.1:${slowPort}`, new URL(url).host] }, deadlineMs: 1_000 },
      });
      // The quick receiver is served while the slow ones are still held, not after them.
      expect(quickAt).toBeLessThan(slowEndedAt);
      expect((await store.get(quick.id))!.callback!.state).toBe('delivered');
      // Two at once to the slow host, ended by the deadline; the third put back unsent, a few seconds later.
      expect(slowHits).toHaveLength(2);
      expect(result).toMatchObject({ attempted: 3, delivered: 1, deferred: 1 });
      const states = await Promise.all(slowJobs.map(async (job) => (await store.get(job.id))!.callback));
      expect(states.filter((callback) => callback?.attempts[0]?.error?.startsWith('DEADLINE'))).toHaveLength(
        2,
      );
      expect(states.filter((callback) => callback === undefined)).toHaveLength(1);
      const deferred = slowJobs.find((_job, i) => states[i] === undefined)!;
      expect(await outbox.entryOf(deferred.id)).toEqual({ jobId: deferred.id, dueAt: clock.now() + 5_000 });
    } finally {
      slow.closeAllConnections();
      slow.close();
    }
  });
});
