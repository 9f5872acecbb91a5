// `opflow ingest` and `opflow batch` through the real bin on the local backend, against the built-in
// sandbox (or a sandbox started here): a 540-line manifest end to end, a re-ingest, a folder of
// .docx/.pdf/.md/.txt documents made here, redrive of the failed items only, and an ingest killed
// with SIGKILL mid-file that resumes without duplicates.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Document, Packer, Paragraph } from 'docx';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Sandbox, startSandbox } from '../../../shared/sandbox';
import { jsonlManifest, manifestFiles } from '../../support/manifests';
import { childEnv, killRunningOpflows, runOpflow, startOpflow } from './opflow-process';

const fast = ['--qps', '1000', '--concurrency', '16'];

function csvRows(path: string): Record<string, string>[] {
  const [header, ...rows] = readFileSync(path, 'utf8').trim().split('\n');
  const names = header!.split(',');
  // The rows of these tests hold no quoted commas except in key_findings, which is parsed loosely.
  return rows.map((row) => {
    const cells = row
      .match(/("([^"]|"")*"|[^,]*)(,|$)/g)!
      .map((cell) => cell.replace(/,$/, '').replace(/^"|"$/g, '').replace(/""/g, '"'));
    return Object.fromEntries(names.map((name, index) => [name, cells[index] ?? '']));
  });
}

describe('opflow ingest (local)', () => {
  let dir: string;
  let env: NodeJS.ProcessEnv;
  const opflow = (...args: string[]) => runOpflow(args, { env, cwd: dir });

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'opflow-e2e-ingest-'));
    env = childEnv({
      OPFLOW_SANDBOX_SPEED: '300',
      OPFLOW_DB: join(dir, 'state', 'jobs.db'),
      OPFLOW_OUT: join(dir, 'out'),
    });
    for (const [name, body] of Object.entries(manifestFiles)) writeFileSync(join(dir, name), body);
  });
  afterAll(() => {
    killRunningOpflows();
    rmSync(dir, { recursive: true, force: true });
  });

  // 540 lines: the 20 kinds of bad line, two of the SQLite store's chunks of 500 records, and 520
  // items in two pages of the 500 the outputs read. Side by side on the shared two-core machine
  // (load 24 to 30) it took 462 s, and with 1,000 lines failed at its 600 s limit; the 1,000-line
  // manifests, as JSON Lines and as CSV, run on both backends in test/integration/ingest/ingest-core.
  it('runs a 540-line manifest with 20 bad lines to 520 jobs, a summary and the failures; a re-ingest creates nothing', async () => {
    const lines = 540;
    const good = lines - 20;
    const manifest = jsonlManifest(lines);
    writeFileSync(join(dir, 'disclosures.jsonl'), manifest.text);
    const run = await opflow(
      'ingest',
      'disclosures.jsonl',
      '--workflow',
      'patent-count',
      '--in-flight',
      '200',
      ...fast,
      '--json',
    );
    expect(run.code, run.stderr).toBe(1);
    const result = JSON.parse(run.stdout);
    expect(result.end).toBe('finished');
    expect(result.batch.totals).toEqual({ waiting: 0, running: 0, succeeded: good, failed: 0, cancelled: 0 });
    expect(result.problems.map((p: { record: number }) => p.record)).toEqual(manifest.bad.map((b) => b.at));
    const batchId: string = result.batch.id;
    const folder = join(dir, 'out', 'batches', batchId);
    const rows = csvRows(join(folder, 'summary.csv'));
    expect(rows.map((row) => row.id)).toEqual(manifest.goodIds);
    expect(rows.every((row) => row.status === 'SUCCEEDED' && /^\d+$/.test(row.references ?? ''))).toBe(true);
    expect(rows[0]?.key_findings).toMatch(/patents for TTL:\(battery 1\)/);
    expect(existsSync(join(folder, rows[0]!.report!))).toBe(true);
    const failed = readFileSync(join(folder, 'failed.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(failed.map((entry) => entry.source)).toEqual(manifest.bad.map((bad) => `line ${bad.at}`));
    for (const [index, bad] of manifest.bad.entries()) expect(failed[index].reason).toMatch(bad.reason);
    const jobs = JSON.parse((await opflow('list', '--limit', '1000', '--json')).stdout);
    expect((Array.isArray(jobs) ? jobs : jobs.jobs).length).toBe(good);

    const again = await opflow('ingest', 'disclosures.jsonl', '--workflow', 'patent-count', ...fast);
    expect(again.stdout).toMatch(
      new RegExp(
        `0 new items, ${good} ingested before \\(${good} already done, 0 still running\\), 20 bad lines`,
      ),
    );
    const after = JSON.parse((await opflow('list', '--limit', '1000', '--json')).stdout);
    expect((Array.isArray(after) ? after : after.jobs).length).toBe(good);
    const shown = JSON.parse((await opflow('batch', batchId, '--json')).stdout);
    // One billed unit per job: nothing was paid twice. `calls` counts HTTP attempts, failed ones too, so a
    // read that timed out on a loaded machine and was retried adds a call but no billed unit.
    expect(shown).toMatchObject({ status: 'FINISHED', items: good, run: 2, billedUnits: good });
    expect(shown.calls).toBeGreaterThanOrEqual(good);
  }, 600_000);

  it('extracts the text of .docx, .pdf, .md and .txt documents of a folder, and names the ones it cannot use', async () => {
    const folder = join(dir, 'documents');
    mkdirSync(join(folder, 'sub'), { recursive: true });
    const docx = await Packer.toBuffer(
      new Document({ sections: [{ children: [new Paragraph('TTL:(graphene anode)')] }] }),
    );
    writeFileSync(join(folder, 'anode.docx'), docx);
    const pdf = await PDFDocument.create();
    const page = pdf.addPage();
    page.drawText('TTL:(heat pump dryer)', {
      x: 50,
      y: 700,
      size: 14,
      font: await pdf.embedFont(StandardFonts.Helvetica),
    });
    writeFileSync(join(folder, 'sub', 'dryer.pdf'), await pdf.save());
    writeFileSync(join(folder, 'sub', 'valve.md'), '# Valve\n\nTTL:(check valve)\n');
    writeFileSync(join(folder, 'plain.txt'), 'TTL:(bicycle helmet)');
    writeFileSync(join(folder, 'broken.docx'), 'this is not a zip file');
    writeFileSync(join(folder, 'empty.pdf'), '');
    writeFileSync(join(folder, 'notes.rtf'), '{\\rtf1 nothing}');
    const run = await opflow('ingest', 'documents', '--workflow', 'patent-count', '--batch', 'docs', ...fast);
    expect(run.code, run.stderr).toBe(1);
    const rows = csvRows(join(dir, 'out', 'batches', 'docs', 'summary.csv'));
    const byId = Object.fromEntries(rows.map((row) => [row.id, row]));
    expect(Object.keys(byId).sort()).toEqual(['anode.docx', 'plain.txt', 'sub/dryer.pdf', 'sub/valve.md']);
    expect(byId['anode.docx']?.key_findings).toMatch(/patents for TTL:\(graphene anode\)/);
    expect(byId['sub/dryer.pdf']?.key_findings).toMatch(/patents for TTL:\(heat pump dryer\)/);
    expect(byId['sub/valve.md']?.key_findings).toMatch(/patents for TTL:\(check valve\)/);
    expect(byId['sub/valve.md']?.title).toBe('Valve');
    expect(byId['plain.txt']?.status).toBe('SUCCEEDED');
    const failed = readFileSync(join(dir, 'out', 'batches', 'docs', 'failed.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(failed.map((entry) => [entry.source, entry.reason])).toEqual([
      ['broken.docx', expect.stringMatching(/cannot read the docx document/)],
      ['empty.pdf', expect.stringMatching(/the document is empty/)],
      ['notes.rtf', expect.stringMatching(/unsupported document type "\.rtf"/)],
    ]);
    expect(run.stdout).toMatch(/✖ notes\.rtf \(id notes\.rtf\): file: notes\.rtf: unsupported document type/);
  }, 300_000);

  it('validates every line with --dry-run and estimates from earlier jobs, starting nothing', async () => {
    writeFileSync(
      join(dir, 'dry.jsonl'),
      '{"id": "x1", "query": "TTL:(a)"}\n{"id": "x2"}\n{"id": "x3", "query": "TTL:(b)"}\n',
    );
    const before = JSON.parse((await opflow('list', '--limit', '1000', '--json')).stdout);
    const dry = await opflow('ingest', 'dry.jsonl', '--workflow', 'patent-count', '--dry-run');
    expect(dry.code).toBe(1);
    expect(dry.stdout).toMatch(/dry run: 3 records, 2 usable, 1 refused; nothing was started/);
    expect(dry.stdout).toMatch(
      /✖ dry\.jsonl, line 2 \(id x2\): refused by patent-count: query: the search expression is required/,
    );
    expect(dry.stdout).toMatch(
      /estimate for 2 patent-count items: about 2 calls and 2 billed units \(1\.0 calls and 1\.0 units per item, from \d+ earlier jobs\)/,
    );
    const after = JSON.parse((await opflow('list', '--limit', '1000', '--json')).stdout);
    expect((after.jobs ?? after).length).toBe((before.jobs ?? before).length);
    expect(
      JSON.parse((await opflow('batch', '--json')).stdout).batches.some((b: { source: string }) =>
        b.source.endsWith('dry.jsonl'),
      ),
    ).toBe(false);
    const refused = await opflow('ingest', 'dry.jsonl', '--workflow', 'patent-count', '--max-units', '1');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/not started: the batch would bill about 2 units .* over --max-units 1/);

    // Once the batch ran, a re-ingest estimates only what it would still run: the changed line.
    const ran = await opflow('ingest', 'dry.jsonl', '--workflow', 'patent-count', ...fast, '--json');
    expect(JSON.parse(ran.stdout).batch).toMatchObject({ billedUnits: 2 });
    writeFileSync(
      join(dir, 'dry.jsonl'),
      '{"id": "x1", "query": "TTL:(a)"}\n{"id": "x2"}\n{"id": "x3", "query": "TTL:(changed)"}\n',
    );
    const again = await opflow('ingest', 'dry.jsonl', '--workflow', 'patent-count', '--dry-run', '--json');
    const preview = JSON.parse(again.stdout);
    expect(preview).toMatchObject({ items: 2, existing: 1, toRun: { 'patent-count': 1 }, billedBefore: 2 });
    expect(preview.estimate).toMatchObject({ calls: 1, billedUnits: 1 });
    // The limit is the batch's: 2 billed + 1 to come passes 2, not 3.
    const over = await opflow('ingest', 'dry.jsonl', '--workflow', 'patent-count', '--max-units', '2');
    expect(over.code).toBe(1);
    expect(over.stderr).toMatch(
      /would bill about 1 units \(1 items to run, 1 done before, .*\) on top of the 2 it billed already, over --max-units 2/,
    );
    const within = await opflow(
      'ingest',
      'dry.jsonl',
      '--workflow',
      'patent-count',
      '--max-units',
      '3',
      ...fast,
      '--json',
    );
    expect(JSON.parse(within.stdout).batch).toMatchObject({ items: 3, billedUnits: 3 });
  }, 300_000);

  describe('against a sandbox of its own', () => {
    let sandbox: Sandbox;
    let sandboxEnv: NodeJS.ProcessEnv;
    beforeAll(async () => {
      sandbox = await startSandbox({ port: 0 });
      sandboxEnv = childEnv({
        OPFLOW_BASE_URL: sandbox.url,
        OPFLOW_DB: join(dir, 'redrive', 'jobs.db'),
        OPFLOW_OUT: join(dir, 'redrive-out'),
      });
    });
    afterAll(async () => sandbox?.close());

    it('--redrive runs only the failed items again, from where they failed', async () => {
      const lines = Array.from({ length: 8 }, (_, i) =>
        JSON.stringify({ id: `r${i}`, query: `TTL:(lamp ${i})` }),
      );
      writeFileSync(join(dir, 'redrive.jsonl'), `${lines.slice(0, 5).join('\n')}\n`);
      const ok = await runOpflow(
        ['ingest', 'redrive.jsonl', '--workflow', 'patent-count', '--batch', 'lamps', ...fast],
        { env: sandboxEnv, cwd: dir },
      );
      expect(ok.code, ok.stderr).toBe(0);
      // Three more lines, run with a key the platform refuses. Another key is another upstream, so the
      // five done on the sandbox's key are items of this key too: all eight fail.
      writeFileSync(join(dir, 'redrive.jsonl'), `${lines.join('\n')}\n`);
      const bad = await runOpflow(
        ['ingest', 'redrive.jsonl', '--workflow', 'patent-count', '--batch', 'lamps', ...fast],
        {
          env: { ...sandboxEnv, OPFLOW_API_KEY: 'sk-not-a-key-of-this-sandbox-000000' },
          cwd: dir,
        },
      );
      expect(bad.code).toBe(1);
      expect(bad.stdout).toMatch(/items: 5 succeeded, 8 failed/);
      const before = JSON.parse(
        (await runOpflow(['list', '--json', '--limit', '100'], { env: sandboxEnv, cwd: dir })).stdout,
      );
      const jobsBefore: { id: string; status: string; updatedAt: string }[] = before.jobs ?? before;
      const redrive = await runOpflow(['batch', 'lamps', '--redrive', '--json', ...fast], {
        env: sandboxEnv,
        cwd: dir,
      });
      expect(redrive.code, redrive.stderr).toBe(0);
      expect(JSON.parse(redrive.stdout)).toMatchObject({
        status: 'FINISHED',
        totals: { succeeded: 13, failed: 0 },
      });
      const after = JSON.parse(
        (await runOpflow(['list', '--json', '--limit', '100'], { env: sandboxEnv, cwd: dir })).stdout,
      );
      const jobsAfter: { id: string; status: string; updatedAt: string }[] = after.jobs ?? after;
      expect(jobsAfter).toHaveLength(13);
      for (const job of jobsBefore) {
        const now = jobsAfter.find((other) => other.id === job.id)!;
        expect(now.status).toBe('SUCCEEDED');
        // The succeeded ones were not touched; the failed ones ran again as the same jobs.
        if (job.status === 'SUCCEEDED') expect(now.updatedAt).toBe(job.updatedAt);
        else expect(job.status).toBe('FAILED');
      }
    }, 300_000);
  });

  it('resumes an ingest killed with SIGKILL mid-file from its last committed chunk, without duplicates', async () => {
    const total = 30_000;
    const lines = Array.from({ length: total }, (_, i) => `{"id":"k${i}","query":"TTL:(kill ${i})"}`);
    writeFileSync(join(dir, 'big.jsonl'), `${lines.join('\n')}\n`);
    const dbPath = join(dir, 'kill', 'jobs.db');
    const killEnv = { ...env, OPFLOW_DB: dbPath };
    const first = startOpflow(
      ['ingest', 'big.jsonl', '--workflow', 'patent-count', '--batch', 'big', '--no-wait'],
      { env: killEnv, cwd: dir },
    );
    await first.waitForLines(/batch big: ingesting/, 1);
    const cursor = () => {
      if (!existsSync(dbPath)) return 0;
      const db = new Database(dbPath, { readonly: true, fileMustExist: true });
      try {
        const row = db.prepare("SELECT body FROM batches WHERE id = 'big'").get() as
          | { body: string }
          | undefined;
        return row ? (JSON.parse(row.body).cursor.records as number) : 0;
      } catch {
        return 0;
      } finally {
        db.close();
      }
    };
    for (let waited = 0; cursor() === 0 && waited < 600; waited++)
      await new Promise((resolve) => setTimeout(resolve, 100));
    first.child.kill('SIGKILL');
    await first.done;
    const committed = cursor();
    expect(committed).toBeGreaterThan(0);
    expect(committed).toBeLessThan(total);
    const second = await runOpflow(
      ['ingest', 'big.jsonl', '--workflow', 'patent-count', '--batch', 'big', '--no-wait'],
      { env: killEnv, cwd: dir },
    );
    expect(second.stderr).toContain(`batch big: continuing the ingest from record ${committed + 1}`);
    const db = new Database(dbPath, { readonly: true });
    try {
      const counts = db
        .prepare(
          "SELECT COUNT(*) AS n, COUNT(DISTINCT item_key) AS keys, MAX(seq) AS last FROM batch_items WHERE batch_id = 'big'",
        )
        .get() as { n: number; keys: number; last: number };
      expect(counts).toEqual({ n: total, keys: total, last: total - 1 });
    } finally {
      db.close();
    }
  }, 300_000);

  it("ends at a line that waits for a selection (README's example manifest) with exit 3 and the command that answers it; batch --watch then finishes the batch", async () => {
    const own = childEnv({
      OPFLOW_SANDBOX_SPEED: '300',
      OPFLOW_DB: join(dir, 'selection', 'jobs.db'),
      OPFLOW_OUT: join(dir, 'selection', 'out'),
    });
    const manifest = join(process.cwd(), 'examples', 'manifests', 'disclosures.jsonl');
    const lines = readFileSync(manifest, 'utf8').trim().split('\n').length;
    const run = await runOpflow(
      ['ingest', manifest, '--workflow', 'novelty-check', '--batch', 'readme', ...fast, '--json'],
      { env: own, cwd: dir },
    );
    expect(run.code, run.stderr).toBe(3);
    const result = JSON.parse(run.stdout);
    expect(result.end).toBe('awaiting');
    expect(result.exitCode).toBe(3);
    expect(result.batch.totals).toMatchObject({ succeeded: lines - 1, running: 1, failed: 0 });
    expect(result.awaitingSelection).toHaveLength(1);
    const [waiting] = result.awaitingSelection as { jobId: string; pending: { options: { id: string }[] } }[];
    expect(waiting!.pending.options.length).toBeGreaterThan(0);

    // The text output names the job and how to answer it.
    const text = await runOpflow(['batch', 'readme', '--watch'], { env: own, cwd: dir });
    expect(text.code, text.stderr).toBe(3);
    expect(text.stdout).toContain(`answer with: opflow resume ${waiting!.jobId} --select `);

    const answered = await runOpflow(
      ['resume', waiting!.jobId, '--select', waiting!.pending.options[0]!.id, '--json'],
      { env: own, cwd: dir },
    );
    expect(answered.code, answered.stderr).toBe(0);
    const watched = await runOpflow(['batch', 'readme', '--watch', '--json'], { env: own, cwd: dir });
    expect(watched.code, watched.stderr).toBe(0);
    expect(JSON.parse(watched.stdout)).toMatchObject({ status: 'FINISHED', items: lines });
  }, 600_000);
});
