/**
 * What the materials-find-solution workflow (materials-find-solution.ts) and its report
 * (materials-find-solution-report.ts) both read: the job's input, the citation paging and the names
 * of the per-node outputs. A file of its own so that the report does not import the workflow, which
 * imports the report.
 */
import * as z from 'zod';

/** Which mind-map nodes get reference information, citations and an implementation plan. */
export const nodePolicy = z.lazy(() =>
  z.union(
    [
      z.literal('none'),
      z.literal('all'),
      z
        .array(z.string().trim().min(1, { error: 'a node id must not be empty' }), {
          error: 'nodes: "none", "all", or a list of node ids',
        })
        .min(1, { error: 'nodes: list at least one node id, or say "none"' }),
    ],
    { error: 'nodes: "none", "all", or a list of node ids' },
  ),
);
export type NodePolicy = z.infer<typeof nodePolicy>;

/** The input of a materials find-solution job. */
export const materialsFindSolutionInput = z.lazy(() =>
  z.strictObject({
    /** The materials problem to solve. */
    problem: z
      .string({ error: 'problem: the materials problem is required (a string)' })
      .trim()
      .min(1, { error: 'problem: the materials problem is empty' }),
    /** The report's title; default: the mind map's title. */
    title: z.string().trim().min(1, { error: 'title: must not be empty when given' }).max(200).optional(),
    /** The language of the answers, `cn` or `en`; default `en`. */
    lang: z.enum(['cn', 'en'], { error: 'lang: must be "cn" or "en"' }).default('en'),
    /**
     * The nodes to detail: `none` (default: the mind map only), `all` (every solution node, i.e. every
     * leaf of the mind map), or a list of node ids from an earlier report.
     */
    nodes: nodePolicy.default('none'),
  }),
);
export type MaterialsFindSolutionInput = z.infer<typeof materialsFindSolutionInput>;

/** Citations asked per page. */
export const citationPageSize = 20;
/** A paging that never ends is an upstream fault: stop there and say so. */
export const maxCitationPages = 100;

/** Per-node output names: `node-2-reference`, `node-2-citations-p1`, `node-2-implementation`. */
export const nodeOutput = {
  reference: (index: number) => `node-${index + 1}-reference`,
  citations: (index: number, page: number) => `node-${index + 1}-citations-p${page}`,
  implementationStart: (index: number) => `node-${index + 1}-implementation-start`,
  implementation: (index: number) => `node-${index + 1}-implementation`,
};
