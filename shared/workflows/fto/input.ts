/**
 * The input of an FTO (freedom-to-operate) search: the product or process to clear, the markets it
 * is to be made or sold in, the legal statuses that count, and optional application-date bounds.
 * Built on first use (`z.lazy`), as every workflow's input schema is.
 */
import * as z from 'zod';
import { isPublicationNumber } from '../common/patent-status';

/** `2024-12-31` (or `20241231`) as the calendar date it names, else undefined. */
function calendarDay(text: string): string | undefined {
  const digits = text.replace(/-/g, '');
  const [year, month, day] = [digits.slice(0, 4), digits.slice(4, 6), digits.slice(6, 8)].map(Number) as [
    number,
    number,
    number,
  ];
  const date = new Date(Date.UTC(year, month - 1, day));
  const real =
    date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
  return real ? `${digits.slice(0, 4)}-${digits.slice(4, 6)}-${digits.slice(6, 8)}` : undefined;
}

const dateText = (field: string) =>
  z
    .string({ error: `${field}: a date is written YYYY-MM-DD` })
    .trim()
    .regex(/^\d{4}-?\d{2}-?\d{2}$/, { error: `${field}: a date is written YYYY-MM-DD or YYYYMMDD` })
    .refine((text) => calendarDay(text) !== undefined, {
      error: `${field}: not a date on the calendar (month 01–12, a day that month has)`,
    })
    .transform((text) => calendarDay(text) as string);

/** A list given as a JSON array or as one string, split on commas, semicolons or line breaks. */
const listOf = <T extends z.ZodType>(item: T) =>
  z.preprocess(
    (value) =>
      typeof value === 'string'
        ? value
            .split(/[,;\n]/)
            .map((part) => part.trim())
            .filter((part) => part !== '')
        : value,
    z.array(item),
  );

/** How many patents `comparePatents` may name: the platform's report (ai66-6) takes 5 at most. */
export const comparePatentLimit = 5;

/** What each legal status of the input asks the platform for (ai66-1's `legal_status` codes). */
export const legalStatusCodes = { inactive: 0, active: 1, pending: 2 } as const;
export type LegalStatusName = keyof typeof legalStatusCodes;

export const ftoInput = z.lazy(() =>
  z
    .strictObject({
      /** The product or process to clear: what will be made, used or sold (a disclosure, a spec). */
      text: z
        .string({ error: 'text: the product or process to clear is required (a string)' })
        .trim()
        .min(1, { error: 'text: the description of the product or process is empty' }),
      /** The report's title; default: the description's first line. */
      title: z.string().trim().min(1, { error: 'title: must not be empty when given' }).max(200).optional(),
      /** The language of the analysis, `cn` or `en`; default `en`. */
      lang: z.enum(['cn', 'en'], { error: 'lang: must be "cn" or "en"' }).default('en'),
      /**
       * The markets: patent offices whose patents count (`US`, `EP`, `CN`, `DE`...), as a list or one
       * string ("US, EP; CN"). Default: every office the platform searches.
       */
      markets: listOf(
        z
          .string()
          .trim()
          .toUpperCase()
          .regex(/^[A-Z]{2}$/, {
            error: 'markets: each market is a patent office code of two letters (US, EP, CN)',
          })
          .refine((code) => code !== 'WO', {
            error:
              'markets: WO is not a market (a PCT application grants no rights anywhere); name the offices, e.g. EP, US',
          }),
      )
        .refine((codes) => codes.length > 0, { error: 'markets: name at least one office, or leave it out' })
        .refine((codes) => codes.length <= 30, { error: 'markets: at most 30 offices' })
        .transform((codes) => [...new Set(codes)])
        .optional(),
      /**
       * The legal statuses whose patents count: `active` (in force), `pending` (may still be
       * granted), `inactive` (lapsed, expired, withdrawn). Default: active and pending.
       */
      legalStatus: listOf(
        z.enum(['active', 'pending', 'inactive'], {
          error: 'legalStatus: each is "active", "pending" or "inactive"',
        }),
      )
        .refine((names) => names.length > 0, { error: 'legalStatus: name at least one status' })
        .transform((names) => [...new Set(names)])
        .default(['active', 'pending']),
      /** Only patents applied for on or after this date (YYYY-MM-DD). */
      apdStart: dateText('apdStart').optional(),
      /** Only patents applied for on or before this date (YYYY-MM-DD). */
      apdEnd: dateText('apdEnd').optional(),
      /** Companies whose patents the search puts first (e.g. known competitors). */
      includeCompanies: listOf(z.string().trim().min(1).max(200)).optional(),
      /** Companies whose patents the search leaves out (e.g. your own, or licensors). */
      excludeCompanies: listOf(z.string().trim().min(1).max(200)).optional(),
      /**
       * Fetch the patents' legal status (p041) and families (p014) for the report: two more calls of
       * one unit each. Their failure does not fail the job (the report says what is missing).
       */
      legalData: z.boolean({ error: 'legalData: must be true or false' }).default(true),
      /**
       * Patents to compare with the product besides those the search finds, by publication number
       * (`CN118289111A`, `US11234567B2`), as a list or one string: each is compared claim by claim
       * (ai66-8, one paid call each) and goes into the platform's report and the claim charts.
       */
      comparePatents: listOf(
        z.string().trim().toUpperCase().refine(isPublicationNumber, {
          error:
            'comparePatents: each is a publication number, office code then number and kind (CN118289111A, US11234567B2, EP1234567B1)',
        }),
      )
        .refine((numbers) => numbers.length > 0, {
          error: 'comparePatents: name at least one patent, or leave it out',
        })
        .transform((numbers) => [...new Set(numbers)])
        .refine((numbers) => numbers.length <= comparePatentLimit, {
          error: `comparePatents: at most ${comparePatentLimit} patents (the platform's report takes 5 at most)`,
        })
        .optional(),
    })
    .refine((input) => !input.apdStart || !input.apdEnd || input.apdStart <= input.apdEnd, {
      error: 'apdEnd: must not be before apdStart',
      path: ['apdEnd'],
    }),
);
export type FtoInput = z.infer<typeof ftoInput>;

/** `2024-12-31` → `20241231`, as ai66-1 takes dates. */
export const compactDay = (day: string) => day.replace(/-/g, '');
