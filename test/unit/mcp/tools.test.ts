// The MCP tool table: the server's tool list is built from it (in its order, the batch tools only
// where the server has what they need), its handlers answer through the job API on a real SQLite
// backend, and docs/guides/mcp.md and `opflow mcp --help` name exactly its tools.
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import * as z from 'zod';
import type { LocalBackend } from '../../../shared/backends/local';
import { mcpHelp } from '../../../shared/cli/command-table';
import { type BatchRunner, startBatchRunner } from '../../../shared/dashboard/batch-runner';
import type { EngineDeps } from '../../../shared/engine/deps';
import { createOpflowMcpServer, type OpflowMcpOptions } from '../../../shared/mcp/server';
import type { WorkflowNames } from '../../../shared/mcp/tool-spec';
import { mcpTools } from '../../../shared/mcp/tools';
import { workflows } from '../../../shared/workflows';
import { localEngine, type TestEngine } from '../../support/engines';

const root = resolve(__dirname, '../../..');
const T0 = Date.UTC(2026, 0, 5, 9, 0, 0);
const tableNames = mcpTools.map((tool) => tool.name);
const [first, ...rest] = [...workflows.keys()].sort();
const workflowNames: WorkflowNames = [first ?? 'none', ...rest];

let engine: TestEngine;
let dir: string;
let local: LocalBackend;
let deps: EngineDeps;
let runner: BatchRunner | undefined;

beforeEach(async () => {
  engine = await localEngine({ clock: { now: () => T0 } });
  ({ local, deps, dir } = engine);
});
afterEach(async () => {
  await runner?.stop();
  runner = undefined;
  await engine.close();
});

async function connect(options: Partial<OpflowMcpOptions> = {}): Promise<Client> {
  const server = createOpflowMcpServer({ deps, cwd: dir, ...options });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'test', version: '1' });
  await client.connect(clientSide);
  return client;
}

const textOf = (answer: CallToolResult) =>
  answer.content.map((part) => (part.type === 'text' ? part.text : '')).join('');

describe('the MCP tool table', () => {
  it('is the tool list, in order, with the batch tools only where the server has batches and a runner', async () => {
    const bare = await connect();
    expect((await bare.listTools()).tools.map((tool) => tool.name)).toEqual(
      tableNames.filter((name) => name !== 'get_batch' && name !== 'ingest'),
    );
    const readOnly = await connect({ batches: local.batches });
    expect((await readOnly.listTools()).tools.map((tool) => tool.name)).toEqual(
      tableNames.filter((name) => name !== 'ingest'),
    );
    runner = startBatchRunner({ deps, batches: local.batches, intervalMs: 60_000 });
    const full = await connect({ batches: local.batches, batchRunner: runner });
    const listed = (await full.listTools()).tools;
    expect(listed.map((tool) => tool.name)).toEqual(tableNames);
    for (const tool of mcpTools) {
      const shown = listed.find((candidate) => candidate.name === tool.name);
      expect(shown?.description).toBe(tool.description);
      expect(shown?.title).toBe(tool.title);
      expect(shown?.annotations).toEqual(tool.annotations);
      const schema = z.toJSONSchema(tool.inputSchema(workflowNames), { io: 'input' }) as {
        properties?: Record<string, unknown>;
      };
      expect(Object.keys(shown?.inputSchema.properties ?? {}), tool.name).toEqual(
        Object.keys(schema.properties ?? {}),
      );
    }
  });

  it('answers through the job API: a job submitted, read back, and a refusal with its status', async () => {
    const client = await connect();
    const submitted = (await client.callTool({
      name: 'submit_job',
      arguments: { workflow: 'novelty-check', input: { text: 'A hinge that folds flat.' } },
    })) as CallToolResult;
    expect(submitted.isError, textOf(submitted)).toBeFalsy();
    const { jobId } = submitted.structuredContent as { jobId: string };
    expect((await local.store.get(jobId))?.workflow).toBe('novelty-check');

    const got = (await client.callTool({ name: 'get_job', arguments: { jobId } })) as CallToolResult;
    expect((got.structuredContent as { job: { id: string }; next: string }).next).toContain('still working');

    const missing = (await client.callTool({
      name: 'get_job',
      arguments: { jobId: '01ZZZZZZZZZZZZZZZZZZZZZZZZ' },
    })) as CallToolResult;
    expect(missing.isError).toBe(true);
    expect(missing.structuredContent).toMatchObject({ error: { status: 404 } });

    const badWorkflow = (await client.callTool({
      name: 'submit_job',
      arguments: { workflow: 'no-such-workflow', input: {} },
    })) as CallToolResult;
    expect(badWorkflow.isError).toBe(true);
    expect(textOf(badWorkflow)).toContain('workflow');
  });

  it('lists the webhook sources through GET /webhook-sources: capped with why, a bound tenant its own only', async () => {
    const { parseOpflowConfig } = await import('../../../shared/config/opflow-config');
    const { webhooks } = parseOpflowConfig(
      {
        webhooks: {
          watch: { workflow: 'patent-count', input: { query: 'TTL:(hinge)' }, maxUnitsPerDay: 5 },
          lamp: { tenant: 'lamps', workflow: 'patent-count', input: { query: 'TTL:(lamp)' } },
        },
      },
      'opflow.config.json',
    );
    const { makeJob } = await import('../../support/factories');
    await local.store.create(
      makeJob({
        source: 'webhook',
        idempotencyKey: 'webhook:watch:msg_1',
        status: 'SUCCEEDED',
        usage: { ...makeJob().usage, billedUnits: 6 },
        createdAt: T0 - 60_000,
        updatedAt: T0 - 60_000,
      }),
    );
    const webhookSources = { webhooks, deliveries: await engine.backend.webhookDeliveries() };
    const call = async (tenant?: string) =>
      (await (
        await connect({ webhookSources, tenant })
      ).callTool({
        name: 'list_webhook_sources',
        arguments: {},
      })) as CallToolResult;
    const all = await call();
    expect(all.isError, textOf(all)).toBeFalsy();
    const { sources, next } = all.structuredContent as {
      sources: { name: string; state: string; reason?: string; resumesAt?: string }[];
      next: string;
    };
    expect(sources.map((source) => [source.name, source.state])).toEqual([
      ['lamp', 'open'],
      ['watch', 'capped'],
    ]);
    expect(sources[1]!.reason).toMatch(/billed 6 units, maxUnitsPerDay is 5/);
    expect(sources[1]!.resumesAt).toBe(new Date(T0 - 60_000 + 86_400_000).toISOString());
    expect(next).toMatch(/1 source\(s\) capped/);
    const bound = await call('lamps');
    expect((bound.structuredContent as { sources: { name: string }[] }).sources.map((s) => s.name)).toEqual([
      'lamp',
    ]);
    // A server given no sources says so.
    const none = (await (
      await connect()
    ).callTool({ name: 'list_webhook_sources', arguments: {} })) as CallToolResult;
    expect(none.structuredContent).toMatchObject({ sources: [] });
  });

  it('is the list of tools in docs/guides/mcp.md, in order', () => {
    const page = readFileSync(join(root, 'docs/guides/mcp.md'), 'utf8');
    const section = page.slice(page.indexOf('## Tools'), page.indexOf('\n## ', page.indexOf('## Tools') + 1));
    const documented = [...section.matchAll(/^\| `([a-z_]+)` \|/gm)].map((match) => match[1]);
    expect(documented).toEqual(tableNames);
  });

  it('names every argument of every tool in docs/guides/mcp.md', () => {
    const page = readFileSync(join(root, 'docs/guides/mcp.md'), 'utf8');
    const missing = mcpTools.flatMap((tool) =>
      Object.keys(tool.inputSchema(workflowNames).shape)
        .filter((name) => !page.includes(`\`${name}\``))
        .map((name) => `${tool.name}.${name}`),
    );
    expect(missing).toEqual([]);
  });

  it('is the list of tools in opflow mcp --help', () => {
    const listed = /Tools: ([^;]+);/.exec(mcpHelp.replace(/\s+/g, ' '))?.[1]?.split(', ');
    expect([...(listed ?? [])].sort()).toEqual([...tableNames].sort());
  });

  it('gives every tool a title, a description and hints', () => {
    for (const tool of mcpTools) {
      expect(tool.title, tool.name).not.toBe('');
      expect(tool.description.length, tool.name).toBeGreaterThan(20);
      expect(tool.annotations.readOnlyHint, tool.name).toBeTypeOf('boolean');
    }
  });
});
