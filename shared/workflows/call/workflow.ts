/**
 * call: one job, one of the platform's operations (any of the catalogue's 356, GET or POST), with
 * the engine's rate limit, retries, cost accounting and records. A paginated operation is followed
 * through its pages, up to `maxPages` (default 10) calls; each page is kept, result.json's `answer`
 * joins them, and the report shows a list as a table. The input is a plain zod schema, so a line of
 * a manifest, a schedule or a POST /jobs body is one call:
 *
 *   {"operation": "p002", "body": {"query_text": "TACD:(solid-state battery)", "limit": 50}, "maxPages": 4}
 */
import * as z from 'zod';
import {
  type Decision,
  defineWorkflow,
  type ReportInput,
  type StepContext,
  stepsFor,
} from '../../engine/workflow';
import { operationSchemas } from '../../openplatform/operation-schemas';
import type { OperationRow, Paging } from '../../openplatform/operation-types';
import { findCatalogueOperation, lookupOperation } from '../../openplatform/operations';
import { blocks, cellText, count, heading, inline, shorten, table } from '../../reports/markdown';
import { nonNegativeInt, positiveInt } from '../common/step-data';

/** Pages followed when the input does not say. */
export const DEFAULT_MAX_PAGES = 10;
/** The most pages one job may follow (each page is one billed call). */
export const MAX_PAGES = 500;
/** Rows of the report's table (result.json keeps every item). */
const TABLE_ROWS = 200;
/** Columns of the report's table. */
const TABLE_COLUMNS = 8;

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The input of a call job. */
export const callInput = z.lazy(() =>
  z
    .strictObject({
      /** The operationId (`p002PatentQuerySearch`) or documented short id (`p002`). */
      operation: z
        .string({ error: 'operation: the operationId or short id to call is required (a string)' })
        .trim()
        .min(1, { error: 'operation: must not be empty' }),
      /** Query, path and header parameters by name (see `opflow operations <id>`). */
      parameters: z
        .record(z.string(), z.unknown(), { error: 'parameters: an object of name → value' })
        .optional(),
      /** The JSON request body. */
      body: z.record(z.string(), z.unknown(), { error: 'body: a JSON object' }).optional(),
      /** For a paginated operation: the most pages to fetch (default 10, at most 500). */
      maxPages: z
        .number({ error: 'maxPages: a whole number of pages' })
        .int({ error: 'maxPages: a whole number of pages' })
        .min(1, { error: 'maxPages: at least 1' })
        .max(MAX_PAGES, { error: `maxPages: at most ${MAX_PAGES}` })
        .optional(),
      /** The report's title; default: the operation's summary. */
      title: z.string().trim().min(1, { error: 'title: must not be empty when given' }).max(200).optional(),
    })
    .superRefine((input, ctx) => {
      const found = lookupOperation(input.operation);
      if (!found.ok) {
        ctx.addIssue({ code: 'custom', path: ['operation'], message: found.message });
        return;
      }
      const row = found.operation;
      if (row.bodyEncoding === 'multipart') {
        ctx.addIssue({
          code: 'custom',
          path: ['operation'],
          message: `${row.operationId} uploads files (multipart), which a job cannot carry: use opflow call`,
        });
        return;
      }
      if (input.maxPages !== undefined && !row.paging) {
        ctx.addIssue({
          code: 'custom',
          path: ['maxPages'],
          message: `${row.operationId} does not page its results`,
        });
      }
      // The request is checked now, so a bad manifest line is refused before any job is billed.
      const schemas = operationSchemas(row);
      /** The operation schema's issues, placed under the input's field. */
      const check = (field: 'parameters' | 'body', schema: z.ZodType, value: unknown) => {
        const parsed = schema.safeParse(value ?? {});
        for (const issue of parsed.error?.issues ?? []) {
          ctx.addIssue({ code: 'custom', path: [field, ...issue.path.map(String)], message: issue.message });
        }
      };
      check('parameters', schemas.parameters, input.parameters);
      if (schemas.body === undefined) {
        if (input.body !== undefined && Object.keys(input.body).length > 0) {
          ctx.addIssue({
            code: 'custom',
            path: ['body'],
            message: `${row.operationId} (${row.method}) takes no body; give its parameters instead`,
          });
        }
        return;
      }
      check('body', schemas.body, input.body);
    }),
);
export type CallInput = z.infer<typeof callInput>;

const rowOf = (input: CallInput): OperationRow => {
  const row = findCatalogueOperation(input.operation);
  if (!row) throw new Error(`unknown operation ${input.operation}`);
  return row;
};

/** Where the paging parameter starts (the caller's own value, else the first page). */
function startOf(paging: Paging, input: CallInput): number {
  const source = paging.in === 'query' ? input.parameters : input.body;
  const given = Number(source?.[paging.param]);
  if (Number.isInteger(given) && given >= 0) return given;
  return paging.style === 'offset' ? 0 : 1;
}

/** The page size the caller asked for, when the operation has a size parameter and it was given. */
function sizeOf(paging: Paging, input: CallInput): number | undefined {
  if (!paging.sizeParam) return undefined;
  const source = paging.in === 'query' ? input.parameters : input.body;
  const given = Number(source?.[paging.sizeParam]);
  return Number.isInteger(given) && given > 0 ? given : undefined;
}

const step = stepsFor('call', callInput);

/** The page being called (1-based) and how many items the pages before it held. */
const pageAt = step.key('page', positiveInt);
const collectedBefore = step.key('collected', nonNegativeInt);
/** Once done: the total the upstream announced, the pages called, and whether they were all. */
const totalItems = step.key(
  'total',
  z.lazy(() => z.number()),
);
const pagesCalled = step.key('pages', positiveInt);
const allPages = step.key(
  'complete',
  z.lazy(() => z.boolean()),
);

type Context = StepContext<CallInput, 'call'>;
const pageNumber = (ctx: Context) => ctx.find(pageAt) ?? 1;
const collectedSoFar = (ctx: Context) => ctx.find(collectedBefore) ?? 0;

/** The request of page `page` (1-based): the caller's request with the paging parameter moved on. */
export function pageRequest(input: CallInput, page: number, collected: number) {
  const row = rowOf(input);
  const parameters = { ...(input.parameters ?? {}) };
  const body = input.body === undefined ? undefined : { ...input.body };
  const paging = row.paging;
  if (paging && page > 1) {
    const start = startOf(paging, input);
    const value = paging.style === 'offset' ? start + collected : start + page - 1;
    if (paging.in === 'query') parameters[paging.param] = value;
    else if (body) body[paging.param] = value;
    else return { parameters, body: { [paging.param]: value } };
  }
  return { parameters, body };
}

/** The items of a page's answer and the total it announces. */
export function pageItems(paging: Paging, data: unknown): { items: unknown[]; total: number | undefined } {
  const record = isObject(data) ? data : {};
  const items = Array.isArray(record[paging.items]) ? (record[paging.items] as unknown[]) : [];
  const total = paging.total === undefined ? undefined : Number(record[paging.total]);
  return { items, total: total !== undefined && Number.isFinite(total) ? total : undefined };
}

const callPage = step.request({
  name: 'call',
  title: 'call',
  operationOf: ({ input }) => rowOf(input).operationId,
  outputName: (ctx) => (rowOf(ctx.input).paging ? `page-${pageNumber(ctx)}` : 'answer'),
  request: (ctx) => pageRequest(ctx.input, pageNumber(ctx), collectedSoFar(ctx)),
  decide: (data, ctx): Decision<'call'> => {
    const row = rowOf(ctx.input);
    const paging = row.paging;
    if (!paging) return { type: 'complete' };
    const page = pageNumber(ctx);
    const { items, total } = pageItems(paging, data);
    const collected = collectedSoFar(ctx) + items.length;
    const size = sizeOf(paging, ctx.input);
    const maxPages = ctx.input.maxPages ?? DEFAULT_MAX_PAGES;
    const context = {
      ...pageAt.set(page),
      ...collectedBefore.set(collected),
      ...(total === undefined ? {} : totalItems.set(total)),
    };
    // An offset counts from the first result: the caller's own start is part of the position.
    const position = paging.style === 'offset' ? startOf(paging, ctx.input) + collected : collected;
    const more =
      items.length > 0 &&
      (total === undefined || position < total) &&
      (size === undefined || items.length >= size);
    if (!more)
      return { type: 'complete', context: { ...context, ...pagesCalled.set(page), ...allPages.set(true) } };
    if (page >= maxPages) {
      return { type: 'complete', context: { ...context, ...pagesCalled.set(page), ...allPages.set(false) } };
    }
    return {
      type: 'next',
      step: callPage,
      context: { ...pageAt.set(page + 1), ...collectedBefore.set(collected) },
    };
  },
});

export const call = defineWorkflow<CallInput>({
  name: 'call',
  version: 1,
  description: "One call of any of the platform's operations (a paginated one followed through its pages).",
  input: callInput,
  steps: [callPage],
  report: (r) => ({ title: callTitle(r.input), markdown: callMarkdown(r) }),
  summary: callSummary,
  answer: (r) => callAnswer(r),
  example: {
    operation: 'p001',
    body: { query_text: 'TTL:(solid-state battery)', collapse_type: 'DOCDB' },
  },
  takesDocument: false,
});

const callTitle = (input: CallInput) => {
  const row = findCatalogueOperation(input.operation);
  return (
    input.title ?? `${row?.shortId ?? row?.operationId ?? input.operation}: ${row?.summary ?? ''}`.trim()
  );
};

/** The answer: the data of a single call, or for a paged one the first page with every page's items. */
export function callAnswer(r: Pick<ReportInput<CallInput>, 'input' | 'outputs'>): unknown {
  const row = findCatalogueOperation(r.input.operation);
  if (!row?.paging) return r.outputs['answer'];
  const pages = Object.keys(r.outputs)
    .filter((name) => /^page-\d+$/.test(name))
    .sort((a, b) => Number(a.slice(5)) - Number(b.slice(5)))
    .map((name) => r.outputs[name]);
  const first = pages[0];
  if (!isObject(first)) return first;
  const items = pages.flatMap((page) => pageItems(row.paging as Paging, page).items);
  return { ...first, [row.paging.items]: items };
}

/** The list an answer holds: the paged items, the answer itself, or its one array of objects. */
function listOf(
  row: OperationRow | undefined,
  answer: unknown,
): { name: string; items: unknown[] } | undefined {
  if (Array.isArray(answer)) return { name: 'answer', items: answer };
  if (!isObject(answer)) return undefined;
  if (row?.paging && Array.isArray(answer[row.paging.items])) {
    return { name: row.paging.items, items: answer[row.paging.items] as unknown[] };
  }
  const arrays = Object.entries(answer).filter(
    ([, value]) => Array.isArray(value) && value.length > 0 && value.every(isObject),
  );
  return arrays.length === 1
    ? { name: arrays[0]?.[0] as string, items: arrays[0]?.[1] as unknown[] }
    : undefined;
}

function cell(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'object') return shorten(JSON.stringify(value), 80);
  return shorten(String(value), 120);
}

function listTable(items: unknown[]): string {
  const objects = items.filter(isObject);
  if (objects.length === 0)
    return table(
      ['value'],
      items.slice(0, TABLE_ROWS).map((item) => [cell(item)]),
    );
  const columns: string[] = [];
  for (const item of objects) {
    for (const key of Object.keys(item)) if (!columns.includes(key)) columns.push(key);
  }
  // Scalar columns first: they read best in a table.
  const scalar = (key: string) => objects.some((item) => item[key] !== null && typeof item[key] !== 'object');
  const chosen = [...columns.filter(scalar), ...columns.filter((key) => !scalar(key))].slice(
    0,
    TABLE_COLUMNS,
  );
  return table(
    chosen,
    objects.slice(0, TABLE_ROWS).map((item) => chosen.map((key) => cell(item[key]))),
  );
}

function callMarkdown(r: ReportInput<CallInput>): string {
  const row = findCatalogueOperation(r.input.operation);
  const answer = callAnswer(r);
  const list = listOf(row, answer);
  const pages = pagesCalled.read(r.context);
  const total = totalItems.read(r.context);
  const paging =
    row?.paging && pages !== undefined
      ? `${count(list?.items.length)} items in ${pages} page${pages === 1 ? '' : 's'}${
          total === undefined ? '' : ` of ${count(total)}`
        }${allPages.read(r.context) === false ? ` (stopped at the limit of ${pages} pages; raise maxPages for more)` : ''}.`
      : undefined;
  const scalars = isObject(answer)
    ? Object.entries(answer).filter(
        ([key, value]) => key !== list?.name && (value === null || typeof value !== 'object'),
      )
    : [];
  return blocks(
    heading(1, callTitle(r.input)),
    inline(
      `${row?.method ?? ''} ${row?.path ?? ''} (${row?.operationId ?? r.input.operation}, ${row?.group.trim() ?? ''})`,
    ),
    paging && inline(paging),
    scalars.length > 0 &&
      table(
        ['field', 'value'],
        scalars.map(([key, value]) => [key, cell(value)]),
      ),
    list && heading(2, `${list.name} (${count(list.items.length)})`),
    list && listTable(list.items),
    list &&
      list.items.length > TABLE_ROWS &&
      inline(`The first ${TABLE_ROWS} rows; result.json holds all ${list.items.length}.`),
    !list &&
      !scalars.length &&
      ['```json', JSON.stringify(answer, null, 2).slice(0, 20_000), '```'].join('\n'),
    !list && scalars.length > 0 && cellText('Nested fields are in result.json (answer).'),
  );
}

/** "p002: 40 items in 4 pages" or "c001: answered". */
export function callSummary(r: ReportInput<CallInput>): string {
  const row = findCatalogueOperation(r.input.operation);
  const name = row?.shortId ?? row?.operationId ?? r.input.operation;
  const list = listOf(row, callAnswer(r));
  if (!list) return `${name}: answered`;
  const called = pagesCalled.read(r.context);
  const pages = called === undefined ? '' : ` in ${called} pages`;
  return `${name}: ${count(list.items.length)} ${list.name}${row?.paging ? pages : ''}`;
}
