/**
 * patent-count (Patent Data Search, p001): how many patents match a query, optionally collapsed by
 * application number or family. One synchronous call.
 */
import * as z from 'zod';
import { defineWorkflow, stepsFor } from '../../engine/workflow';
import { shorten } from '../../reports/markdown';
import { readTextDocument } from '../common/text-input';
import { countDigest } from './digest';
import { countFindings } from './findings';
import { countMarkdown, countSummary, countTitle } from './report';

export const collapseTypes = ['ALL', 'APNO', 'DOCDB', 'INPADOC', 'EXTEND'] as const;
export const collapseBys = ['APD', 'PBD', 'AUTHORITY', 'SCORE'] as const;
export const collapseOrders = ['OLDEST', 'LATEST'] as const;

const upper = (value: unknown) => (typeof value === 'string' ? value.trim().toUpperCase() : value);

/** The input of a patent count. */
export const patentCountInput = z.lazy(() =>
  z
    .strictObject({
      /** The search expression in the platform's query syntax, at most 1,500 characters. */
      query: z
        .string({ error: 'query: the search expression is required (a string)' })
        .trim()
        .min(1, { error: 'query: the search expression is empty' })
        .max(1500, { error: 'query: at most 1,500 characters (the platform refuses longer queries)' }),
      /** The report's title; default: the query. */
      title: z.string().trim().min(1, { error: 'title: must not be empty when given' }).max(200).optional(),
      /**
       * Collapse results: `ALL` (none), `APNO` (by application number), `DOCDB` (simple family),
       * `INPADOC` (INPADOC family), `EXTEND` (extended family); default: no collapse.
       */
      collapseType: z
        .preprocess(
          upper,
          z.enum(collapseTypes, { error: `collapseType: one of ${collapseTypes.join(', ')}` }),
        )
        .optional(),
      /** Which patent a collapsed group keeps: by `APD`, `PBD`, `AUTHORITY` or `SCORE`. */
      collapseBy: z
        .preprocess(upper, z.enum(collapseBys, { error: `collapseBy: one of ${collapseBys.join(', ')}` }))
        .optional(),
      /** With collapseType APNO and collapseBy APD or PBD: keep the `OLDEST` or the `LATEST`. */
      collapseOrder: z
        .preprocess(
          upper,
          z.enum(collapseOrders, { error: `collapseOrder: one of ${collapseOrders.join(', ')}` }),
        )
        .optional(),
    })
    .superRefine((input, ctx) => {
      if (
        input.collapseOrder !== undefined &&
        (input.collapseType !== 'APNO' || (input.collapseBy !== 'APD' && input.collapseBy !== 'PBD'))
      ) {
        ctx.addIssue({
          code: 'custom',
          path: ['collapseOrder'],
          message: 'collapseOrder: only with collapseType APNO and collapseBy APD or PBD',
        });
      }
    }),
);
export type PatentCountInput = z.infer<typeof patentCountInput>;

const step = stepsFor('patent-count', patentCountInput);

export const patentCount = defineWorkflow<PatentCountInput>({
  name: 'patent-count',
  version: 1,
  description: 'How many patents match a query, optionally collapsed by application or family.',
  input: patentCountInput,
  fromText: (text, fileName) => {
    const document = readTextDocument(text, fileName);
    // A query spread over lines is one expression: line breaks are spaces in the query syntax.
    const query = (document.body || document.text).replace(/\s*\n\s*/g, ' ').trim();
    return { query, title: shorten(document.title, 200) };
  },
  steps: [
    step.call({
      name: 'count',
      title: 'count',
      operation: 'p001PatentQuerySearchCount',
      request: ({ input }) => ({
        query_text: input.query,
        ...(input.collapseType ? { collapse_type: input.collapseType } : {}),
        ...(input.collapseBy ? { collapse_by: input.collapseBy } : {}),
        ...(input.collapseOrder ? { collapse_order: input.collapseOrder } : {}),
      }),
      decide: (data) =>
        typeof data.total_search_result_count === 'number'
          ? { type: 'complete' }
          : { type: 'fail', message: 'p001 answered without total_search_result_count' },
    }),
  ],
  report: (r) => ({ title: `Patent count: ${countTitle(r.input)}`, markdown: countMarkdown(r) }),
  summary: countSummary,
  example: { text: 'TTL:(solid-state battery) AND TACD:(separator)', collapseType: 'DOCDB' },
  commonNames: { text: 'query' },
  digest: countDigest,
  findings: countFindings,
});
