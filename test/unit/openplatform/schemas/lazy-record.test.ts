/**
 * The operations' request and answer schemas are built on first use (lazy-record.ts): nothing is
 * built at import, the first read builds the record once, and it then reads as the plain object
 * would (indexing, `in`, Object.keys and entries, spreading).
 */

import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { operationIds } from '../../../../shared/openplatform/catalogue';
import { lazyRecord } from '../../../../shared/openplatform/schemas/lazy-record';
import { requestSchemas } from '../../../../shared/openplatform/schemas/requests';
import { responseDataSchemas } from '../../../../shared/openplatform/schemas/responses';

describe('lazyRecord', () => {
  it('builds nothing until read, then once', () => {
    let builds = 0;
    const record = lazyRecord(() => {
      builds++;
      return { a: z.string(), b: z.number() };
    });
    expect(builds).toBe(0);
    expect(record.a.parse('x')).toBe('x');
    expect(record.b.safeParse('x').success).toBe(false);
    expect('a' in record).toBe(true);
    expect('c' in record).toBe(false);
    expect((record as Record<string, unknown>)['c']).toBeUndefined();
    expect(Object.keys(record)).toEqual(['a', 'b']);
    expect(Object.keys({ ...record })).toEqual(['a', 'b']);
    expect(builds).toBe(1);
  });

  it('gives a failing build to the reader, and builds again at the next read', () => {
    let builds = 0;
    const record = lazyRecord<{ a: number }>(() => {
      builds++;
      if (builds === 1) throw new Error('first build failed');
      return { a: 1 };
    });
    expect(() => record.a).toThrow('first build failed');
    expect(record.a).toBe(1);
  });
});

describe('the operation schemas', () => {
  it('hold a request and an answer schema for every catalogue operation', () => {
    expect(Object.keys(requestSchemas).sort()).toEqual([...operationIds].sort());
    expect(Object.keys(responseDataSchemas).sort()).toEqual([...operationIds].sort());
    expect(requestSchemas.p001PatentQuerySearchCount.safeParse({ query_text: '' }).success).toBe(false);
    expect(responseDataSchemas.p001PatentQuerySearchCount.parse({ total_search_result_count: '12' })).toEqual(
      { total_search_result_count: 12 },
    );
  });
});
