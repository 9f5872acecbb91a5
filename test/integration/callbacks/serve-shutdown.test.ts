// `opflow serve` through the real bin with a receiver that drips its answer a byte at a time: SIGTERM
// ends the delivery in flight at once and the process exits promptly; the callback is neither lost
// nor counted as an attempt (its entry stays due), and the next `opflow serve` delivers it.
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLocalDatabase } from '../../../shared/backends/local/database';
import { SqliteCallbackOutbox } from '../../../shared/backends/local/sqlite-callback-outbox';
import { SqliteJobStore } from '../../../shared/backends/local/sqlite-job-store';
import { childEnv, killRunningOpflows } from '../../e2e/local/opflow-process';
import { startServe } from '../../e2e/local/serve-process';
import { REAL_PROCESS_TIMEOUT_MS } from '../../support/timeouts';

describe('opflow serve with a slow callback receiver (real bin)', {
  timeout: REAL_PROCESS_TIMEOUT_MS,
}, () => {
  let dir: string;
  let receiver: Server;
  let port: number;
  let drip = true;
  const requests: { at: number; body: string }[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'opflow-callback-shutdown-'));
    receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        requests.push({ at: Date.now(), body: Buffer.concat(chunks).toString('utf8') });
        if (!drip) return void res.writeHead(204).end();
        // The head a byte every 500 ms (never finished before the test ends).
        const head = 'HTTP/1.1 200 OK\r\ncontent-length: 0\r\n';
        let at = 0;
        const timer = setInterval(() => {
          if (at < head.length && !req.socket.destroyed) req.socket.write(head[at++]!);
        }, 500);
        req.socket.on('close', () => clearInterval(timer));
        req.socket.on('error', () => undefined);
      });
    });
    receiver.listen(0, '127.0.0.1');
    await once(receiver, 'listening');
    port = (receiver.address() as AddressInfo).port;
  });
  afterAll(() => {
    killRunningOpflows();
    receiver.closeAllConnections();
    receiver.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('SIGTERM ends the delivery in flight at once; the next serve delivers it', async () => {
    const env = childEnv({
      OPFLOW_SANDBOX_SPEED: '300',
      OPFLOW_DB: join(dir, 'jobs.db'),
      OPFLOW_OUT: join(dir, 'reports'),
      OPFLOW_CALLBACK_ALLOW_HOSTS: `127.0.0.1:${port}`,
      OPFLOW_CALLBACK_SECRET: 'a-callback-secret-of-at-least-32-bytes!',
    });
    const first = await startServe([], { env, cwd: dir });
    const created = await fetch(`${first.url}/jobs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        workflow: 'patent-count',
        input: { query: 'TACD: (folding helmet)' },
        callbackUrl: `http://127.0.0.1:${port}/hook`,
      }),
    });
    expect(created.status).toBe(201);
    const jobId = ((await created.json()) as { job: { id: string } }).job.id;
    while (requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 50));

    const stopping = Date.now();
    first.run.child.kill('SIGTERM');
    const exited = await first.run.done;
    const tookMs = Date.now() - stopping;
    expect(exited.code).toBe(0);
    // The receiver would hold the attempt 15 s (its deadline): shutdown did not wait for it.
    expect(tookMs).toBeLessThan(5_000);

    const db = openLocalDatabase(join(dir, 'jobs.db'));
    try {
      const job = await new SqliteJobStore(db).get(jobId);
      expect(job?.status).toBe('SUCCEEDED');
      // Not an attempt, and still due: nothing lost.
      expect(job?.callback?.attempts ?? []).toEqual([]);
      const entry = await new SqliteCallbackOutbox(db).entryOf(jobId);
      expect(entry?.dueAt).toBeLessThanOrEqual(Date.now());
    } finally {
      db.close();
    }

    drip = false;
    const second = await startServe([], { env, cwd: dir });
    while (requests.length < 2) await new Promise((resolve) => setTimeout(resolve, 50));
    for (;;) {
      const answer = await fetch(`${second.url}/jobs/${jobId}`);
      const job = ((await answer.json()) as { job: { callback?: { state: string } } }).job;
      if (job.callback?.state === 'delivered') break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(JSON.parse(requests[1]!.body)).toMatchObject({ type: 'job.succeeded', data: { jobId } });
    second.run.child.kill('SIGTERM');
    expect((await second.run.done).code).toBe(0);
  });
});
