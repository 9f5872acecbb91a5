/**
 * The translation's report: the translation first (the whole document, joined back in its shape),
 * then the pieces it was sent in (characters each way), then the source text.
 */
import type { ReportInput } from '../../engine/workflow';
import { blocks, count, heading, inline, paragraphs, table } from '../../reports/markdown';
import { outputOf } from '../common/step-data';
import { engineOf, pieceOutput, piecesOf, type TranslationInput } from './input';
import { joinPieces } from './pieces';

/** Each piece's translation, in order; undefined for a piece not translated. */
function translatedPieces(
  r: Pick<ReportInput<TranslationInput>, 'input' | 'outputs'>,
): (string | undefined)[] {
  return piecesOf(r.input).map((_, index) => {
    const name = pieceOutput(index);
    return engineOf(r.input) === 'ai'
      ? (outputOf(r.outputs, name, 'ai61AiTranslation')?.translate_result ?? undefined)
      : (outputOf(r.outputs, name, 't010HiroTranslationTranslate')?.textTranslated ?? undefined);
  });
}

/** The whole translation, or undefined while a piece is missing. */
export function translatedText(
  r: Pick<ReportInput<TranslationInput>, 'input' | 'outputs'>,
): string | undefined {
  const pieces = translatedPieces(r);
  if (pieces.some((piece) => piece === undefined)) return undefined;
  return joinPieces(pieces as string[], piecesOf(r.input));
}

/** "Translated zh → en: 4,210 characters in 3 pieces (ai61)". */
export function translationSummary(r: ReportInput<TranslationInput>): string {
  const text = translatedText(r);
  const pieces = piecesOf(r.input).length;
  if (text === undefined) return 'translation incomplete';
  const engine = engineOf(r.input) === 'ai' ? 'ai61' : 't010';
  return `Translated ${r.input.source ?? 'detected'} → ${r.input.target}: ${count(text.length)} characters in ${pieces} ${pieces === 1 ? 'piece' : 'pieces'} (${engine})`;
}

export function translationMarkdown(r: ReportInput<TranslationInput>, title: string): string {
  const { input } = r;
  const pieces = piecesOf(input);
  const translated = translatedPieces(r);
  const whole = translatedText(r);
  const detected =
    engineOf(input) === 'ai'
      ? outputOf(r.outputs, pieceOutput(0), 'ai61AiTranslation')?.source_lang?.toLowerCase()
      : undefined;
  return blocks(
    heading(1, title),
    heading(2, 'Translation'),
    whole === undefined ? '_The translation is incomplete: a piece was not translated._' : paragraphs(whole),
    heading(2, 'Pieces'),
    inline(
      `${count(pieces.length)} ${pieces.length === 1 ? 'piece' : 'pieces'} of at most ${count(
        engineOf(input) === 'ai' ? 2000 : 10_000,
      )} characters (${engineOf(input) === 'ai' ? 'ai61' : 't010'}), cut at paragraph and sentence ends; source language ${input.source ?? (detected ? `${detected} (detected)` : 'detected')}.`,
    ),
    table(
      ['#', 'Characters sent', 'Characters back', 'Begins'],
      pieces.map((piece, index) => [
        index + 1,
        count(piece.text.length),
        translated[index] === undefined ? 'not translated' : count(translated[index]!.length),
        piece.text.slice(0, 60),
      ]),
    ),
    heading(2, 'Source text'),
    paragraphs(input.text),
  );
}
