/**
 * The translation workflow's input and the pieces it is sent in: read by the workflow (its steps)
 * and by its report alike.
 */
import * as z from 'zod';
import { hiroLanguages } from '../../openplatform/schemas/requests';
import { splitIntoPieces } from './pieces';

/** What each engine takes in one call. */
export const pieceLimits = { ai: 2000, hiro: 10_000 } as const;
/** ai61 translates into these only. */
const aiTargets = ['en', 'zh', 'ja'] as const;
/** At most this many characters (a hundred pieces of the AI engine). */
export const maxTranslationLength = 200_000;

const language = (field: string) =>
  z.enum(hiroLanguages, { error: `${field}: a language code, one of ${hiroLanguages.join(', ')}` });

export const translationInput = z.lazy(() =>
  z
    .strictObject({
      /** The document to translate. */
      text: z
        .string({ error: 'text: the text to translate is required (a string)' })
        .trim()
        .min(1, { error: 'text: the text to translate is empty' })
        .max(maxTranslationLength, {
          error: `text: at most ${maxTranslationLength.toLocaleString('en-US')} characters (split the document)`,
        }),
      /** The report's title; default: the document's. */
      title: z.string().trim().min(1, { error: 'title: must not be empty when given' }).max(200).optional(),
      /** The language to translate into; default `en`. */
      target: language('target').default('en'),
      /** The text's language; detected by the AI engine when absent, required by hiro. */
      source: language('source').optional(),
      /** `ai` (ai61; into en, zh or ja) or `hiro` (t010; any pair). Default: ai when the target allows. */
      engine: z.enum(['ai', 'hiro'], { error: 'engine: ai or hiro' }).optional(),
    })
    .superRefine((input, ctx) => {
      if (input.source && input.source === input.target)
        ctx.addIssue({ code: 'custom', path: ['target'], message: 'target: must differ from source' });
      const engine =
        input.engine ?? ((aiTargets as readonly string[]).includes(input.target) ? 'ai' : 'hiro');
      if (engine === 'ai' && !(aiTargets as readonly string[]).includes(input.target))
        ctx.addIssue({
          code: 'custom',
          path: ['target'],
          message: `target: the ai engine translates into ${aiTargets.join(', ')} only; use "engine": "hiro" for ${input.target}`,
        });
      if (engine === 'hiro' && !input.source)
        ctx.addIssue({
          code: 'custom',
          path: ['source'],
          message: 'source: the hiro engine needs the source language (e.g. "source": "zh")',
        });
    }),
);
export type TranslationInput = z.infer<typeof translationInput>;

/** The engine an input runs on. */
export function engineOf(input: Pick<TranslationInput, 'engine' | 'target'>): 'ai' | 'hiro' {
  return input.engine ?? ((aiTargets as readonly string[]).includes(input.target) ? 'ai' : 'hiro');
}

/** The pieces of an input, as sent. */
export const piecesOf = (input: TranslationInput) =>
  splitIntoPieces(input.text, pieceLimits[engineOf(input)]);

/** Where piece `index`'s translation is kept: `piece-1`, `piece-2`... */
export const pieceOutput = (index: number) => `piece-${index + 1}`;
