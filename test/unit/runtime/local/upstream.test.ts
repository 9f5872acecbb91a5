// The local runtime's one resolver of the upstream: which base URL, which key per tenant, and the
// built-in sandbox. Real sandboxes on free ports (one built in, one standing in for the platform),
// real clients: the rule "a tenant with its own key talks to the platform; its key never goes to the
// sandbox" is checked on the sandboxes' ledgers.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadLocalConfig } from '../../../../shared/runtime/local/config';
import { sandboxApiKey } from '../../../../shared/runtime/local/sandbox-launch';
import { sandboxRecordPath } from '../../../../shared/runtime/local/sandbox-record';
import { chooseUpstream, resolveUpstream, type Upstream } from '../../../../shared/runtime/local/upstream';
import { realTime } from '../../../../shared/runtime/time';
import { keyFingerprint, type Sandbox, startSandbox } from '../../../../shared/sandbox';

const acmeKey = 'sk-acme-real-key-0123456789';
const count = { query_text: 'TTL:(hinge)' };

describe('chooseUpstream', () => {
  it.each([
    [{}, {}, 'built-in'],
    [{ apiKey: 'sk-x' }, {}, 'configured'],
    [{ baseUrl: 'https://api.example.com' }, {}, 'configured'],
    [{ baseUrl: 'http://127.0.0.1:8787' }, {}, 'loopback-sandbox'],
    [{ baseUrl: 'http://localhost:8787' }, {}, 'loopback-sandbox'],
    [{ baseUrl: 'http://[::1]:8787' }, {}, 'loopback-sandbox'],
    // A key given with a loopback URL is the caller's: no sandbox key is assumed.
    [{ baseUrl: 'http://127.0.0.1:8787', apiKey: 'sk-x' }, {}, 'configured'],
    [{}, { recordsOnly: true }, 'records-only'],
    [{ apiKey: 'sk-x' }, { recordsOnly: true }, 'records-only'],
  ] as const)('%j %j -> %s', (config, options, kind) => {
    expect(chooseUpstream(config, options)).toBe(kind);
  });
});

describe('resolveUpstream', () => {
  let dir: string;
  let platform: Sandbox;
  const opened: Upstream[] = [];
  const announced: string[] = [];

  const resolve = async (
    settings: { apiKey?: string; baseUrl?: string; dbPath?: string; recordsOnly?: boolean },
    env: Record<string, string> = {},
  ) => {
    const config = {
      ...loadLocalConfig({ dbPath: settings.dbPath ?? ':memory:', outDir: join(dir, 'out') }, env),
      apiKey: settings.apiKey,
      baseUrl: settings.baseUrl,
    };
    const upstream = await resolveUpstream({
      config,
      env,
      time: realTime(),
      announce: (line) => announced.push(line),
      platformBaseUrl: platform.url,
      recordsOnly: settings.recordsOnly,
      hasUnfinishedJobs: async () => false,
    });
    opened.push(upstream);
    return upstream;
  };

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'opflow-upstream-'));
    platform = await startSandbox({ port: 0, keys: [{ key: acmeKey }, { key: 'sk-configured-key-42' }] });
    announced.length = 0;
  });
  afterEach(async () => {
    for (const upstream of opened.splice(0)) await upstream.close();
    await platform.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('built-in: tenants without a key use the sandbox, a tenant with its own key the platform', async () => {
    const upstream = await resolve({}, { OPFLOW_API_KEY_ACME: acmeKey });
    expect(upstream.kind).toBe('built-in');
    expect(upstream.sandbox).toBeDefined();
    expect(upstream.baseUrl).toBe(upstream.sandbox!.url);
    expect(upstream.speed).toBe(30);
    expect(upstream.description).toBe('built-in sandbox');

    const ownKey = await upstream.keys.getKey('default');
    const acme = await upstream.keys.getKey('acme');
    expect(ownKey).toBe(sandboxApiKey);
    expect(acme).toBe(acmeKey);
    await upstream.client.call('p001PatentQuerySearchCount', count, { apiKey: ownKey });
    await upstream.client.call('p001PatentQuerySearchCount', count, { apiKey: acme });

    const builtIn = upstream.sandbox!.server.ledger;
    expect(builtIn.entries({ keyFingerprint: keyFingerprint(sandboxApiKey) })).toHaveLength(1);
    expect(builtIn.entries({ keyFingerprint: keyFingerprint(acmeKey) })).toEqual([]);
    expect(platform.ledger.entries({ keyFingerprint: keyFingerprint(acmeKey) })).toHaveLength(1);
    expect(platform.ledger.entries({ keyFingerprint: keyFingerprint(sandboxApiKey) })).toEqual([]);

    const lines = announced.join('\n');
    expect(lines).toContain('OPFLOW_API_KEY_ACME');
    expect(lines).not.toContain(acmeKey);
  });

  it("built-in: a key no variable names (a rotated one, a caller's) still never reaches the sandbox", async () => {
    const upstream = await resolve({});
    await upstream.client.call('p001PatentQuerySearchCount', count, { apiKey: acmeKey });
    expect(upstream.sandbox!.server.ledger.entries()).toEqual([]);
    expect(platform.ledger.entries({ keyFingerprint: keyFingerprint(acmeKey) })).toHaveLength(1);
  });

  it('built-in with a database file: the sandbox is recorded for other processes until closed', async () => {
    const dbPath = join(dir, 'opflow.db');
    const host = await resolve({ dbPath });
    expect(host.kind).toBe('built-in');
    expect(existsSync(sandboxRecordPath(dbPath))).toBe(true);
    await host.close();
    expect(existsSync(sandboxRecordPath(dbPath))).toBe(false);
  });

  it('configured: no sandbox, the configured URL and keys, credentials kept out of the description', async () => {
    const url = new URL(platform.url);
    url.username = 'user';
    url.password = 'secret-password';
    const upstream = await resolve(
      { apiKey: 'sk-configured-key-42', baseUrl: url.toString().replace(/\/$/, '') },
      { OPFLOW_API_KEY: 'sk-configured-key-42' },
    );
    expect(upstream.kind).toBe('configured');
    expect(upstream.sandbox).toBeUndefined();
    expect(upstream.speed).toBe(1);
    expect(upstream.description).not.toContain('secret-password');
    expect(await upstream.keys.getKey('default')).toBe('sk-configured-key-42');
    expect(announced).toEqual([]);
  });

  it('loopback sandbox: its well-known key for tenants without one', async () => {
    const sandbox = await startSandbox({ port: 0 });
    try {
      const upstream = await resolve({ baseUrl: sandbox.url });
      expect(upstream.kind).toBe('loopback-sandbox');
      const key = await upstream.keys.getKey('default');
      expect(key).toBe(sandboxApiKey);
      await upstream.client.call('p001PatentQuerySearchCount', count, { apiKey: key });
      expect(sandbox.ledger.entries()).toHaveLength(1);
      expect(upstream.sandbox).toBeUndefined();
    } finally {
      await sandbox.close();
    }
  });

  it('records only: no sandbox, and the client refuses every call', async () => {
    const upstream = await resolve({ recordsOnly: true });
    expect(upstream.kind).toBe('records-only');
    expect(upstream.sandbox).toBeUndefined();
    await expect(upstream.client.call('p001PatentQuerySearchCount', count)).rejects.toThrow(
      /job records only/,
    );
    expect(announced).toEqual([]);
  });
});
