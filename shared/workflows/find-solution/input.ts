/**
 * What the find-solution workflow (find-solution.ts) and its report (find-solution-report.ts) both
 * read: the job's input and the ids of the direction options. A file of its own so that the report
 * does not import the workflow, which imports the report.
 */
import * as z from 'zod';

/** The input of a find-solution job. */
export const findSolutionInput = z.lazy(() =>
  z.strictObject({
    /** The technical problem to solve, at most 500 characters (the platform's limit). */
    problem: z
      .string({ error: 'problem: the technical problem is required (a string)' })
      .trim()
      .min(1, { error: 'problem: the technical problem is empty' })
      .max(500, { error: 'problem: at most 500 characters (the platform refuses longer problems)' }),
    /** The report's title; default: the solution's title. */
    title: z.string().trim().min(1, { error: 'title: must not be empty when given' }).max(200).optional(),
    /** The language of the answers, `cn` or `en`; default `en`. */
    lang: z.enum(['cn', 'en'], { error: 'lang: must be "cn" or "en"' }).default('en'),
  }),
);
export type FindSolutionInput = z.infer<typeof findSolutionInput>;

/** Stable option ids `d1`, `d2`... for directions, in the upstream's order. */
export const directionOptionId = (index: number) => `d${index + 1}`;
