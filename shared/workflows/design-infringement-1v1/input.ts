/**
 * The input of a design infringement 1v1: one product image and the registered design it is
 * compared with. Built on first use (`z.lazy`).
 */
import * as z from 'zod';
import { productImage } from '../design-infringement-search/images';

export const design1v1Input = z.lazy(() =>
  z.strictObject({
    /** The product's image: `{url}` or `{data, name}` (PNG or JPEG, at most 4,096 KB). */
    image: productImage,
    /** The registered design's publication number, e.g. EU0065350760001S or USD1055174S1. */
    patent: z
      .string({
        error:
          'patent: the registered design to compare with is required (e.g. EU0065350760001S; with opflow run: --set patent=EU0065350760001S)',
      })
      .trim()
      .toUpperCase()
      .transform((value) => value.replace(/[\s,/-]+/g, ''))
      .pipe(
        // An office code, a series letter or two (USD...), then the number: at least four digits.
        z.string().regex(/^[A-Z]{2}[A-Z]{0,2}\d{4,}[A-Z0-9]{0,12}$/, {
          error: 'patent: a publication number such as EU0065350760001S or USD1055174S1',
        }),
      ),
    /** The report's language, `en` or `cn`; default `en`. */
    lang: z.enum(['en', 'cn'], { error: 'lang: en or cn' }).default('en'),
    /** The report's title; default: the image's name. */
    title: z.string().trim().min(1).max(200, { error: 'title: at most 200 characters' }).optional(),
  }),
);
export type Design1v1Input = z.infer<typeof design1v1Input>;
