/**
 * The sandbox answers every catalogue operation (beyond the 65 hand-built ones) through the real
 * client: the answer passes the client's response schema, is the same for the same request, pages
 * end, and the same key, group, QPS and validation rules apply as for the workflow operations.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  allOperations,
  createOpenPlatformClient,
  loadOperationDetails,
  loadShapeTables,
  lookupOperation,
  type OpenPlatformClient,
  type OperationRow,
} from '../../../shared/openplatform';
import { exampleRequest } from '../../../shared/openplatform/operation-example';
import { SANDBOX_API_KEY, type Sandbox, startSandbox } from '../../../shared/sandbox';

let sandbox: Sandbox;
let client: OpenPlatformClient;

beforeAll(async () => {
  sandbox = await startSandbox({
    keys: [
      { key: SANDBOX_API_KEY, qps: 10_000 },
      { key: 'legal-only', groups: ['Patent Legal Data'] },
    ],
  });
  client = createOpenPlatformClient({ baseUrl: sandbox.url, apiKey: SANDBOX_API_KEY });
});
afterAll(async () => {
  await client?.close();
  await sandbox?.close();
});

/** The example request, with multipart file fields as small files. */
async function sampleOf(row: OperationRow) {
  const tables = await loadShapeTables();
  const request = exampleRequest(
    row,
    (await loadOperationDetails())[row.operationId],
    tables.definitions,
    tables.operationShapes[row.operationId]?.body,
  );
  if (row.bodyEncoding === 'multipart' && request.body) {
    const toFile = (value: unknown) =>
      typeof value === 'string' && value.endsWith('.pdf')
        ? new File([new Uint8Array([37, 80, 68, 70])], value)
        : value;
    for (const [name, value] of Object.entries(request.body)) {
      request.body[name] = Array.isArray(value) ? value.map(toFile) : toFile(value);
    }
  }
  return request;
}

const generic = allOperations().filter((row) => !row.workflow);

describe('sandbox answers for every catalogue operation', () => {
  it('covers every operation that has no hand-built handler', () => {
    expect(generic).toHaveLength(356 - 65);
  });

  it.each(generic.map((row) => [row.operationId, row] as const))(
    '%s answers data valid against the client schema, the same each time',
    async (_id, row) => {
      const request = await sampleOf(row);
      const first = await client.request(row.operationId, request);
      expect(first.usage.ok).toBe(true);
      expect(first.data).toBeDefined();
      const again = await client.request(row.operationId, await sampleOf(row));
      expect(again.data).toEqual(first.data);
    },
  );
});

describe('sandbox rules for catalogue operations', () => {
  it('pages through a paginated operation to its end', async () => {
    const found = lookupOperation('p002');
    if (!found.ok) throw new Error(found.message);
    const seen: unknown[] = [];
    let total = 0;
    for (let offset = 0; offset < 200; offset += 10) {
      const { data } = (await client.request('p002', {
        body: { query_text: 'TAC:(solar)', offset, limit: 10 },
      })) as {
        data: { results: unknown[]; total_search_result_count: number };
      };
      total = data.total_search_result_count;
      seen.push(...data.results);
      if (data.results.length < 10) break;
    }
    expect(seen).toHaveLength(total);
  });

  it('answers a different request differently', async () => {
    const a = await client.request('c037', {
      body: { page_number: 1, sort_field: 'a', key_word: 'battery' },
    });
    const b = await client.request('c037', { body: { page_number: 1, sort_field: 'a', key_word: 'drone' } });
    expect(a.data).not.toEqual(b.data);
  });

  it('refuses a key outside the operation group', async () => {
    const legal = createOpenPlatformClient({ baseUrl: sandbox.url, apiKey: 'legal-only' });
    try {
      await expect(legal.request('p002', { body: { query_text: 'x' } })).rejects.toMatchObject({
        kind: 'forbidden',
      });
      const row = allOperations().find(
        (candidate) => candidate.group === 'Patent Legal Data' && !candidate.workflow,
      );
      if (!row) throw new Error('no legal operation');
      await expect(legal.request(row.operationId, await sampleOf(row))).resolves.toMatchObject({
        usage: { ok: true },
      });
    } finally {
      await legal.close();
    }
  });

  it('refuses an unknown key, and a body the operation does not take before sending it', async () => {
    const stranger = createOpenPlatformClient({ baseUrl: sandbox.url, apiKey: 'not-a-key' });
    try {
      await expect(stranger.request('p002', { body: { query_text: 'x' } })).rejects.toMatchObject({
        kind: 'auth',
      });
    } finally {
      await stranger.close();
    }
    const before = sandbox.ledger.entries().length;
    await expect(client.request('p002', { body: { query_txt: 'x' } })).rejects.toMatchObject({
      kind: 'invalid-request',
      message: expect.stringMatching(/query_txt|query_text/),
    });
    expect(sandbox.ledger.entries().length).toBe(before);
  });

  it('checks requests itself too (a client that skips validation gets invalid parameter)', async () => {
    const response = await fetch(`${sandbox.url}/search/patent/query-search-patent`, {
      method: 'POST',
      headers: { authorization: `Bearer ${SANDBOX_API_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ limit: 'ten' }),
    });
    const answer = (await response.json()) as { status: boolean; error_code: number; error_msg: string };
    expect(answer).toMatchObject({ status: false, error_code: 68300004 });
    expect(answer.error_msg).toMatch(/query_text/);
  });
});
