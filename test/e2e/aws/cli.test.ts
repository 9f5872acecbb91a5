// `opflow --backend aws` against the simulated deployment: the real bin in a child process reads the
// stack's outputs from its environment, submits and follows jobs whose steps the bundled Lambda
// functions run, answers a selection, cancels, and prints presigned report links.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Job } from '../../../shared/engine/job-record';
import { REAL_PROCESS_TIMEOUT_MS } from '../../support/timeouts';
import { childEnv, type OpflowResult, runOpflow, startOpflow } from '../local/opflow-process';
import { AwsWorld } from './harness/aws-world';

let world: AwsWorld;
let dir: string;
let env: NodeJS.ProcessEnv;
beforeAll(async () => {
  // The child processes live in real time: the shared clock starts there, and only moves ahead.
  world = await AwsWorld.start({ startAt: Date.now() });
  dir = mkdtempSync(join(tmpdir(), 'opflow-e2e-aws-cli-'));
  env = childEnv(world.env);
  writeFileSync(
    join(dir, 'hinge.md'),
    '# Hinge\nA foldable phone hinge with two axes and a friction damper.\n',
  );
  writeFileSync(
    join(dir, 'battery.md'),
    'How can lithium battery packs be kept from swelling in hot climates?\n',
  );
}, REAL_PROCESS_TIMEOUT_MS);
afterAll(async () => {
  await world?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const opflow = (...args: string[]) => runOpflow(['--backend', 'aws', ...args], { env, cwd: dir });

/**
 * Waits (in real time) until a job of `workflow` appears in the table, and returns it. No count of
 * tries of its own: the child process may take many seconds to start on a loaded machine, and the
 * test's time limit bounds the wait.
 */
async function jobAppears(workflow: string, known: Set<string>): Promise<Job> {
  for (;;) {
    const { jobs } = await world.store.list({ limit: 100 });
    const found = jobs.find((job) => job.workflow === workflow && !known.has(job.id));
    if (found) return found;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function json(result: OpflowResult) {
  try {
    return JSON.parse(result.stdout);
  } catch {
    throw new Error(`opflow printed no JSON (exit ${result.code}):\n${result.stdout}\n${result.stderr}`);
  }
}

describe('opflow --backend aws', { timeout: REAL_PROCESS_TIMEOUT_MS }, () => {
  const known = new Set<string>();

  it('runs a job in the stack and waits for the Lambda functions to finish it', async () => {
    const run = startOpflow(['--backend', 'aws', 'run', 'novelty-check', 'hinge.md', '--json'], {
      env,
      cwd: dir,
    });
    const job = await jobAppears('novelty-check', known);
    known.add(job.id);
    expect(job).toMatchObject({ status: 'QUEUED', source: 'cli', label: 'hinge.md' });
    const [done] = await world.settle([job.id]);
    expect(done?.status).toBe('SUCCEEDED');
    const result = await run.done;
    expect(result.code).toBe(0);
    expect(JSON.stringify(json(result))).toContain(job.id);

    const status = json(await opflow('status', job.id, '--json'));
    expect(status).toMatchObject({ id: job.id, status: 'SUCCEEDED' });
    const listed = json(await opflow('list', '--status', 'SUCCEEDED', '--json'));
    expect(JSON.stringify(listed)).toContain(job.id);

    const report = json(await opflow('report', job.id, '--json'));
    expect(report.html).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/.+report\.html\?.*X-Amz-Signature=/);
    const page = await request(report.html);
    expect(page.statusCode).toBe(200);
    expect(await page.body.text()).toContain('<html');
  });

  it('parks a manual selection, answers it with resume, and cancels another job', async () => {
    const run = await opflow(
      'run',
      'find-solution',
      'battery.md',
      '--select',
      'manual',
      '--json',
      '--no-wait',
    );
    expect([0, 3]).toContain(run.code);
    const job = await jobAppears('find-solution', known);
    known.add(job.id);
    const [parked] = await world.settle([job.id]);
    expect(parked?.status).toBe('AWAITING_INPUT');
    const optionId = parked!.pending!.options[0]!.id;

    const wrong = await opflow('resume', job.id, '--select', 'not-offered', '--no-wait');
    expect(wrong.code).not.toBe(0);
    expect(wrong.stderr).toMatch(/not-offered/);
    const answered = await opflow('resume', job.id, '--select', optionId, '--no-wait');
    expect(answered.code).toBe(0);
    const after = (await world.store.get(job.id))!;
    expect(after.selections[parked!.pending!.step]).toEqual([optionId]);

    const cancelled = await opflow('cancel', job.id, '--json');
    expect(cancelled.code).toBe(0);
    expect((await world.store.get(job.id))?.status).toBe('CANCELLED');
  });

  it('reads the stack outputs from a saved profile (cdk deploy --outputs-file) instead', async () => {
    const { OPFLOW_TABLE_NAME, OPFLOW_QUEUE_URL, OPFLOW_BUCKET_NAME, OPFLOW_API_KEY_SECRET_PREFIX, ...rest } =
      world.env;
    const file = join(dir, 'outputs.json');
    writeFileSync(
      file,
      JSON.stringify({
        'opflow-e2e': {
          TableName: OPFLOW_TABLE_NAME,
          QueueUrl: OPFLOW_QUEUE_URL,
          BucketName: OPFLOW_BUCKET_NAME,
          ApiKeySecretPrefix: OPFLOW_API_KEY_SECRET_PREFIX,
        },
      }),
    );
    const result = await runOpflow(['--backend', 'aws', 'list', '--json'], {
      env: childEnv({ ...rest, OPFLOW_STACK_OUTPUTS: file }),
      cwd: dir,
    });
    expect(result.code).toBe(0);
    const listed = JSON.stringify(json(result));
    for (const id of known) expect(listed).toContain(id);
  });

  it('says which stack output is missing instead of failing obscurely', async () => {
    const result = await runOpflow(['--backend', 'aws', 'list'], {
      env: childEnv({ ...world.env, OPFLOW_TABLE_NAME: '' }),
      cwd: dir,
    });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/OPFLOW_TABLE_NAME: is not set/);
  });
});
