/**
 * The input of a design infringement search: one or more product images, the offices to search, and
 * what narrows the search (Locarno classes, the product's field, a filing date from which designs
 * count). Built on first use (`z.lazy`).
 */
import * as z from 'zod';
import { type ProductImage, productImage } from './images';

/** Images per search: each is searched on its own (one ai39 task each). */
export const maxSearchImages = 10;

/** The offices searched when none are named. */
export const defaultDesignOffices = ['US', 'CN', 'EU', 'JP', 'KR'] as const;

export const designSearchInput = z.lazy(() =>
  z.strictObject({
    /** The product's images: `{url}` or `{data, name}` each (PNG or JPEG, at most 4,096 KB). */
    images: z
      .array(productImage, {
        error: 'images: a list of product images, each {"url": ...} or {"data": <base64>, "name": ...}',
      })
      .min(1, { error: 'images: at least one product image' })
      .max(maxSearchImages, { error: `images: at most ${maxSearchImages} images per search` }),
    /** The offices (two-letter codes: US, CN, EU, JP, KR, AU...) where designs are searched. */
    countries: z
      .array(
        z
          .string()
          .trim()
          .toUpperCase()
          .regex(/^[A-Z]{2}$/, { error: 'countries: two-letter office codes such as US, CN, EU, JP, KR' }),
        { error: 'countries: a list of office codes such as ["US", "EU"]' },
      )
      .min(1, { error: 'countries: at least one office' })
      .max(20)
      .default([...defaultDesignOffices]),
    /** The report's language, `en` or `cn`; default `en`. */
    lang: z.enum(['en', 'cn'], { error: 'lang: en or cn' }).default('en'),
    /** Locarno classes narrowing the search, e.g. ["21-01"]. */
    locarno: z
      .array(
        z
          .string()
          .trim()
          .regex(/^\d{2}-\d{2}$/, { error: 'locarno: classes such as "14-03"' }),
      )
      .max(20, { error: 'locarno: at most 20 classes' })
      .optional(),
    /** The product's field, a keyword that helps the search (e.g. "swim ring"). */
    field: z.string().trim().min(1).max(200, { error: 'field: at most 200 characters' }).optional(),
    /** Only designs filed from this day (YYYY-MM-DD). */
    filedFrom: z.iso.date({ error: 'filedFrom: a date such as 2020-01-01' }).optional(),
    /** The report's title; default: the first image's name. */
    title: z.string().trim().min(1).max(200, { error: 'title: at most 200 characters' }).optional(),
  }),
);
export type DesignSearchInput = z.infer<typeof designSearchInput>;

/** The kept answers of image `index`: `image-1-upload`, `image-1-search`... */
export const imageOutput = (index: number, what: 'upload' | 'submit' | 'result') =>
  `image-${index + 1}-${what}`;

/** The report's subject: the input's title, else the first image's name. */
export function designSearchTitle(
  input: Pick<DesignSearchInput, 'title' | 'images'>,
  label: (image: ProductImage, index: number) => string,
): string {
  const first = input.images[0];
  if (input.title) return input.title;
  if (!first) return 'product';
  // Every image searched is named (a title of the first alone reads as a search of one image).
  const more = input.images.length - 1;
  if (more === 0) return label(first, 0);
  if (more === 1) return `${label(first, 0)} and ${label(input.images[1]!, 1)}`;
  return `${label(first, 0)} and ${more} more images`;
}
