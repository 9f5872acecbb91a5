/**
 * The live feed under load: the real `opflow serve` (bin/opflow.js, its own process) streams
 * `GET /events` to several SSE clients while this process, as another opflow process would, writes
 * 1,000 jobs through ten versions each into the same SQLite file (10,000 changes). Reported: the
 * writes per second, the events delivered per second to all clients together, the delay from a
 * change's commit to its arrival (p50, p99), and the server's resident memory (VmRSS) before,
 * while and after the jobs grow, to show it stays flat.
 *
 * The jobs are written RUNNING with their next run a day away, so the server's workers and sweeper
 * leave them alone: only the feed works.
 *
 *   npx tsx bench/events.ts [--jobs=1000] [--versions=10] [--clients=4] [--rounds=3]
 *
 * Each round writes another 1,000 jobs: memory that grew with the jobs would grow round by round.
 *
 * Nothing here asserts a figure. Its figures: bench/journal/2026-11-27-events.md (bench/README.md).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createParser } from 'eventsource-parser';
import { ensureCliBuilt } from '../scripts/build-cli.mjs';
import { openLocalDatabase } from '../shared/backends/local/database';
import { SqliteJobStore } from '../shared/backends/local/sqlite-job-store';
import type { Job } from '../shared/engine/job-record';
import { makeJob } from '../test/support/factories';

const bin = fileURLToPath(new URL('../bin/opflow.js', import.meta.url));
const { values } = parseArgs({
  options: {
    jobs: { type: 'string', default: '1000' },
    versions: { type: 'string', default: '10' },
    clients: { type: 'string', default: '4' },
    rounds: { type: 'string', default: '3' },
  },
});
const jobCount = Number(values.jobs);
const versions = Number(values.versions);
const clientCount = Number(values.clients);
const roundCount = Number(values.rounds);

const rssMiB = (pid: number) => {
  const line = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return line ? Number(line[1]) / 1024 : Number.NaN;
};
const quantile = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;

/** A RUNNING job due in a day (so the server's workers leave it alone), of one of 3 tenants and 10 batches. */
function job(now: number, batch: number): Job {
  return makeJob({
    workflow: 'patent-count',
    tenant: `tenant-${batch % 3}`,
    status: 'RUNNING',
    step: 'count',
    input: { inline: { query: 'TTL:(hinge)' } },
    nextRunAt: now + 86_400_000,
    deadlineAt: now + 2 * 86_400_000,
    source: 'api',
    batchId: `bench-${batch % 10}`,
    createdAt: now,
    updatedAt: now,
  });
}

async function main() {
  await ensureCliBuilt();
  const dir = mkdtempSync(join(tmpdir(), 'opflow-bench-events-'));
  const dbPath = join(dir, 'opflow.db');
  const serve = spawn(process.execPath, [bin, 'serve', '--port', '0', '--json'], {
    cwd: dir,
    env: { ...process.env, OPFLOW_DB: dbPath, OPFLOW_OUT: join(dir, 'out') },
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    serve.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('\n')) resolve((JSON.parse(out.slice(0, out.indexOf('\n'))) as { url: string }).url);
    });
    serve.once('exit', () => reject(new Error('opflow serve exited')));
  });
  const pid = serve.pid!;

  // The clients: each counts events and the delay from the change's commit to its arrival.
  let received = 0;
  let onDelay = (_ms: number) => {};
  const aborts: AbortController[] = [];
  for (let client = 0; client < clientCount; client += 1) {
    const abort = new AbortController();
    aborts.push(abort);
    const response = await fetch(`${url}/events`, { signal: abort.signal });
    const parser = createParser({
      onEvent: (event) => {
        if (event.event !== 'job' && event.event !== 'step') return;
        received += 1;
        const { job: changed } = JSON.parse(event.data) as { job: { updatedAt: string } };
        onDelay(Date.now() - Date.parse(changed.updatedAt));
      },
    });
    void (async () => {
      try {
        for await (const chunk of response.body!.pipeThrough(new TextDecoderStream())) parser.feed(chunk);
      } catch {
        // Aborted at the end.
      }
    })();
  }
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const memory: { label: string; rss: number }[] = [{ label: 'listening, no job', rss: rssMiB(pid) }];

  const db = openLocalDatabase(dbPath);
  const store = new SqliteJobStore(db);
  // Writes yield to the event loop (as a worker between steps does), so the clients here read on.
  const yieldNow = () => new Promise((resolve) => setImmediate(resolve));
  const rounds: { written: number; delivered: number; received: number; delays: number[] }[] = [];
  for (let round = 1; round <= roundCount; round += 1) {
    const delays: number[] = [];
    onDelay = (ms) => delays.push(ms);
    const receivedBefore = received;
    const expected = jobCount * versions * clientCount;
    const started = performance.now();
    const jobs: Job[] = [];
    for (let n = 0; n < jobCount; n += 1) {
      const created = job(Date.now(), n);
      await store.create(created);
      jobs.push(created);
      await yieldNow();
      if ((n + 1) % (jobCount / 4) === 0)
        memory.push({ label: `round ${round}, ${n + 1} jobs`, rss: rssMiB(pid) });
    }
    for (let version = 2; version <= versions; version += 1) {
      for (let n = 0; n < jobs.length; n += 1) {
        const before = jobs[n]!;
        const last = version === versions;
        const next: Job = {
          ...before,
          version,
          polls: version,
          status: last ? 'SUCCEEDED' : 'RUNNING',
          ...(last ? { nextRunAt: undefined } : {}),
          updatedAt: Date.now(),
        };
        await store.commit(next, before.version);
        jobs[n] = next;
        await yieldNow();
      }
    }
    const written = performance.now() - started;
    while (received - receivedBefore < expected && performance.now() - started < 120_000)
      await new Promise((resolve) => setTimeout(resolve, 20));
    const delivered = performance.now() - started;
    rounds.push({ written, delivered, received: received - receivedBefore, delays });
    await new Promise((resolve) => setTimeout(resolve, 2000));
    memory.push({ label: `round ${round} done, idle 2 s`, rss: rssMiB(pid) });
  }

  // Catching up: one client resuming from the start reads every change kept, as fast as it is sent.
  const replayStarted = performance.now();
  let replayed = 0;
  const replay = await fetch(`${url}/events`, { headers: { 'last-event-id': '0' } });
  const replayParser = createParser({
    onEvent: (event) => {
      if (event.event === 'job' || event.event === 'step') replayed += 1;
    },
  });
  const replayReader = replay.body!.pipeThrough(new TextDecoderStream()).getReader();
  while (replayed < jobCount * versions * roundCount) {
    const { value, done } = await replayReader.read();
    if (done) break;
    replayParser.feed(value);
  }
  const replayMs = performance.now() - replayStarted;
  await replayReader.cancel();

  for (const abort of aborts) abort.abort();
  db.close();
  serve.kill('SIGINT');
  await new Promise((resolve) => serve.once('exit', resolve));
  rmSync(dir, { recursive: true, force: true });

  const changes = jobCount * versions;
  console.log(
    `${roundCount} rounds of ${jobCount} jobs x ${versions} versions (${changes} changes a round), ${clientCount} clients`,
  );
  for (const [index, round] of rounds.entries()) {
    const sorted = round.delays.sort((a, b) => a - b);
    console.log(
      `round ${index + 1}: writes ${Math.round(changes / (round.written / 1000))}/s; events delivered ${round.received} of ${changes * clientCount} in ${(round.delivered / 1000).toFixed(2)} s (${Math.round(round.received / (round.delivered / 1000))}/s to all clients); commit to arrival p50 ${quantile(sorted, 0.5)} ms, p99 ${quantile(sorted, 0.99)} ms`,
    );
  }
  console.log(
    `resumed from Last-Event-ID 0: ${replayed} events in ${(replayMs / 1000).toFixed(2)} s (${Math.round(replayed / (replayMs / 1000))}/s to one client)`,
  );
  console.log(
    `server RSS (MiB): ${memory.map((sample) => `${sample.label} ${sample.rss.toFixed(1)}`).join('; ')}`,
  );
}

await main();
