// The opflow command's parsing, its helpful errors and its exit codes, run in-process.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { ExitCode, main } from '../../../shared/cli/main';
import { callStep, type Workflow } from '../../../shared/engine/workflow';
import { startSandbox } from '../../../shared/sandbox';
import { workflowNames } from '../../../shared/workflows';
import { type CapturedIo, captureIo } from './capture-io';

describe('opflow (in-process)', () => {
  let dir: string;
  let io: CapturedIo;
  const opflow = (...args: string[]) => main(['node', 'opflow', ...args], { io });
  const env = () => ({
    OPFLOW_DB: join(dir, 'state', 'opflow.db'),
    OPFLOW_OUT: join(dir, 'out'),
    OPFLOW_SANDBOX_SPEED: '1000',
  });

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'opflow-cli-'));
    io = captureIo({ env: env(), cwd: dir });
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('lists the commands, the workflows and the exit codes in --help', async () => {
    expect(await opflow('--help')).toBe(ExitCode.ok);
    for (const command of ['run', 'resume', 'status', 'list', 'cancel', 'report', 'sandbox']) {
      expect(io.out()).toContain(command);
    }
    for (const name of workflowNames) expect(io.out()).toContain(name);
    expect(io.out()).toContain('Exit codes:');
    expect(io.out()).toContain('130');
    // Where to read on: the docs index and the commands' page, both files of the repository.
    expect(io.out()).toMatch(/Documentation: docs\/README\.md .*\n.*docs\/guides\/cli\.md/);
    for (const page of ['docs/README.md', 'docs/guides/cli.md'])
      expect(existsSync(new URL(`../../../${page}`, import.meta.url)), page).toBe(true);
  });

  it('refuses an unknown command with a usage error', async () => {
    expect(await opflow('frobnicate')).toBe(ExitCode.usage);
    expect(io.err()).toContain("unknown command 'frobnicate'");
  });

  it('lists the known workflows for an unknown one', async () => {
    writeFileSync(join(dir, 'idea.md'), '# Idea\nText.');
    expect(await opflow('run', 'novelty', 'idea.md')).toBe(ExitCode.usage);
    expect(io.err()).toContain('unknown workflow "novelty" (did you mean novelty-check?)');
    expect(io.err()).toContain(`known workflows: ${[...workflowNames].sort().join(', ')}`);
  });

  it('reports a failure as JSON on stdout with --json, beside the line on stderr', async () => {
    expect(await opflow('status', '01ZZZZZZZZZZZZZZZZZZZZZZZZ', '--json')).toBe(ExitCode.notFound);
    const answer = JSON.parse(io.out()) as { error: { message: string; exitCode: number } };
    expect(answer.error.exitCode).toBe(ExitCode.notFound);
    expect(answer.error.message).toContain('01ZZZZZZZZZZZZZZZZZZZZZZZZ');
    expect(io.err()).toContain(answer.error.message);
  });

  it('needs at least one input', async () => {
    expect(await opflow('run', 'novelty-check')).toBe(ExitCode.usage);
    expect(io.err()).toContain("missing required argument 'inputs'");
  });

  it('refuses a selection mode other than auto or manual', async () => {
    expect(await opflow('run', 'novelty-check', 'x.md', '--select', 'sometimes')).toBe(ExitCode.usage);
    expect(io.err()).toMatch(/argument 'sometimes' is invalid.*auto, manual/);
  });

  it('refuses a deadline it cannot read', async () => {
    writeFileSync(join(dir, 'idea.md'), '# Idea\nText.');
    expect(await opflow('run', 'novelty-check', 'idea.md', '--deadline', '5 years')).toBe(ExitCode.usage);
    expect(io.err()).toContain('--deadline must be a duration such as 90s, 30m, 2h or 1d, not "5 years"');
  });

  it('says which inputs cannot be used, and stops when none can', async () => {
    writeFileSync(join(dir, 'slides.pdf'), '%PDF');
    writeFileSync(join(dir, 'slides.pptx'), 'PK');
    expect(await opflow('run', 'novelty-check', 'missing.md', 'slides.pdf', 'slides.pptx')).toBe(
      ExitCode.usage,
    );
    expect(io.err()).toContain('skipping missing.md: no such file or folder');
    expect(io.err()).toContain('skipping slides.pdf: cannot read the pdf document');
    expect(io.err()).toContain('skipping slides.pptx: unsupported file type .pptx');
    expect(io.err()).toContain('none of the inputs can be used');
  });

  it('runs the good inputs when some are bad, says why the others were refused, and exits 1', async () => {
    writeFileSync(join(dir, 'good.md'), '# A folding hinge\nA hinge that folds twice.');
    writeFileSync(join(dir, 'bad.json'), '{"text": "x", "colour": "blue"}');
    const code = await opflow(
      'run',
      'novelty-check',
      'good.md',
      'bad.json',
      'gone.txt',
      '--no-wait',
      '--json',
    );
    expect(code).toBe(ExitCode.jobFailed);
    const result = JSON.parse(io.out());
    expect(result.jobs).toHaveLength(1);
    expect(result.jobs[0]).toMatchObject({ workflow: 'novelty-check', label: 'good.md', status: 'QUEUED' });
    expect(result.refused).toEqual([
      { source: 'gone.txt', reason: 'no such file or folder' },
      { source: 'bad.json', reason: expect.stringContaining('invalid input for novelty-check') },
    ]);
    expect(result.refused[1].reason).toContain('colour');
    // The built-in sandbox was started, and said so in exactly one line.
    expect(io.err().match(/using the built-in sandbox/g)).toHaveLength(1);
  });

  it('says a text file cannot feed a workflow that takes only JSON', async () => {
    const jsonOnly = {
      name: 'json-only',
      version: 1,
      description: 'takes JSON',
      input: z.strictObject({ query: z.string() }),
      steps: [
        callStep({
          name: 'count',
          operation: 'p001PatentQuerySearchCount',
          request: () => ({ query_text: 'x' }),
          decide: () => ({ type: 'complete' }),
        }),
      ],
      report: () => ({ title: 't', markdown: '' }),
    } as Workflow;
    writeFileSync(join(dir, 'query.md'), 'lithium battery');
    const code = await main(['node', 'opflow', 'run', 'json-only', 'query.md'], {
      io,
      workflows: new Map([['json-only', jsonOnly]]),
    });
    expect(code).toBe(ExitCode.usage);
    expect(io.err()).toContain('skipping query.md: json-only takes JSON input (a .json file), not text');
  });

  it('names the flag or variable holding a wrong value', async () => {
    expect(await opflow('list', '--qps', 'fast')).toBe(ExitCode.usage);
    expect(io.err()).toContain('--qps: must be a number');
    io = captureIo({ env: { ...env(), OPFLOW_CONCURRENCY: '0' }, cwd: dir });
    expect(await opflow('list')).toBe(ExitCode.environment);
    expect(io.err()).toContain('OPFLOW_CONCURRENCY: must be at least 1 (got "0")');
  });

  it('says when a job does not exist', async () => {
    for (const command of ['status', 'cancel', 'report', 'resume']) {
      io = captureIo({ env: env(), cwd: dir });
      expect(await opflow(command, '01JNOSUCHJOB000000000000000')).toBe(ExitCode.notFound);
      expect(io.err()).toContain('no job 01JNOSUCHJOB000000000000000');
    }
  });

  it('refuses --select without a job, and an unknown status filter', async () => {
    expect(await opflow('resume', '--select', 'f1')).toBe(ExitCode.usage);
    expect(io.err()).toContain('--select answers one job');
    io = captureIo({ env: env(), cwd: dir });
    expect(await opflow('list', '--status', 'DONE')).toBe(ExitCode.usage);
    expect(io.err()).toContain('--status must be one of QUEUED, RUNNING, WAITING, AWAITING_INPUT');
  });

  it('names what is missing when the aws backend is not configured', async () => {
    expect(await opflow('list', '--backend', 'aws')).toBe(ExitCode.environment);
    expect(io.err()).toContain(
      'cannot open the aws backend: invalid aws configuration: OPFLOW_TABLE_NAME: is not set',
    );
    io = captureIo({ env: env(), cwd: dir });
    expect(await opflow('list', '--backend', 'gcp')).toBe(ExitCode.usage);
    expect(io.err()).toMatch(/argument 'gcp' is invalid.*local, aws/);
  });

  it('lists nothing on a fresh database, as text and as JSON', async () => {
    expect(await opflow('list')).toBe(ExitCode.ok);
    expect(io.out()).toBe('no jobs\n');
    io = captureIo({ env: env(), cwd: dir });
    expect(await opflow('list', '--json')).toBe(ExitCode.ok);
    expect(JSON.parse(io.out())).toEqual([]);
  });

  it('never shows the API key, even when the platform refuses it', async () => {
    const sandbox = await startSandbox({ port: 0 });
    const secret = 'sk-live-do-not-print-4f1d2c';
    try {
      writeFileSync(join(dir, 'idea.md'), '# A folding hinge\nA hinge that folds twice.');
      io = captureIo({
        env: { ...env(), OPFLOW_API_KEY: secret, OPFLOW_BASE_URL: sandbox.url },
        cwd: dir,
      });
      const code = await opflow('run', 'novelty-check', 'idea.md');
      expect(code).toBe(ExitCode.jobFailed);
      expect(io.out()).toContain('failed at submit');
      const listing = captureIo({ env: { ...env(), OPFLOW_API_KEY: secret }, cwd: dir });
      await main(['node', 'opflow', 'list', '--json'], { io: listing });
      const [job] = JSON.parse(listing.out());
      const status = captureIo({ env: { ...env(), OPFLOW_API_KEY: secret }, cwd: dir });
      await main(['node', 'opflow', 'status', job.id, '--json'], { io: status });
      expect(JSON.parse(status.out()).lastError.kind).toBe('auth');
      const written = [io.out(), io.err(), listing.out(), status.out()];
      for (const name of readdirSync(join(dir, 'state'))) {
        if (name.endsWith('.log')) written.push(readFileSync(join(dir, 'state', name), 'utf8'));
      }
      for (const text of written) expect(text).not.toContain(secret);
    } finally {
      await sandbox.close();
    }
  });
  it("rewrites a finished batch's summary.csv and index.html when opflow retry makes its failed item succeed", async () => {
    // Two counts; the second has a deadline it cannot meet, so the batch finishes with it FAILED.
    writeFileSync(
      join(dir, 'counts.jsonl'),
      `${JSON.stringify({ id: 'ok', query: 'TTL:(lamp)' })}\n${JSON.stringify({ id: 'late', query: 'TTL:(hinge)', deadline: '1ms' })}\n`,
    );
    await opflow('ingest', 'counts.jsonl', '--workflow', 'patent-count', '--batch', 'counts');
    const folder = join(dir, 'out', 'batches', 'counts');
    const rowOf = (id: string) =>
      readFileSync(join(folder, 'summary.csv'), 'utf8')
        .split('\n')
        .find((line) => line.startsWith(`${id},`)) ?? '';
    const total = (label: string) =>
      new RegExp(`<div><b>(\\d+)</b>${label}</div>`).exec(
        readFileSync(join(folder, 'index.html'), 'utf8'),
      )?.[1];
    expect(rowOf('late')).toMatch(/,patent-count,FAILED,/);
    expect([total('succeeded'), total('failed or cancelled')]).toEqual(['1', '1']);
    const jobId = rowOf('late')
      .split(',')
      .find((cell) => /^[0-9A-Z]{26}$/.test(cell));
    expect(jobId).toBeDefined();

    io = captureIo({ env: env(), cwd: dir });
    expect(await opflow('retry', jobId!, '--deadline', '10m')).toBe(ExitCode.ok);
    // The files follow the job: its row succeeded (with its findings), the totals moved.
    expect(rowOf('late')).toMatch(/,patent-count,SUCCEEDED,/);
    expect(rowOf('late')).not.toContain('deadline');
    expect([total('succeeded'), total('failed or cancelled')]).toEqual(['2', '0']);
    expect(rowOf('ok')).toMatch(/,patent-count,SUCCEEDED,/);
  });
  it('exits 1 from opflow ingest --no-wait and opflow batch --watch for a batch with a bad line, 0 without', async () => {
    const good = JSON.stringify({ id: 'a', query: 'TTL:(lamp)' });
    writeFileSync(join(dir, 'bad.jsonl'), `${good}\n{"id": "b", "query": 7}\n`);
    writeFileSync(join(dir, 'good.jsonl'), `${good}\n`);
    const codeOf = async (...args: string[]) => {
      io = captureIo({ env: env(), cwd: dir });
      return opflow(...args);
    };
    expect(
      await codeOf('ingest', 'bad.jsonl', '--workflow', 'patent-count', '--batch', 'bad', '--no-wait'),
    ).toBe(ExitCode.jobFailed);
    expect(io.out()).toContain('1 bad line');
    expect(await codeOf('batch', 'bad', '--watch', '--json')).toBe(ExitCode.jobFailed);
    expect(JSON.parse(io.out())).toMatchObject({ status: 'FINISHED', totals: { succeeded: 1 }, exitCode: 1 });
    expect(await codeOf('batch', 'bad')).toBe(ExitCode.jobFailed);
    expect(
      await codeOf('ingest', 'good.jsonl', '--workflow', 'patent-count', '--batch', 'good', '--no-wait'),
    ).toBe(ExitCode.ok);
    expect(await codeOf('batch', 'good', '--watch')).toBe(ExitCode.ok);
    // Both commands' --help say so.
    for (const command of ['ingest', 'batch']) {
      expect(await codeOf(command, '--help')).toBe(ExitCode.ok);
      expect(io.out().replace(/\s+/g, ' ')).toContain(
        '1 a line was refused (a bad line, with --no-wait and --dry-run too)',
      );
    }
  });
});
