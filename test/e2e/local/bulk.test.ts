// Bulk actions as a user meets them, through the real bin/opflow.js: `opflow bulk` counts, asks
// ("n" changes nothing, "y" acts), refuses bad flags; and `opflow serve`'s POST /jobs/bulk over
// HTTP: the dry run, the confirmed retry, a bulk answer whose jobs then run to SUCCEEDED, the
// token and the cross-origin rule of every write; `opflow bulk redrive` of a batch's items failed on
// their deadline, counted by a dry run that changes nothing, then redriven with a new deadline and
// run to SUCCEEDED as the same jobs, the batch's totals following them; its count's table names
// each job's step by its title.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { childEnv, killRunningOpflows, runOpflow } from './opflow-process';
import { startServe } from './serve-process';

const dir = mkdtempSync(join(tmpdir(), 'opflow-bulk-'));
afterAll(() => {
  killRunningOpflows();
  rmSync(dir, { recursive: true, force: true });
});
const token = 'bulk-test-token-0123456789abcdef';
const env = () =>
  childEnv({ OPFLOW_DB: join(dir, 'opflow.db'), OPFLOW_OUT: join(dir, 'out'), OPFLOW_SERVE_TOKEN: token });
const opflow = (args: string[], stdin?: string) => runOpflow(args, { env: env(), cwd: dir, stdin });

interface JobView {
  id: string;
  status: string;
  runs?: unknown[];
  error?: { kind: string };
}

describe('bulk actions through the real bin and opflow serve', () => {
  it('opflow bulk cancel counts, asks, and acts on what it counted; serve retries them over HTTP', async () => {
    const { run, url } = await startServe([], { env: env(), cwd: dir });
    const api = async (
      path: string,
      init: { method?: string; body?: unknown; headers?: Record<string, string> } = {},
    ) => {
      const response = await fetch(`${url}${path}`, {
        method: init.method ?? 'GET',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...init.headers },
        body: init.body === undefined ? undefined : JSON.stringify(init.body),
      });
      return { status: response.status, json: (await response.json()) as Record<string, unknown> };
    };
    try {
      const ids: string[] = [];
      const statuses = async () =>
        Promise.all(ids.map(async (id) => ((await api(`/jobs/${id}`)).json.job as JobView).status));
      const waitFor = async (status: string) => {
        const deadline = Date.now() + 90_000;
        while ((await statuses()).some((each) => each !== status) && Date.now() < deadline)
          await new Promise((resolve) => setTimeout(resolve, 300));
        expect(await statuses()).toEqual(ids.map(() => status));
      };
      // Jobs with a manual selection stop at it.
      for (let i = 0; i < 3; i++) {
        const created = await api('/jobs', {
          method: 'POST',
          body: {
            workflow: 'find-solution',
            input: { text: `A lamp that dims itself at dusk, model ${i}.` },
            label: `lamp ${i}`,
            selection: { mode: 'manual' },
          },
        });
        expect(created.status, JSON.stringify(created.json)).toBe(201);
        ids.push((created.json.job as JobView).id);
      }
      await waitFor('AWAITING_INPUT');

      // The CLI on the same database: counted, asked, "n" changes nothing, "y" cancels them.
      const no = await opflow(['bulk', 'cancel', '--label', 'lamp'], 'n\n');
      expect(no.stdout).toContain('opflow bulk cancel: 3 jobs match');
      expect(no.code, no.stderr).toBe(2);
      expect(no.stderr).toContain('nothing changed');
      const bad = await opflow(['bulk', 'cancel', '--failure', 'lost']);
      expect(bad.code).toBe(2);
      expect(bad.stderr).toMatch(/--failure \(one of auth, .*deadline/);
      const yes = await opflow(['bulk', 'cancel', '--label', 'lamp'], 'y\n');
      expect(yes.code, yes.stderr).toBe(0);
      expect(yes.stdout).toContain('cancelled 3 of 3 jobs');
      await waitFor('CANCELLED');

      // Over HTTP: a dry run, the token and origin rules of every write, then the confirmed retry.
      const dry = await api('/jobs/bulk', {
        method: 'POST',
        body: { action: 'retry', dryRun: true, where: { label: 'lamp' } },
      });
      expect(dry.status).toBe(200);
      expect(dry.json.count).toBe(3);
      const confirm = { count: dry.json.count, selection: dry.json.selection };
      const crossOrigin = await api('/jobs/bulk', {
        method: 'POST',
        headers: { origin: 'http://evil.example' },
        body: { action: 'retry', where: { label: 'lamp' }, confirm },
      });
      expect(crossOrigin.status).toBe(403);
      const noToken = await fetch(`${url}/jobs/bulk`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ action: 'retry', dryRun: true }),
      });
      expect(noToken.status).toBe(401);
      const retried = await api('/jobs/bulk', {
        method: 'POST',
        body: { action: 'retry', where: { label: 'lamp' }, confirm },
      });
      expect(retried.status).toBe(200);
      expect(retried.json).toMatchObject({ done: 3, skipped: 0 });
      await waitFor('AWAITING_INPUT');

      // Every waiting job answered with its own defaults, at each selection point (find-solution has
      // two): serve's workers run them to the end.
      for (let round = 0; round < 3 && (await statuses()).includes('AWAITING_INPUT'); round++) {
        const answerDry = await api('/jobs/bulk', {
          method: 'POST',
          body: { action: 'answer', dryRun: true, options: { take: 'defaults', by: 'e2e' } },
        });
        expect(answerDry.json.count).toBe(3);
        const answered = await api('/jobs/bulk', {
          method: 'POST',
          body: {
            action: 'answer',
            options: { take: 'defaults', by: 'e2e' },
            confirm: { count: 3, selection: answerDry.json.selection },
          },
        });
        expect(answered.json).toMatchObject({ done: 3, skipped: 0 });
        const settle = Date.now() + 90_000;
        while (
          (await statuses()).some((each) => !['AWAITING_INPUT', 'SUCCEEDED', 'FAILED'].includes(each)) &&
          Date.now() < settle
        )
          await new Promise((resolve) => setTimeout(resolve, 300));
      }
      expect(await statuses()).toEqual(['SUCCEEDED', 'SUCCEEDED', 'SUCCEEDED']);
    } finally {
      run.child.kill('SIGTERM');
      await run.done;
    }
  }, 120_000);
  it('opflow bulk redrive counts the items failed on their deadline, then redrives them to SUCCEEDED', async () => {
    const lines = ['A hinge that folds twice and locks.', 'A lamp that dims itself at dusk.'].map((text, i) =>
      JSON.stringify({ id: `d${i}`, text }),
    );
    writeFileSync(join(dir, 'late.jsonl'), `${lines.join('\n')}\n`);
    const ingest = await opflow([
      'ingest',
      'late.jsonl',
      '--workflow',
      'technical-disclosure',
      '--deadline',
      '2s',
      '--batch',
      'late',
    ]);
    expect(ingest.code, ingest.stderr).toBe(1);
    const list = async () =>
      JSON.parse((await opflow(['list', '--batch', 'late', '--json'])).stdout) as JobView[];
    const failed = await list();
    expect(failed.map((job) => [job.status, job.error?.kind])).toEqual([
      ['FAILED', 'deadline'],
      ['FAILED', 'deadline'],
    ]);

    // The dry run counts them (the lamp jobs of the test above, succeeded, are not among them) and
    // changes nothing.
    const filter = ['--failure', 'deadline', '--workflow', 'technical-disclosure'];
    const dry = await opflow(['bulk', 'redrive', ...filter, '--deadline', '10m', '--dry-run', '--json']);
    expect(dry.code, dry.stderr).toBe(0);
    const preview = JSON.parse(dry.stdout) as { count: number; sample: { id: string; status: string }[] };
    expect(preview.count).toBe(2);
    expect(preview.sample.map((job) => job.id).sort()).toEqual(failed.map((job) => job.id).sort());
    expect((await list()).map((job) => job.status)).toEqual(['FAILED', 'FAILED']);
    // Its table names each job's step by the title opflow status and the dashboard show.
    const titles: Record<string, string> = {
      extract: 'extract the key content',
      generate: 'write the disclosure',
      'download-link': 'wait for the document',
      document: 'download the document',
    };
    const table = await opflow(['bulk', 'redrive', ...filter, '--dry-run']);
    for (const job of failed as (JobView & { step: string })[]) {
      const row = table.stdout.split('\n').find((line) => line.startsWith(job.id));
      expect(row, table.stdout).toContain(titles[job.step]);
    }

    const redriven = await opflow(['bulk', 'redrive', ...filter, '--deadline', '10m', '--yes']);
    expect(redriven.code, redriven.stderr).toBe(0);
    expect(redriven.stdout).toContain('redriven 2 of 2 jobs');
    expect(redriven.stdout).toContain('batches running again: late');
    // Nothing is left to redrive: a second run counts none.
    const again = await opflow(['bulk', 'redrive', ...filter, '--dry-run']);
    expect(again.stdout).toContain('opflow bulk redrive: 0 jobs match');

    // They run here with opflow resume, with their new deadline, to the end: the same jobs, their
    // first run kept, and the batch counts them as succeeded.
    const resumed = await opflow(['resume']);
    expect(resumed.code, resumed.stderr).toBe(0);
    for (const { id } of await list()) {
      const job = JSON.parse((await opflow(['status', id, '--json'])).stdout) as JobView;
      expect(job.status).toBe('SUCCEEDED');
      expect(job.runs).toHaveLength(1);
    }
    const batch = JSON.parse((await opflow(['batch', 'late', '--json'])).stdout) as {
      totals: Record<string, number>;
    };
    expect(batch.totals).toMatchObject({ succeeded: 2, failed: 0 });
  }, 180_000);
});
