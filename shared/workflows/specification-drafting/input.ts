/**
 * The input of a specification drafting: the disclosure and the claims the specification is drafted
 * from, the invention's title, and optional drawings and category. Built on first use (`z.lazy`).
 * A Markdown document becomes an input by its `Claims` section (`## Claims`, `## 权利要求书`): the
 * claims are that section, the disclosure the rest.
 */
import * as z from 'zod';
import { readTextDocument } from '../common/text-input';

/** The platform's technology categories (ai37-4 names them in English; ai37-2 may answer Chinese ones). */
export const specificationCategories = [
  'Composition of matter',
  'Machine',
  'Process',
  'Manufacture',
] as const;

/** Drawings by URL: at most this many. */
export const maxDrawings = 20;

export const specificationInput = z.lazy(() =>
  z.strictObject({
    /** The technical disclosure: field, background, problem, solution, effects, embodiments. */
    disclosure: z
      .string({ error: 'disclosure: the technical disclosure is required (a string)' })
      .trim()
      .min(1, { error: 'disclosure: the technical disclosure is empty' }),
    /** The claims, numbered ("1. A device comprising ... 2. The device of claim 1, wherein ..."). */
    claims: z
      .string({
        error:
          'claims: the claims are required (a string of numbered claims; in a Markdown file, a "## Claims" section)',
      })
      .trim()
      .min(1, { error: 'claims: the claims are empty' })
      .refine((text) => /(^|\n)\s*1\s*[.、．)]/.test(text), {
        error: 'claims: number the claims, starting with "1." (e.g. "1. A device comprising ...")',
      }),
    /** The invention's title, which names the specification (in a Markdown file, its first heading). */
    title: z
      .string({ error: "title: the invention's title is required (it names the specification)" })
      .trim()
      .min(1, { error: "title: the invention's title is empty" })
      .max(200, { error: 'title: at most 200 characters' }),
    /** The technology category, instead of the one the platform recognises. */
    category: z
      .enum(specificationCategories, { error: `category: one of ${specificationCategories.join(', ')}` })
      .optional(),
    /** Drawings for the specification, as http(s) URLs of images the platform can fetch. */
    drawings: z
      .array(
        z.url({
          protocol: /^https?$/,
          error: 'drawings: each drawing is an http(s) URL of an image',
        }),
        { error: 'drawings: a list of image URLs' },
      )
      .max(maxDrawings, { error: `drawings: at most ${maxDrawings} drawings` })
      .optional(),
  }),
);
export type SpecificationInput = z.infer<typeof specificationInput>;

const CLAIMS_HEADING = /^ {0,3}#{1,6}[ \t]+(claims?|权利要求书?)[ \t#]*$/im;

/**
 * A Markdown document as an input: its `Claims` section is the claims, the rest the disclosure; the
 * title is the rest's first heading (never the Claims heading: a disclosure form read apart from its
 * front matter may start with it), else the file name.
 */
export function specificationFromText(text: string, fileName: string): Record<string, unknown> {
  const whole = readTextDocument(text, fileName).text;
  const heading = CLAIMS_HEADING.exec(whole);
  if (!heading) {
    const document = readTextDocument(whole, fileName);
    return { disclosure: document.body || document.text, title: document.title.slice(0, 200) };
  }
  const after = whole.slice(heading.index + heading[0].length);
  const next = /^ {0,3}#{1,2}[ \t]+\S/m.exec(after);
  const claims = (next ? after.slice(0, next.index) : after).trim();
  const rest = readTextDocument(
    `${whole.slice(0, heading.index)}${next ? after.slice(next.index) : ''}`,
    fileName,
  );
  return { disclosure: rest.body, claims, title: rest.title.slice(0, 200) };
}
