// MCP's bulk_action on a real SQLite backend through the job API: a dry run, the confirmed call,
// a confirm that no longer fits refused with the new count, and a tenant-bound server's agent
// acting on its own tenant's jobs only.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cancelJob, submitJob } from '../../../shared/engine/job-commands';
import { createOpflowMcpServer, type OpflowMcpOptions } from '../../../shared/mcp/server';
import { localEngine, type TestEngine } from '../../support/engines';

let engine: TestEngine;
beforeEach(async () => {
  engine = await localEngine();
});
afterEach(async () => engine.close());

async function connect(options: Partial<OpflowMcpOptions> = {}): Promise<Client> {
  const server = createOpflowMcpServer({ deps: engine.deps, cwd: engine.dir, ...options });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'test', version: '1' });
  await client.connect(clientSide);
  return client;
}

async function cancelled(tenant = 'default'): Promise<string> {
  const { job } = await submitJob(engine.deps, {
    workflow: 'patent-count',
    input: { query: `TTL:(lamp ${Math.random()})` },
    tenant,
  });
  await cancelJob(engine.deps, job.id);
  return job.id;
}

const call = async (client: Client, args: Record<string, unknown>) =>
  (await client.callTool({ name: 'bulk_action', arguments: args })) as CallToolResult;

describe('bulk_action', () => {
  it('counts with a dry run, acts on the confirmed set, and refuses a confirm that no longer fits', async () => {
    const ids = [await cancelled(), await cancelled()];
    const client = await connect();
    const dry = await call(client, { action: 'retry', dryRun: true });
    expect(dry.isError, JSON.stringify(dry.content)).toBeFalsy();
    const preview = dry.structuredContent as { count: number; selection: string; next: string };
    expect(preview.count).toBe(2);
    expect(preview.next).toContain(`"selection": "${preview.selection}"`);

    const stale = await call(client, {
      action: 'retry',
      confirm: { count: 1, selection: preview.selection },
    });
    expect(stale.isError).toBe(true);
    expect(stale.structuredContent).toMatchObject({ error: { status: 409 } });

    const done = await call(client, {
      action: 'retry',
      confirm: { count: preview.count, selection: preview.selection },
    });
    expect(done.structuredContent).toMatchObject({ done: 2, skipped: 0, dryRun: false });
    for (const id of ids) expect((await engine.deps.store.get(id))!.status).toBe('QUEUED');

    const bad = await call(client, { action: 'retry' });
    expect(bad.isError).toBe(true);
  });

  it("a tenant-bound agent acts on its own tenant's jobs only", async () => {
    const own = await cancelled('lamps');
    const other = await cancelled('hinges');
    const client = await connect({ tenant: 'lamps' });
    const dry = (await call(client, { action: 'retry', dryRun: true })).structuredContent as {
      count: number;
      selection: string;
    };
    expect(dry.count).toBe(1);
    await call(client, { action: 'retry', confirm: { count: dry.count, selection: dry.selection } });
    expect((await engine.deps.store.get(own))!.status).toBe('QUEUED');
    expect((await engine.deps.store.get(other))!.status).toBe('CANCELLED');
  });
});
