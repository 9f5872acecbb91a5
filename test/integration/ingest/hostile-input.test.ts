/**
 * Hostile input and unlucky operators on ingest, `opflow call` and the MCP ingest tool, through the
 * real bin/opflow.js as a user runs it: a tenant no job could have, special files where a file is
 * expected, endless standard input, and paths that climb out of their folder. Each case must end
 * within its bound, say what is wrong and where, and record nothing it could not run.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { childEnv, killRunningOpflows, opflowBin, runOpflow } from '../../e2e/local/opflow-process';

let dir: string;
const stackLine = /^\s+at .+:\d+:\d+\)?$/m;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'opflow-hostile-'));
  writeFileSync(join(dir, 'good.jsonl'), `${JSON.stringify({ id: 'a', query: 'TTL:(a)' })}\n`);
  writeFileSync(join(dir, 'outside.txt'), 'TTL:(secret text outside the manifest folder)');
  mkdirSync(join(dir, 'm'));
  execFileSync('mkfifo', [join(dir, 'pipe.jsonl')]);
  execFileSync('mkfifo', [join(dir, 'm', 'pipe.txt')]);
  symlinkSync(join(dir, 'outside.txt'), join(dir, 'm', 'link.txt'));
  writeFileSync(join(dir, 'm', 'inside.txt'), 'TTL:(inside)');
  writeFileSync(
    join(dir, 'm', 'lines.jsonl'),
    [
      { id: 'fifo', file: 'pipe.txt' },
      { id: 'climb', file: '../outside.txt' },
      { id: 'link', file: 'link.txt' },
      { id: 'device', file: '/dev/zero' },
      { id: 'ok', file: 'inside.txt' },
    ]
      .map((line) => JSON.stringify(line))
      .join('\n'),
  );
});
afterAll(() => {
  killRunningOpflows();
  rmSync(dir, { recursive: true, force: true });
});

const env = (extra: Record<string, string> = {}) =>
  childEnv({
    OPFLOW_DB: join(dir, 'opflow.db'),
    OPFLOW_OUT: join(dir, 'out'),
    OPFLOW_SANDBOX_SPEED: '1000',
    ...extra,
  });

async function opflow(args: string[], stdin?: string) {
  const started = Date.now();
  const result = await runOpflow(args, { env: env(), cwd: dir, stdin });
  const output = `${result.stdout}\n${result.stderr}`;
  expect(output).not.toMatch(stackLine);
  return { ...result, output, ms: Date.now() - started };
}

describe('every entry point validates the tenant before anything is recorded', () => {
  it('opflow ingest --tenant "a b" exits 2 naming the flag, and creates no batch', async () => {
    const refused = await opflow(['ingest', 'good.jsonl', '--workflow', 'patent-count', '--tenant', 'a b']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('--tenant: "a b" is not a tenant name');
    const batches = await opflow(['batch', '--json']);
    expect(JSON.parse(batches.stdout)).toMatchObject({ batches: [] });
  });

  it('an invalid --batch name is a sentence naming the flag (exit 2), not a schema dump', async () => {
    const refused = await opflow([
      'ingest',
      'good.jsonl',
      '--workflow',
      'patent-count',
      '--batch',
      'no/slashes',
    ]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('--batch: "no/slashes" is not a batch name');
    expect(refused.stderr).not.toContain('"code"');
  });
});

describe('raw errors said with the flag and the path', () => {
  it('batch --download into a path under a file names --download, the path and the reason (exit 2)', async () => {
    writeFileSync(join(dir, 'a-file'), 'x');
    const ingested = await opflow([
      'ingest',
      'good.jsonl',
      '--workflow',
      'patent-count',
      '--no-wait',
      '--batch',
      'dl',
    ]);
    expect(ingested.code, ingested.output).toBe(0);
    const refused = await opflow(['batch', 'dl', '--download', 'a-file/out']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`--download a-file/out: cannot write ${join(dir, 'a-file/out')}`);
    expect(refused.stderr).toContain('a part of the path is a file, not a folder (ENOTDIR)');
  });
});

describe('reads that would hang or never end', () => {
  it('a FIFO as the manifest is refused at once (exit 2)', async () => {
    const refused = await opflow(['ingest', 'pipe.jsonl', '--workflow', 'patent-count']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('pipe.jsonl: not a regular file');
    expect(refused.ms).toBeLessThan(20_000);
  });

  it("a manifest line's file that is a FIFO, a device, outside the folder or a link out of it is refused on its line; the rest goes on", async () => {
    const preview = await opflow([
      '--json',
      'ingest',
      'm/lines.jsonl',
      '--workflow',
      'patent-count',
      '--dry-run',
    ]);
    expect(preview.code).toBe(1);
    const answer = JSON.parse(preview.stdout) as {
      items: number;
      problems: { id: string; reason: string }[];
    };
    expect(answer.items).toBe(1);
    const reasons = Object.fromEntries(answer.problems.map((problem) => [problem.id, problem.reason]));
    expect(reasons.fifo).toContain('file: pipe.txt: not a regular file');
    expect(reasons.climb).toContain("file: ../outside.txt: is outside the manifest's folder");
    expect(reasons.link).toContain("file: link.txt: is outside the manifest's folder");
    expect(reasons.device).toContain('must be a path relative to the manifest');
    expect(preview.output).not.toContain('secret text');
  });

  it('`yes | opflow call p002 --body -` stops at the limit and exits 2', async () => {
    const child = spawn(process.execPath, [opflowBin, 'call', 'p002', '--body', '-'], {
      env: env(),
      cwd: dir,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const line = Buffer.alloc(64 * 1024, 'y\n');
    let written = 0;
    const pump = () => {
      while (child.stdin.writable && written < 1024 * 1024 * 1024) {
        written += line.length;
        if (!child.stdin.write(line)) return void child.stdin.once('drain', pump);
      }
    };
    child.stdin.on('error', () => {});
    pump();
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(code).toBe(2);
    expect(stderr).toContain('--body -: standard input is too large (over 10 MB; at most 10 MB)');
    expect(written).toBeLessThan(200 * 1024 * 1024);
  });

  it('call --body and a multipart upload field naming a FIFO are refused at once', async () => {
    const body = await opflow(['call', 'p002', '--body', 'm/pipe.txt']);
    expect(body.code).toBe(2);
    expect(body.stderr).toContain('--body: cannot read m/pipe.txt: not a regular file');
    const upload = await opflow(['call', 'l017', '--body', '{"file": "m/pipe.txt"}']);
    expect(upload.code).toBe(2);
    expect(upload.stderr).toContain('--body: file: cannot read m/pipe.txt: not a regular file');
  });

  it('--db on /proc is refused', async () => {
    const refused = await opflow(['list', '--db', '/proc/self/status']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('--db: /proc/self/status is on /proc');
  });
});

describe('the MCP ingest tool (opflow mcp)', () => {
  it('refuses a path outside its roots and a FIFO, each with a sentence, and the server stays up', async () => {
    const client = new Client({ name: 'hostile', version: '1.0.0' });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [opflowBin, 'mcp'],
        cwd: join(dir, 'm'),
        env: { ...getDefaultEnvironment(), ...(env() as Record<string, string>) },
        stderr: 'pipe',
      }),
    );
    try {
      const text = async (args: Record<string, unknown>) => {
        const answer = (await client.callTool({ name: 'ingest', arguments: args })) as {
          isError?: boolean;
          content: { type: string; text?: string }[];
        };
        return { isError: answer.isError, text: answer.content.map((part) => part.text ?? '').join('') };
      };
      const outside = await text({ path: join(dir, 'good.jsonl'), workflow: 'patent-count' });
      expect(outside.isError).toBe(true);
      expect(outside.text).toContain('is outside the folders ingest may read');
      const fifos = await Promise.all(
        [1, 2, 3, 4].map(() => text({ path: join(dir, 'm', 'pipe.txt'), workflow: 'patent-count' })),
      );
      for (const fifo of fifos) expect(fifo.isError).toBe(true);
      const tenant = await text({ path: 'lines.jsonl', workflow: 'patent-count', tenant: 'a b' });
      expect(tenant.isError).toBe(true);
      expect(tenant.text).toContain('tenant');
      const ok = await text({ path: 'lines.jsonl', workflow: 'patent-count', batchName: 'mcp-lines' });
      expect(ok.isError, ok.text).toBeFalsy();
    } finally {
      await client.close();
    }
  });
});
