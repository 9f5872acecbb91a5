// A key's parked rows read tenant by tenant (dynamodb-parked-rows.ts) over a fake Query of a sorted
// list of sort keys: at most `parkedQueriesPerClass` Queries a class a round, whatever the tenants
// or whether their rows are due, and a round's drawn start reaches every tenant over rounds.
import { describe, expect, it } from 'vitest';
import {
  listParkedRows,
  type ParkedRowsQuery,
  parkedQueriesPerClass,
} from '../../../../shared/backends/aws/dynamodb-parked-rows';
import { parkedSortKey } from '../../../../shared/backends/aws/table';

const now = 1_767_600_000_000;

/** A Query over sorted keys: BETWEEN (inclusive), Limit, ExclusiveStartKey; counts its calls. */
function fakeQuery(keys: string[]): { query: ParkedRowsQuery; calls: () => number } {
  const sorted = [...keys].sort();
  let calls = 0;
  const query: ParkedRowsQuery = async ([low, high], count, start) => {
    calls++;
    const after = start ? String(start.GSI2SK) : undefined;
    const inRange = sorted.filter((key) => key >= low && key <= high && (after === undefined || key > after));
    const items = inRange.slice(0, count).map((key) => ({ GSI2SK: key }));
    return { Items: items, LastEvaluatedKey: inRange.length > count ? items.at(-1) : undefined };
  };
  return { query, calls: () => calls };
}

const rows = (tenants: number, each: number, dueAt: number) =>
  Array.from({ length: tenants }, (_, t) =>
    Array.from({ length: each }, (_, i) =>
      parkedSortKey(1_000, dueAt + i, `job-${t}-${i}`, `t${String(t).padStart(4, '0')}`),
    ),
  ).flat();

describe('listParkedRows', () => {
  it('reads a class of 1,000 tenants with at most parkedQueriesPerClass Queries, due or not', async () => {
    for (const dueAt of [now, now + 3_600_000]) {
      const { query, calls } = fakeQuery(rows(1_000, 2, dueAt));
      const listed = await listParkedRows(query, ['C'], now + 30_000, 12, { perTenant: 4, startAt: 0.5 });
      expect(calls()).toBeLessThanOrEqual(parkedQueriesPerClass);
      if (dueAt === now) expect(listed.length).toBeGreaterThan(parkedQueriesPerClass);
      else expect(listed).toEqual([]);
    }
  });

  it('starts where startAt draws and wraps round, so every tenant of many is reached over rounds', async () => {
    const keys = rows(40, 1, now).concat(
      Array.from({ length: 40 }, (_, t) =>
        parkedSortKey(1_000, now, `z-${t}`, `z${String(t).padStart(2, '0')}`),
      ),
    );
    const reached = new Set<string>();
    for (let round = 0; round < 64; round++) {
      const { query } = fakeQuery(keys);
      for (const row of await listParkedRows(query, ['C'], now + 1, 12, {
        perTenant: 4,
        startAt: round / 64,
      }))
        reached.add(row.tenant ?? '?');
    }
    expect(reached.size).toBe(80);
    // Without startAt, the same reads always start at the first name: the last tenants are never read.
    const { query } = fakeQuery(keys);
    const first = await listParkedRows(query, ['C'], now + 1, 12, { perTenant: 4 });
    expect(first.map((row) => row.tenant)).not.toContain('z39');
  });
});
