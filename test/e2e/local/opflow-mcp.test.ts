// The MCP server through the real bin, driven by the SDK's own client over both transports:
// `opflow mcp` on stdio (it runs the local workers itself) and `opflow serve --mcp` over
// Streamable HTTP with a bearer token. Each lists the tools, submits a novelty check against the
// built-in sandbox with a manual selection, follows it to the selection, answers it and reads the
// report (tool and resource); refusals are MCP tool errors with the API's messages, and neither
// the sandbox's API key nor the serve token appears in anything the tools answer.
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, describe, expect, it } from 'vitest';
import { sandboxApiKey } from '../../../shared/runtime/local/sandbox-launch';
import { childEnv, killRunningOpflows, opflowBin, repoRoot } from './opflow-process';
import { startServe } from './serve-process';

const disclosure = `# Folding bicycle helmet
A bicycle helmet made of six rigid shell segments joined by textile hinges, so that it folds flat to the
size of a book. A magnetic buckle locks the segments in the open shape.`;

const serveToken = 'mcp-test-token-0123456789abcdef';
const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'opflow-e2e-mcp-'));
  dirs.push(dir);
  return dir;
}
afterAll(() => {
  killRunningOpflows();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

interface JobView {
  id: string;
  status: string;
  step: string;
  pending?: { prompt: string; options: { id: string; label: string }[]; min: number; max: number };
  selections: Record<string, string[]>;
}

/** Every text an answer carries, to look for secrets in. */
const texts: string[] = [];

async function call(client: Client, name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  const answer = (await client.callTool({ name, arguments: args })) as CallToolResult;
  for (const part of answer.content) if (part.type === 'text') texts.push(part.text);
  return answer;
}
async function callOk<T>(client: Client, name: string, args: Record<string, unknown>): Promise<T> {
  const answer = await call(client, name, args);
  const text = answer.content.map((part) => (part.type === 'text' ? part.text : '')).join('');
  expect(answer.isError, `${name}: ${text}`).toBeFalsy();
  return answer.structuredContent as T;
}
async function callRefused(client: Client, name: string, args: Record<string, unknown>): Promise<string> {
  const answer = await call(client, name, args);
  expect(answer.isError).toBe(true);
  return answer.content.map((part) => (part.type === 'text' ? part.text : '')).join('');
}

/** Follows a job with get_job (every 100 ms; the test's timeout bounds it) until one of `statuses`. */
async function follow(client: Client, jobId: string, statuses: string[]): Promise<JobView> {
  for (;;) {
    const { job } = await callOk<{ job: JobView }>(client, 'get_job', { jobId });
    if (statuses.includes(job.status)) return job;
    if (['FAILED', 'CANCELLED'].includes(job.status)) throw new Error(`job ${jobId} ${job.status}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** What an agent does: discover, submit, follow, answer, read. */
async function agentSession(client: Client): Promise<void> {
  const { tools } = await client.listTools();
  expect(tools.map((tool) => tool.name).sort()).toEqual(
    expect.arrayContaining([
      'answer_selection',
      'cancel_job',
      'retry_job',
      'get_job',
      'get_report',
      'list_jobs',
      'list_workflows',
      'submit_job',
    ]),
  );
  const submitTool = tools.find((tool) => tool.name === 'submit_job')!;
  const workflowProperty = (submitTool.inputSchema.properties as Record<string, { enum?: string[] }>)
    .workflow;
  expect(workflowProperty?.enum).toContain('novelty-check');
  expect(submitTool.inputSchema.required).toEqual(expect.arrayContaining(['workflow']));

  const { workflows } = await callOk<{
    workflows: { name: string; description: string; inputSchema: { properties?: Record<string, unknown> } }[];
  }>(client, 'list_workflows', {});
  const novelty = workflows.find((workflow) => workflow.name === 'novelty-check')!;
  expect(novelty.description.length).toBeGreaterThan(10);
  expect(novelty.description).not.toContain('\n');
  expect(novelty.inputSchema.properties).toHaveProperty('text');

  const submitted = await callOk<{ jobId: string; status: string; created: boolean }>(client, 'submit_job', {
    workflow: 'novelty-check',
    input: { text: disclosure },
    selection: { mode: 'manual' },
    idempotencyKey: 'helmet-1',
    label: 'helmet',
  });
  expect(submitted).toMatchObject({ status: 'QUEUED', created: true });
  const again = await callOk<{ jobId: string; created: boolean }>(client, 'submit_job', {
    workflow: 'novelty-check',
    input: { text: disclosure },
    selection: { mode: 'manual' },
    idempotencyKey: 'helmet-1',
  });
  expect(again).toMatchObject({ jobId: submitted.jobId, created: false });

  const parked = await follow(client, submitted.jobId, ['AWAITING_INPUT']);
  expect(parked.pending?.prompt).toMatch(/features/);
  const options = parked.pending!.options;
  expect(options.length).toBeGreaterThanOrEqual(2);

  // A wrong answer is a tool error that says what is wrong; the job still waits.
  const wrong = await callRefused(client, 'answer_selection', {
    jobId: submitted.jobId,
    selected: ['not-an-option'],
  });
  expect(wrong).toContain('not-an-option');
  const chosen = options.slice(0, 2).map((option) => option.id);
  const answered = await callOk<{ job: JobView }>(client, 'answer_selection', {
    jobId: submitted.jobId,
    selected: chosen,
  });
  expect(answered.job.status).not.toBe('AWAITING_INPUT');

  const done = await follow(client, submitted.jobId, ['SUCCEEDED']);
  expect(done.selections.features).toEqual(chosen);
  const summary = await callOk<{ report?: { title?: string } }>(client, 'get_job', {
    jobId: submitted.jobId,
  });
  expect(summary.report?.title).toBeTruthy();

  const report = await call(client, 'get_report', { jobId: submitted.jobId });
  expect(report.isError).toBeFalsy();
  const markdown = (report.content[0] as { text: string }).text;
  expect(markdown).toMatch(/^# /m);
  const resource = await client.readResource({ uri: `opflow://jobs/${submitted.jobId}/report` });
  expect((resource.contents[0] as { text: string }).text).toBe(markdown);
  const listed = await client.listResources();
  expect(listed.resources.map((entry) => entry.uri)).toContain(`opflow://jobs/${submitted.jobId}/report`);

  const { jobs } = await callOk<{ jobs: { id: string; status: string }[] }>(client, 'list_jobs', {
    status: 'SUCCEEDED',
  });
  expect(jobs.map((job) => job.id)).toContain(submitted.jobId);

  // Refusals: MCP tool errors with the job API's messages.
  expect(await callRefused(client, 'get_job', { jobId: '01J000000000000000000000ZZ' })).toBe(
    'no job 01J000000000000000000000ZZ',
  );
  expect(
    await callRefused(client, 'submit_job', { workflow: 'patent-count', input: { query: 42 } }),
  ).toContain('input.query');
  expect(await callRefused(client, 'submit_job', { workflow: 'no-such-flow', input: {} })).toContain(
    'workflow',
  );
  expect(await callRefused(client, 'cancel_job', { jobId: submitted.jobId })).toContain('already SUCCEEDED');
  expect(await callRefused(client, 'list_jobs', { status: 'DONE' })).toContain('status');

  // Cancel an unfinished one: parked at its selection, no paid call of it under way (a job
  // cancelled during one cannot be retried until the call's answer is in: shared/engine/retry.ts).
  const toCancel = await callOk<{ jobId: string }>(client, 'submit_job', {
    workflow: 'novelty-check',
    input: { text: disclosure },
    selection: { mode: 'manual' },
  });
  await follow(client, toCancel.jobId, ['AWAITING_INPUT']);
  const cancelled = await callOk<{ job: JobView }>(client, 'cancel_job', { jobId: toCancel.jobId });
  expect(cancelled.job.status).toBe('CANCELLED');
  expect(await callRefused(client, 'get_report', { jobId: toCancel.jobId })).toContain('CANCELLED');
  // ...and run it again: it goes back to work and stops at its selection again.
  const retried = await callOk<{ job: JobView & { runs?: unknown[] } }>(client, 'retry_job', {
    jobId: toCancel.jobId,
  });
  expect(retried.job.runs).toHaveLength(1);
  await follow(client, toCancel.jobId, ['AWAITING_INPUT']);
  expect(await callRefused(client, 'retry_job', { jobId: toCancel.jobId })).toContain('cannot be retried');

  for (const text of texts) {
    expect(text).not.toContain(sandboxApiKey);
    expect(text).not.toContain(serveToken);
  }
}

/** Bulk ingestion by an agent: a manifest on the opflow machine, followed with get_batch. */
async function agentBatch(client: Client, dir: string): Promise<void> {
  writeFileSync(
    join(dir, 'counts.jsonl'),
    [
      { id: 'a', query: 'TTL:(folding helmet)' },
      { id: 'b', query: 'TTL:(magnetic buckle)' },
      { id: 'c', query: 'TTL:(textile hinge)' },
      { query: 'no id on this line' },
    ]
      .map((line) => JSON.stringify(line))
      .join('\n'),
  );
  const started = await callOk<{ batchId: string; state: string }>(client, 'ingest', {
    path: 'counts.jsonl',
    workflow: 'patent-count',
  });
  expect(started.state).toBe('new');
  let batch: { status: string; items: number; totals: { succeeded: number } };
  let problems: { position: string; reason: string }[];
  for (;;) {
    ({ batch, problems } = await callOk<{ batch: typeof batch; problems: typeof problems }>(
      client,
      'get_batch',
      {
        batchId: started.batchId,
      },
    ));
    if (batch.status === 'FINISHED') break;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  expect(batch).toMatchObject({ items: 3, totals: { succeeded: 3 } });
  expect(problems).toEqual([
    expect.objectContaining({ position: 'line 4', reason: expect.stringContaining('id') }),
  ]);
  const { jobs } = await callOk<{ jobs: { source: string }[] }>(client, 'list_jobs', {
    batchId: started.batchId,
  });
  expect(jobs.map((job) => job.source)).toEqual(['bulk', 'bulk', 'bulk']);
  expect(await callRefused(client, 'ingest', { path: 'missing.jsonl', workflow: 'patent-count' })).toContain(
    'no such file',
  );
  expect(await callRefused(client, 'get_batch', { batchId: 'no-such-batch' })).toBe('no batch no-such-batch');
}

describe('opflow MCP server', () => {
  it('over stdio (opflow mcp) runs an agent session against the built-in sandbox', async () => {
    const dir = tempDir();
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [opflowBin, 'mcp'],
      cwd: dir,
      env: childEnv({
        OPFLOW_SANDBOX_SPEED: '300',
        OPFLOW_DB: join(dir, 'state', 'jobs.db'),
        OPFLOW_OUT: join(dir, 'reports'),
      }) as Record<string, string>,
      stderr: 'pipe',
    });
    let stderr = '';
    transport.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    });
    const client = new Client({ name: 'opflow-test', version: '1.0.0' });
    await client.connect(transport);
    try {
      expect(client.getServerVersion()?.name).toBe('opflow');
      await agentSession(client);
      await agentBatch(client, dir);
    } finally {
      await client.close();
    }
    expect(stderr).toContain('using the built-in sandbox');
    expect(stderr).not.toContain(sandboxApiKey);
  }, 120_000);

  it('over Streamable HTTP (opflow serve --mcp) needs the token and runs the same session', async () => {
    const dir = tempDir();
    const { url } = await startServe(['--mcp'], {
      cwd: dir,
      env: childEnv({
        OPFLOW_SANDBOX_SPEED: '300',
        OPFLOW_DB: join(dir, 'state', 'jobs.db'),
        OPFLOW_OUT: join(dir, 'reports'),
        OPFLOW_SERVE_TOKEN: serveToken,
      }),
    });
    const endpoint = new URL(`${url}/mcp`);

    const anonymous = new Client({ name: 'opflow-test', version: '1.0.0' });
    await expect(anonymous.connect(new StreamableHTTPClientTransport(endpoint))).rejects.toThrow(
      /401|Bearer/,
    );
    const wrongToken = new Client({ name: 'opflow-test', version: '1.0.0' });
    await expect(
      wrongToken.connect(
        new StreamableHTTPClientTransport(endpoint, {
          requestInit: { headers: { authorization: 'Bearer not-the-token-at-all' } },
        }),
      ),
    ).rejects.toThrow(/401|token/);

    const client = new Client({ name: 'opflow-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(endpoint, {
        requestInit: { headers: { authorization: `Bearer ${serveToken}` } },
      }),
    );
    try {
      await agentSession(client);
    } finally {
      await client.close();
    }
  }, 120_000);
});

interface ClientConfig {
  mcpServers: Record<string, { command: string; args: string[]; env: Record<string, string> }>;
}

describe("the MCP guide's client configuration", () => {
  it('starts opflow from any folder, on its own database and reports, and runs a job and a batch', async () => {
    const guide = readFileSync(join(repoRoot, 'docs/guides/mcp.md'), 'utf8');
    const section = guide.slice(guide.indexOf('Adding opflow to an MCP client'));
    const block = /```json\n([\s\S]*?)\n```/.exec(section)?.[1];
    expect(block, 'the JSON block after "Adding opflow to an MCP client"').toBeDefined();
    const data = tempDir();
    // Filled in as the guide says: the checkout, a data folder; no API key, for the sandbox.
    const filled = block!
      .replaceAll('/path/to/opflow/', `${repoRoot.replace(/\/$/, '')}/`)
      .replaceAll('/path/to/opflow-data/', `${data}/`);
    const config = JSON.parse(filled) as ClientConfig;
    const server = config.mcpServers.opflow!;
    expect(Object.keys(server).sort()).toEqual(['args', 'command', 'env']);
    const { OPFLOW_API_KEY: _key, ...env } = server.env;
    for (const value of [...server.args, ...Object.values(env)]) expect(value).not.toContain('/path/to/');

    // A client starts it with its own small environment, in a folder of its choosing: an empty one
    // here, which must stay empty (nothing is written relative to it).
    const clientFolder = tempDir();
    const transport = new StdioClientTransport({
      command: server.command,
      args: server.args,
      cwd: clientFolder,
      env: { ...getDefaultEnvironment(), ...env, OPFLOW_SANDBOX_SPEED: '300' },
      stderr: 'pipe',
    });
    let stderr = '';
    transport.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    });
    const client = new Client({ name: 'readme-client', version: '1.0.0' });
    await client.connect(transport);
    let jobId = '';
    try {
      const { workflows } = await callOk<{ workflows: { name: string }[] }>(client, 'list_workflows', {});
      expect(workflows.map((workflow) => workflow.name)).toContain('patent-count');
      ({ jobId } = await callOk<{ jobId: string }>(client, 'submit_job', {
        workflow: 'patent-count',
        input: { query: 'TTL:(folding helmet)' },
      }));
      await follow(client, jobId, ['SUCCEEDED']);
      const report = await call(client, 'get_report', { jobId });
      expect(report.isError).toBeFalsy();
      expect(report.content.map((part) => (part.type === 'text' ? part.text : '')).join('')).toMatch(/#/);

      // ingest, with the absolute path the guide asks for.
      const manifests = join(data, 'manifests');
      mkdirSync(manifests);
      writeFileSync(
        join(manifests, 'counts.jsonl'),
        ['a', 'b'].map((id) => JSON.stringify({ id, query: `TTL:(hinge ${id})` })).join('\n'),
      );
      const { batchId } = await callOk<{ batchId: string }>(client, 'ingest', {
        path: join(manifests, 'counts.jsonl'),
        workflow: 'patent-count',
      });
      for (;;) {
        const { batch } = await callOk<{ batch: { status: string; totals: { succeeded: number } } }>(
          client,
          'get_batch',
          { batchId },
        );
        if (batch.status === 'FINISHED') {
          expect(batch.totals.succeeded).toBe(2);
          break;
        }
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    } finally {
      await client.close();
    }
    expect(stderr).toContain('using the built-in sandbox');
    expect(existsSync(env.OPFLOW_DB!)).toBe(true);
    const written = readdirSync(env.OPFLOW_OUT!, { recursive: true }).map(String);
    expect(written.some((path) => path.includes(jobId) && path.endsWith('.md'))).toBe(true);
    expect(readdirSync(clientFolder)).toEqual([]);
  }, 120_000);
});
