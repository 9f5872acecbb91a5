/**
 * A long text cut into pieces an operation takes: at paragraph breaks first, then at sentence ends,
 * and only a sentence longer than the limit at a space (or anywhere, for text without spaces).
 * Consecutive units share a piece while they fit. Each piece keeps the break that followed it, so
 * the translated pieces join back into the text's shape. The same text and limit always give the
 * same pieces: a job finds piece `i` again after a crash.
 */

export interface Piece {
  /** What is sent (trimmed, at most the limit). */
  text: string;
  /** The break that followed it in the source: a blank line, a space, or nothing at the end. */
  after: string;
}

/** A paragraph's sentences, each with its end punctuation. */
function sentences(paragraph: string): string[] {
  const found = paragraph.match(/[^.!?。！？；;]+(?:[.!?。！？；;]+["'”’)\]]*|$)/gu) ?? [paragraph];
  return found.map((sentence) => sentence.trim()).filter((sentence) => sentence !== '');
}

/** A sentence longer than `limit` cut at spaces (or hard, without one in the second half). */
function cut(sentence: string, limit: number): string[] {
  const parts: string[] = [];
  let rest = sentence;
  while (rest.length > limit) {
    const space = rest.lastIndexOf(' ', limit);
    const at = space > limit / 2 ? space : limit;
    parts.push(rest.slice(0, at).trim());
    rest = rest.slice(at).trim();
  }
  if (rest !== '') parts.push(rest);
  return parts;
}

/** The pieces of `text`, each at most `limit` characters. */
export function splitIntoPieces(text: string, limit: number): Piece[] {
  const paragraphs = text
    .replace(/\r\n?/g, '\n')
    .split(/\n[ \t]*\n\s*/)
    .map((paragraph) => paragraph.trim())
    .filter((paragraph) => paragraph !== '');
  const units: Piece[] = paragraphs.flatMap((paragraph) => {
    if (paragraph.length <= limit) return [{ text: paragraph, after: '\n\n' }];
    const parts = sentences(paragraph).flatMap((sentence) => cut(sentence, limit));
    return parts.map((part, index) => ({ text: part, after: index === parts.length - 1 ? '\n\n' : ' ' }));
  });
  const pieces: Piece[] = [];
  for (const unit of units) {
    const last = pieces[pieces.length - 1];
    if (last && last.text.length + last.after.length + unit.text.length <= limit) {
      last.text = `${last.text}${last.after}${unit.text}`;
      last.after = unit.after;
    } else pieces.push({ ...unit });
  }
  const final = pieces[pieces.length - 1];
  if (final) final.after = '';
  return pieces;
}

/** The translated pieces joined with the breaks that followed their sources. */
export function joinPieces(translated: readonly string[], pieces: readonly Piece[]): string {
  return translated
    .map((text, index) => `${text.trim()}${pieces[index]?.after ?? ''}`)
    .join('')
    .trim();
}
