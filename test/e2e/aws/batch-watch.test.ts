// `opflow --backend aws batch <id> --watch` follows the job API's long poll: the real bin in a child
// process, the bundled api function behind the gateway stand-in (the template's timeout, so a poll
// waits as long as the stack lets it), the job table's stream read by the bundled events function.
// Both the job API and DynamoDB are reached through counting proxies: an idle batch watched for 30 s
// costs a handful of requests (not a read every 2 s), a job's change reaches the live line about a
// second after the change log has it, and the watch ends when the batch does. Without a job API to
// follow, the watch says so once and reads every 2 s.
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BatchSource } from '../../../shared/engine/batch-store';
import { admitBatch } from '../../../shared/ingest/admission';
import { type IngestDeps, ingest, openBatch } from '../../../shared/ingest/ingest';
import { type AwsPipeline, createAwsPipeline } from '../../../shared/runtime/aws/pipeline';
import { workflows } from '../../../shared/workflows';
import { type CountingProxy, startCountingProxy } from '../../support/counting-proxy';
import { REAL_PROCESS_TIMEOUT_MS } from '../../support/timeouts';
import { childEnv, startOpflow } from '../local/opflow-process';
import { AwsWorld } from './harness/aws-world';

let world: AwsWorld;
let pipeline: AwsPipeline;
let deps: IngestDeps;
let api: CountingProxy;
let dynamo: CountingProxy;

beforeAll(async () => {
  // The child lives in real time: the shared clock starts there, and only moves ahead.
  world = await AwsWorld.start({ startAt: Date.now() });
  pipeline = await createAwsPipeline({ env: world.env, workflows });
  deps = { engine: pipeline.deps, batches: await pipeline.batches() };
  api = await startCountingProxy(world.gateway.url);
  dynamo = await startCountingProxy(world.env.AWS_ENDPOINT_URL_DYNAMODB!);
}, REAL_PROCESS_TIMEOUT_MS);
afterAll(async () => {
  await Promise.allSettled([api?.close(), dynamo?.close()]);
  await pipeline?.close();
  await world?.stop();
});

/** A batch of `count` patent counts, read and released: its jobs wait on the queue (nobody runs them yet). */
async function queuedBatch(name: string, count: number): Promise<{ batchId: string; jobIds: string[] }> {
  const lines = Array.from({ length: count }, (_, index) =>
    JSON.stringify({ id: `${name}-${index}`, query: `foldable hinge ${index}` }),
  );
  const source: BatchSource = { kind: 'jsonl', uri: `s3://${world.bucket}/inbox/default/${name}.jsonl` };
  const { batch } = await openBatch(deps, source, {
    tenant: 'default',
    workflow: 'patent-count',
    options: { selection: 'auto', inFlight: count },
  });
  await ingest(
    deps,
    {
      source,
      openBytes: async () => Readable.from([Buffer.from(`${lines.join('\n')}\n`)]),
      readDocument: () => Promise.reject(new Error('no documents')),
    },
    batch.id,
  );
  const admitted = await admitBatch(deps, batch.id);
  return { batchId: batch.id, jobIds: admitted?.batch.inFlight ?? [] };
}

/** The stream handed to the events function, and the shared clock past the log's settle time (1 s). */
async function logChanges(): Promise<void> {
  await world.deliverStream();
  world.advanceTo(world.now() + 1_500);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('opflow --backend aws batch --watch', { timeout: REAL_PROCESS_TIMEOUT_MS }, () => {
  it('follows the long poll: a handful of requests while idle, a change shown within about a second', async () => {
    const { batchId, jobIds } = await queuedBatch('watched', 3);
    expect(jobIds).toHaveLength(3);
    await logChanges();
    const env = childEnv({
      ...world.env,
      AWS_ENDPOINT_URL_DYNAMODB: dynamo.url,
      OPFLOW_API_URL: api.url,
    });
    const watch = startOpflow(['--backend', 'aws', 'batch', batchId, '--watch'], { env, cwd: process.cwd() });
    const line = new RegExp(`^opflow: batch ${batchId}: `);
    await watch.waitForLines(line, 1);
    // The first answer (the batch's totals, at once) is in; from here the batch is idle for 30 s.
    await sleep(2_000);
    api.reset();
    dynamo.reset();
    await sleep(30_000);
    const polls = api.count(/^GET \/events$/);
    const reads = dynamo.count(/./);
    // The function's timeout (the template's) bounds each wait: 20 s of a 25 s function (1 or 2
    // polls), 8 s of a 10 s one (about 4).
    expect(polls).toBeGreaterThanOrEqual(1);
    expect(polls).toBeLessThanOrEqual(6);
    expect(api.count(/./)).toBe(polls);
    // One look at the batch (its record, its released jobs) per answer: reading every 2 s was 15 looks.
    expect(reads).toBeLessThanOrEqual(2 * polls + 2);
    expect(watch.stderrSoFar()).not.toMatch(/reading the batch every 2 s/);

    // A job changes: cancelled through the API. The live line shows it about a second after the log has it.
    const cancelled = await world.api('POST', `/jobs/${jobIds[0]}/cancel`);
    expect(cancelled.status).toBe(200);
    const shown = watch.waitForLines(/1 failed/, 1);
    await logChanges();
    const logged = performance.now();
    await shown;
    const delayMs = performance.now() - logged;
    console.log(
      `batch --watch on aws: ${polls} GET /events and ${reads} DynamoDB requests in 30 s idle; a change shown ${Math.round(delayMs)} ms after it was logged`,
    );
    // The log is read each second while a poll waits; a loaded machine adds its own delay.
    expect(delayMs).toBeLessThan(3_000);

    // The rest run; once the batch's record is finished, the watch ends and prints the batch.
    await world.settle(jobIds);
    await admitBatch(deps, batchId);
    await logChanges();
    const result = await watch.done;
    expect(result.stdout).toContain(`batch ${batchId}`);
    expect(result.stdout).toMatch(/2 succeeded, 0 failed, 1 cancelled/);
    expect(result.code).toBe(0);
  });

  it('says once that it reads every 2 s when there is no job API to follow', async () => {
    const { batchId, jobIds } = await queuedBatch('unfollowed', 1);
    const env = childEnv({ ...world.env });
    const watch = startOpflow(['--backend', 'aws', 'batch', batchId, '--watch'], { env, cwd: process.cwd() });
    await watch.waitForLines(/no job API to follow \(set OPFLOW_API_URL/, 1);
    await world.settle(jobIds);
    await admitBatch(deps, batchId);
    const result = await watch.done;
    expect(result.code).toBe(0);
    expect(result.stderr.match(/reading the batch every 2 s/g)).toHaveLength(1);
  });

  it('falls back to reads when the job API does not answer, saying so once', async () => {
    const { batchId, jobIds } = await queuedBatch('unreachable', 1);
    // A port nothing listens on.
    const closed = await startCountingProxy(world.gateway.url);
    const url = closed.url;
    await closed.close();
    const env = childEnv({ ...world.env, OPFLOW_API_URL: url });
    const watch = startOpflow(['--backend', 'aws', 'batch', batchId, '--watch'], { env, cwd: process.cwd() });
    await watch.waitForLines(/does not answer .*reading the batch every 2 s until it does/, 1);
    await world.settle(jobIds);
    await admitBatch(deps, batchId);
    const result = await watch.done;
    expect(result.code).toBe(0);
    expect(result.stderr.match(/does not answer/g)).toHaveLength(1);
  });
});
