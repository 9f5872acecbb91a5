/**
 * `opflow call` and `opflow operations` through the real bin/opflow.js, the way a user runs them:
 * one operation of every group against a sandbox (OPFLOW_BASE_URL), the data on standard output,
 * errors with kind, code and correlation id, and the listing.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  allOperations,
  loadOperationDetails,
  loadOperationSchemas,
  loadShapeTables,
  type OperationRow,
} from '../../../shared/openplatform';
import { exampleRequest } from '../../../shared/openplatform/operation-example';
import { SANDBOX_API_KEY, type Sandbox, startSandbox } from '../../../shared/sandbox';
import { childEnv, killRunningOpflows, type OpflowResult, startOpflow } from './opflow-process';

let sandbox: Sandbox;
let dir: string;

beforeAll(async () => {
  sandbox = await startSandbox({ keys: [{ key: SANDBOX_API_KEY, qps: 10_000 }] });
  dir = mkdtempSync(join(tmpdir(), 'opflow-call-'));
  writeFileSync(join(dir, 'upload.pdf'), '%PDF-1.4 sandbox upload');
});
afterAll(async () => {
  killRunningOpflows();
  await sandbox?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const env = () =>
  childEnv({
    OPFLOW_BASE_URL: sandbox.url,
    OPFLOW_API_KEY: SANDBOX_API_KEY,
    OPFLOW_DB: join(dir, 'opflow.db'),
  });
const opflow = (args: string[], stdin?: string): Promise<OpflowResult> =>
  startOpflow(args, { env: env(), cwd: dir, ...(stdin === undefined ? {} : { stdin }) }).done;

/** The command line of an operation's example request; multipart file fields point at upload.pdf. */
async function argsFor(row: OperationRow, index: number): Promise<string[]> {
  const tables = await loadShapeTables();
  const example = exampleRequest(
    row,
    (await loadOperationDetails())[row.operationId],
    tables.definitions,
    tables.operationShapes[row.operationId]?.body,
  );
  const args = ['call', row.operationId, '--json'];
  for (const [name, value] of Object.entries(example.parameters))
    args.push('--query', `${name}=${String(value)}`);
  if (example.body !== undefined) {
    const body: Record<string, unknown> = { ...example.body };
    if (row.bodyEncoding === 'multipart') {
      for (const [name, value] of Object.entries(body)) {
        if (typeof value === 'string' && value.endsWith('.pdf')) body[name] = 'upload.pdf';
        if (Array.isArray(value))
          body[name] = value.map((item) => (String(item).endsWith('.pdf') ? 'upload.pdf' : item));
      }
    }
    const file = `body-${index}.json`;
    writeFileSync(join(dir, file), JSON.stringify(body));
    args.push('--body', file);
  }
  return args;
}

// One operation of every group, preferring one outside the workflows (those have their own e2e tests).
const groups = new Map<string, OperationRow>();
for (const row of allOperations()) {
  const chosen = groups.get(row.group);
  if (!chosen || (chosen.workflow && !row.workflow)) groups.set(row.group, row);
}
const perGroup = [...groups.values()];

describe('opflow call through the real bin', () => {
  it('calls one operation of every group and prints data valid against its schema', async () => {
    expect(perGroup.length).toBe(47);
    const failures: string[] = [];
    let next = 0;
    // A few at a time: the machine is shared.
    const worker = async () => {
      while (next < perGroup.length) {
        const index = next++;
        const row = perGroup[index] as OperationRow;
        if (row.workflow) continue;
        const result = await opflow(await argsFor(row, index));
        if (result.code !== 0) {
          failures.push(`${row.operationId}: exit ${result.code}: ${result.stderr.trim().slice(0, 400)}`);
          continue;
        }
        const printed = JSON.parse(result.stdout) as { operationId: string; data: unknown };
        const { data } = await loadOperationSchemas(row);
        const checked =
          row.stream && row.operationId === 't001TaskAicc'
            ? (printed.data as unknown[]).every((event) => data.safeParse(event).success)
            : data.safeParse(printed.data).success;
        if (printed.operationId !== row.operationId || !checked)
          failures.push(`${row.operationId}: bad output`);
      }
    };
    await Promise.all([worker(), worker(), worker()]);
    expect(failures).toEqual([]);
    const called = new Set(sandbox.ledger.entries({ outcome: 'ok' }).map((entry) => entry.operationId));
    for (const row of perGroup)
      if (!row.workflow) expect(called.has(row.operationId), row.operationId).toBe(true);
  }, 300_000);

  it('calls a workflow operation by short id with the body on standard input, printing the data', async () => {
    const result = await opflow(
      ['call', 'p001', '--body', '-'],
      JSON.stringify({ query_text: 'TTL:(drone)' }),
    );
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ total_search_result_count: expect.any(Number) });
    expect(result.stderr).toMatch(
      /p001PatentQuerySearchCount answered in \d+ ms, 1 unit billed, correlation id [\w-]+/,
    );
  }, 60_000);

  it('prints an upstream error with its kind, code and correlation id', async () => {
    await fetch(`${sandbox.url}/__sandbox/faults`, {
      method: 'POST',
      body: JSON.stringify({ kind: 'busy', operation: 'p002PatentQuerySearch', times: 1 }),
    });
    const result = await opflow(['call', 'p002', '--body', '{"query_text": "x"}']);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /kind busy, code 68300008, HTTP 200, correlation id [\w-]+, worth retrying later/,
    );
    const json = await opflow(['call', 'p002', '--json', '--body', '{"query_txt": "x"}']);
    expect(json.code).toBe(2);
    expect(JSON.parse(json.stdout)).toMatchObject({
      error: { kind: 'invalid-request', operationId: 'p002PatentQuerySearch', exitCode: 2 },
    });
    expect(json.stderr).toContain('opflow operations p002PatentQuerySearch shows its parameters');
  }, 60_000);

  it('refuses an ambiguous short id and an unknown operation, naming candidates', async () => {
    const ambiguous = await opflow(['call', 'p060']);
    expect(ambiguous.code).toBe(2);
    expect(ambiguous.stderr).toMatch(/p060PatentImageSingle.*p060ImageSingleBeta/);
    const unknown = await opflow(['call', 'p0022']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/did you mean p002/);
  }, 60_000);
});

describe('opflow operations through the real bin', () => {
  it('lists a group with parameters, finds by words, and shows one operation in full', async () => {
    const group = await opflow(['operations', '--group', 'patent legal']);
    expect(group.code).toBe(0);
    expect(group.stdout).toMatch(/^Patent Legal Data:/);
    expect(group.stdout).toMatch(/p027AdvancedPatentDataReExaminationAndInvalidation\s+GET/);
    expect(group.stdout).toMatch(/query: patent_id, patent_number/);
    const words = await opflow(['operations', '--json', 'legal', 'status']);
    const ids = (JSON.parse(words.stdout) as OperationRow[]).map((row) => row.operationId);
    expect(ids).toContain('p013BasicPatentDataLegalStatus');
    const one = await opflow(['operations', 'p002']);
    expect(one.stdout).toContain('POST /search/patent/query-search-patent');
    expect(one.stdout).toMatch(/paged: offset/);
    expect(one.stdout).toMatch(/query_text\*\s+string/);
    expect(one.stdout).toContain(`opflow call p002 --body - <<< '{"query_text":"TACD: virtual reality"}'`);
    const none = await opflow(['operations', '--group', 'nonsense']);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/no group "nonsense"; groups: /);
  }, 60_000);
});
