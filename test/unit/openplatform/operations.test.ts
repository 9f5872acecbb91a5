/**
 * The full operation catalogue (generated, checked in): lookups, search, the description's defects
 * and that every operation's schemas build and behave (strict top level, lenient answers).
 */
import { describe, expect, it } from 'vitest';
import {
  allOperations,
  catalogue,
  fillPath,
  findGroup,
  generationNotes,
  loadOperationSchemas,
  loadShapeTables,
  lookupOperation,
  operationGroups,
  operationIds,
  operationSchemasFrom,
  searchOperations,
} from '../../../shared/openplatform';

describe('the full catalogue', () => {
  it('has 356 operations with unique ids and unique method + path', () => {
    expect(allOperations()).toHaveLength(356);
    expect(new Set(allOperations().map((row) => row.operationId)).size).toBe(356);
    expect(new Set(allOperations().map((row) => `${row.method} ${row.path}`)).size).toBe(356);
  });

  it('holds the 40 workflow operations with the same method, path, group and effect as catalogue.ts', () => {
    const workflowRows = allOperations().filter((row) => row.workflow);
    expect(workflowRows.map((row) => row.operationId).sort()).toEqual([...operationIds].sort());
    for (const row of workflowRows) {
      const entry = catalogue[row.operationId as keyof typeof catalogue];
      expect([row.method, row.path, row.group, row.effect, row.shortId]).toEqual([
        entry.method,
        entry.path,
        entry.group,
        entry.effect,
        entry.ref,
      ]);
    }
  });

  it('records how it handled the defects of the description', () => {
    expect(generationNotes().missingSchemasReplaced).toHaveLength(2);
    expect(generationNotes().knownDefectsNotSeen).toEqual([]);
    expect(generationNotes().eventStreamRequests).toContain('t001TaskAicc');
    const streaming = allOperations().filter((row) => row.requestContentType === 'text/event-stream');
    // Declared as an event-stream request, sent as JSON, answered as a stream.
    expect(streaming.every((row) => row.stream && row.bodyEncoding === 'json')).toBe(true);
    const jobStatus = allOperations().find((row) => row.operationId === 'jobIdStatus');
    expect(jobStatus?.parameters).toContainEqual({
      name: 'job_id',
      in: 'path',
      required: true,
      type: 'string',
    });
  });

  it('finds an operation by id or short id, in any case', () => {
    expect(lookupOperation('p002')).toMatchObject({
      ok: true,
      operation: { operationId: 'p002PatentQuerySearch' },
    });
    expect(lookupOperation('AI35-1')).toMatchObject({
      ok: true,
      operation: { operationId: 'ai35-1NoveltySearchSubmit' },
    });
    expect(lookupOperation('c037companysearch')).toMatchObject({ ok: true });
  });

  it('refuses a short id that several operations share, naming them', () => {
    const found = lookupOperation('p060');
    expect(found.ok).toBe(false);
    if (found.ok) return;
    expect(found.candidates.sort()).toEqual(['p060ImageSingleBeta', 'p060PatentImageSingle']);
    expect(found.message).toMatch(/give the operationId/);
  });

  it('suggests close names for an unknown one', () => {
    const found = lookupOperation('p0022');
    expect(found.ok).toBe(false);
    if (!found.ok) expect(found.message).toMatch(/did you mean .*p002/);
  });

  it('lists groups and searches by group and words', () => {
    const groups = operationGroups();
    expect(groups.reduce((sum, group) => sum + group.count, 0)).toBe(356);
    expect(findGroup('patent legal')).toBe('Patent Legal Data');
    expect(findGroup('drug visual analysis')).toBe('Drug Visual Analysis ');
    const legal = searchOperations({ group: 'Patent Legal Data' });
    expect(legal.length).toBeGreaterThan(5);
    expect(legal.every((row) => row.group === 'Patent Legal Data')).toBe(true);
    const found = searchOperations({ words: ['legal', 'status'] }).map((row) => row.operationId);
    expect(found).toContain('p013BasicPatentDataLegalStatus');
  });

  it('fills path templates and refuses a missing value', () => {
    const row = allOperations().find((candidate) => candidate.operationId === 'facetTypeDetail');
    if (!row) throw new Error('facetTypeDetail is missing');
    expect(fillPath(row, { job_id: 'a b', facet_type: 'x' })).toBe(
      '/landscape-api/jobs/a%20b/facets/x/detail',
    );
    expect(() => fillPath(row, { job_id: 'j' })).toThrow(/facet_type is missing/);
  });
});

describe('operation schemas', () => {
  it('build for every operation', async () => {
    const tables = await loadShapeTables();
    for (const row of allOperations()) {
      const schemas = operationSchemasFrom(tables, row);
      expect(schemas.data, row.operationId).toBeDefined();
      expect(schemas.body === undefined, row.operationId).toBe(row.bodyEncoding === 'none');
    }
  });

  it('refuse a misspelt top-level field and a missing required one, and accept a valid body', async () => {
    const row = lookupOperation('p002');
    if (!row.ok) throw new Error(row.message);
    const { body } = await loadOperationSchemas(row.operation);
    expect(body?.safeParse({ query_text: 'TTL:(battery)', limit: 10 }).success).toBe(true);
    expect(body?.safeParse({ query_txt: 'TTL:(battery)' }).success).toBe(false);
    expect(body?.safeParse({ limit: 10 }).success).toBe(false);
    expect(body?.safeParse({ query_text: 'x', limit: 'ten' }).success).toBe(false);
  });

  it('read answers leniently: numbers as strings, nulls, unknown fields', async () => {
    const row = lookupOperation('p002');
    if (!row.ok) throw new Error(row.message);
    const { data } = await loadOperationSchemas(row.operation);
    const parsed = data.parse({
      total_search_result_count: '12',
      results: [{ pn: null, extra: 1 }],
      new_field: true,
    });
    expect(parsed).toMatchObject({ total_search_result_count: 12, new_field: true });
    expect(data.safeParse({ total_search_result_count: 'many' }).success).toBe(false);
  });

  it('read parameters from text by their declared type', async () => {
    const row = lookupOperation('jobIdPatents');
    if (!row.ok) throw new Error(row.message);
    const { parameters } = await loadOperationSchemas(row.operation);
    const declared = row.operation.parameters.map((parameter) => parameter.name);
    expect(declared).toContain('job_id');
    expect(parameters.safeParse({ job_id: 'j1', unknown_parameter: 'x' }).success).toBe(false);
  });

  it('keep the hand-written schemas of the workflow operations', async () => {
    const row = lookupOperation('ai33-1');
    if (!row.ok) throw new Error(row.message);
    const { body } = await loadOperationSchemas(row.operation);
    // The hand-written schema knows the 500-character limit and the lang enumeration.
    expect(body?.safeParse({ lang: 'en', solution_issues: 'x'.repeat(501) }).success).toBe(false);
    expect(body?.safeParse({ lang: 'de', solution_issues: 'x' }).success).toBe(false);
    expect(body?.safeParse({ lang: 'en', solution_issues: 'x' }).success).toBe(true);
  });
});
