// A tenant with its own key (OPFLOW_API_KEY_<TENANT>) talks to the platform even while the built-in
// sandbox serves the tenants without one: its key never reaches the sandbox. Real local
// pipeline (SQLite, built-in sandbox); a second sandbox on a free port stands in for the platform.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { submitJob } from '../../../shared/engine/job-commands';
import { loadLocalConfig } from '../../../shared/runtime/local/config';
import { createLocalPipeline, type LocalPipeline } from '../../../shared/runtime/local/pipeline';
import { keyFingerprint, type Sandbox, startSandbox } from '../../../shared/sandbox';
import { workflows } from '../../../shared/workflows';

const acmeKey = 'sk-acme-real-key-0123456789';

describe('tenant keys and the built-in sandbox', () => {
  let dir: string;
  let platform: Sandbox;
  let pipeline: LocalPipeline | undefined;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'opflow-tenant-key-'));
    platform = await startSandbox({ port: 0, keys: [{ key: acmeKey }] });
  });
  afterEach(async () => {
    await pipeline?.close();
    await platform.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("sends acme's key only to the platform and the default tenant's jobs to the sandbox", async () => {
    const announced: string[] = [];
    pipeline = await createLocalPipeline({
      config: loadLocalConfig({ dbPath: join(dir, 'opflow.db'), outDir: join(dir, 'out') }, {}),
      workflows,
      env: { OPFLOW_API_KEY_ACME: acmeKey },
      announce: (line) => announced.push(line),
      platformBaseUrl: platform.url,
    });
    const input = { query: 'TTL:(solid-state battery)' };
    const acme = (await submitJob(pipeline.deps, { workflow: 'patent-count', input, tenant: 'acme' })).job;
    const own = (await submitJob(pipeline.deps, { workflow: 'patent-count', input })).job;
    pipeline.start();
    const done = await pipeline.waitForJobs([acme.id, own.id]);
    expect(done.map((job) => job.status)).toEqual(['SUCCEEDED', 'SUCCEEDED']);

    const builtIn = pipeline.sandbox!.server.ledger;
    expect(builtIn.entries({ keyFingerprint: keyFingerprint(acmeKey) })).toEqual([]);
    expect(builtIn.entries().length).toBeGreaterThan(0);
    expect(platform.ledger.entries({ keyFingerprint: keyFingerprint(acmeKey) }).length).toBeGreaterThan(0);
    expect(announced.join('\n')).toContain('OPFLOW_API_KEY_ACME');
    expect(announced.join('\n')).not.toContain(acmeKey);
  }, 60_000);
});
