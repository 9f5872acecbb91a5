/**
 * translation: a whole document (a disclosure, a specification) translated by the platform in
 * pieces: cut at paragraph and sentence ends within the operation's limit, translated one piece per
 * call, each piece's answer committed before the next call (a crash never pays for a piece twice),
 * and joined back in the document's shape. The translation is the job's answer (result.json) and its
 * report.
 *
 * Engine `ai` (ai61: pieces of 2,000 characters, into en, zh or ja) or `hiro` (t010: pieces of
 * 10,000 characters, between 18 languages, the source named). One call per piece, in order.
 */
import * as z from 'zod';
import {
  type Decision,
  defineWorkflow,
  type ReportInput,
  type StepContext,
  type StepHandle,
  stepsFor,
} from '../../engine/workflow';
import { hiroLanguages } from '../../openplatform/schemas/requests';
import { shorten } from '../../reports/markdown';
import { nonNegativeInt } from '../common/step-data';
import { readTextDocument } from '../common/text-input';
import { splitIntoPieces } from './pieces';
import { translatedText, translationMarkdown, translationSummary } from './report';

/** What each engine takes in one call. */
export const pieceLimits = { ai: 2000, hiro: 10_000 } as const;
/** ai61 translates into these only. */
const aiTargets = ['en', 'zh', 'ja'] as const;
/** ai61's names of them. */
const aiLanguageNames: Record<string, string> = { en: 'EN', zh: 'CN', ja: 'JP' };
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

const name = 'translation';
const step = stepsFor(name, translationInput);

/** The piece being translated. */
const pieceIndex = step.key('pieceIndex', nonNegativeInt);

type Ctx = StepContext<TranslationInput, typeof name>;
const current = (ctx: Ctx) => ctx.find(pieceIndex) ?? 0;

/** After piece `index`: the next piece by the same step, or the end. */
function after(
  ctx: Ctx,
  translated: string | null | undefined,
  next: StepHandle<typeof name>,
): Decision<typeof name> {
  const index = current(ctx);
  if (!translated || translated.trim() === '')
    return { type: 'fail', message: `piece ${index + 1} was answered without a translation` };
  if (index + 1 >= piecesOf(ctx.input).length) return { type: 'complete' };
  return { type: 'next', step: next, context: pieceIndex.set(index + 1) };
}

const ai = step.call({
  name: 'translate-ai',
  title: 'translate a piece (ai61)',
  operation: 'ai61AiTranslation',
  outputName: (ctx) => pieceOutput(current(ctx)),
  request: (ctx) => ({
    text: piecesOf(ctx.input)[current(ctx)]?.text ?? '',
    target_lang: (aiLanguageNames[ctx.input.target] ?? 'EN') as 'CN' | 'EN' | 'JP',
    ...(ctx.input.source
      ? { source_lang: aiLanguageNames[ctx.input.source] ?? ctx.input.source.toUpperCase() }
      : {}),
  }),
  decide: (data, ctx): Decision<typeof name> => after(ctx, data.translate_result, ai),
});

const hiro = step.call({
  name: 'translate-hiro',
  title: 'translate a piece (t010)',
  operation: 't010HiroTranslationTranslate',
  outputName: (ctx) => pieceOutput(current(ctx)),
  request: (ctx) => ({
    content: piecesOf(ctx.input)[current(ctx)]?.text ?? '',
    sourceLanguageCode: ctx.input.source ?? 'en',
    targetLanguageCode: ctx.input.target,
    mode: 'fast' as const,
  }),
  decide: (data, ctx): Decision<typeof name> => after(ctx, data.textTranslated, hiro),
});

export const translation = defineWorkflow<TranslationInput>({
  name,
  version: 1,
  description:
    'A whole document translated in pieces (ai61 or t010), each piece committed as it comes, joined back in the document’s shape.',
  input: translationInput,
  fromText: (text, fileName) => {
    const document = readTextDocument(text, fileName);
    return { text: document.text, title: shorten(document.title, 200) };
  },
  steps: [ai, hiro],
  start: (input) => (engineOf(input) === 'ai' ? ai : hiro),
  report: (r: ReportInput<TranslationInput>) => {
    const title = `Translation (${r.input.source ?? 'detected'} → ${r.input.target}): ${r.input.title ?? shorten(r.input.text, 80)}`;
    return { title, markdown: translationMarkdown(r, title) };
  },
  summary: translationSummary,
  answer: (r: ReportInput<TranslationInput>) => translatedText(r),
  example: {
    text: '本发明公开了一种用于无人机的快拆电池锁扣。\n\n弹簧加载的棘爪卡入电池壳体的凹槽中；释放杆可单手松开棘爪。',
    title: 'Quick-release drone battery latch',
    source: 'zh',
    target: 'en',
  },
});
