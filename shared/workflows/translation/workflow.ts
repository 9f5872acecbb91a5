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
import {
  type Decision,
  defineWorkflow,
  type ReportInput,
  type StepContext,
  type StepHandle,
  stepsFor,
} from '../../engine/workflow';
import { shorten } from '../../reports/markdown';
import { nonNegativeInt } from '../common/step-data';
import { readTextDocument } from '../common/text-input';
import { engineOf, pieceOutput, piecesOf, type TranslationInput, translationInput } from './input';
import { translatedText, translationMarkdown, translationSummary } from './report';

/** ai61's names of them. */
const aiLanguageNames: Record<string, string> = { en: 'EN', zh: 'CN', ja: 'JP' };

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
