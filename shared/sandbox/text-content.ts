/**
 * Deterministic text derived from the caller's input: its sentences, its keywords, and prose built
 * from them with a seeded generator. No language model: the point is that tests can predict it.
 */
import type { SeededRandom } from './seeded';
import { withoutMarkers } from './triggers';

const STOP_WORDS = new Set(
  'a about an and are as at be been by can could does for from has have how improve in into is it its may more most not of on or over should such than that the their them then there these this those through to under using very was were what when where which while with within without would'.split(
    ' ',
  ),
);

/**
 * The input's sentences: split on end punctuation followed by a space (so "0.5" stays whole) and on
 * line breaks; a single long sentence is split on commas.
 */
export function sentencesOf(input: string): string[] {
  const text = withoutMarkers(input);
  let sentences = text
    .split(/(?<=[.!?;])\s+|(?<=[。！？；])\s*|\n+/)
    .map((s) => s.trim())
    .filter((s) => s.replace(/[\p{P}\s]/gu, '').length > 0);
  if (sentences.length === 1) {
    const parts = (sentences[0] ?? '')
      .split(/[,，、]\s*/)
      .map((s) => s.trim())
      .filter((s) => s.length > 0);
    if (parts.length > 1) sentences = parts;
  }
  return sentences.length > 0 ? sentences : [text || 'the proposed technical solution'];
}

/** Distinct keywords in order of appearance: words of four letters or more, or CJK pairs. */
export function keywordsOf(input: string, limit = 8): string[] {
  const text = withoutMarkers(input);
  const seen = new Set<string>();
  const out: string[] = [];
  for (const token of text.match(/\p{Script=Han}+|[\p{L}\p{N}][\p{L}\p{N}-]*/gu) ?? []) {
    const candidates = /\p{Script=Han}/u.test(token)
      ? Array.from({ length: Math.max(1, Math.floor(token.length / 2)) }, (_, i) =>
          token.slice(i * 2, i * 2 + 2),
        )
      : [token.toLowerCase()];
    for (const word of candidates) {
      const isHan = /\p{Script=Han}/u.test(word);
      if ((!isHan && (word.length < 4 || STOP_WORDS.has(word))) || seen.has(word)) continue;
      seen.add(word);
      out.push(word);
      if (out.length >= limit) return out;
    }
  }
  return out.length > 0 ? out : ['technology'];
}

/** A short title: the first sentence, cut at about `max` characters on a word boundary. */
export function titleOf(input: string, max = 80): string {
  const first = (sentencesOf(input)[0] ?? '').replace(/[.。;；!！?？]+$/u, '');
  if (first.length <= max) return first;
  const cut = first.slice(0, max);
  const space = cut.lastIndexOf(' ');
  return `${(space > max / 2 ? cut.slice(0, space) : cut).trim()}…`;
}

export const capitalise = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

const OPENINGS = [
  'Based on the available literature',
  'According to recent patent filings',
  'From a technical perspective',
  'In current industrial practice',
];
const CLAIMS = [
  'the key lever is {k1}, usually combined with {k2}',
  'most approaches balance {k1} against {k2}',
  'improvements in {k1} tend to come from better control of {k2}',
  'practitioners report that {k1} limits how far {k2} can be pushed',
  'recent work couples {k1} with {k2} to reach the target performance',
];
const CLOSINGS = [
  'Further validation on pilot scale is recommended.',
  'Cost and manufacturability remain the main open questions.',
  'Several patent families cover this area, so freedom to operate should be checked.',
  'The evidence is strongest for laboratory-scale results.',
];

/** An answer of a few sentences about the question, seeded by it. */
export function answerText(question: string, random: SeededRandom, sentences = 4): string {
  const keywords = keywordsOf(question, 6);
  const k = (i: number) => keywords[i % keywords.length] ?? 'the technology';
  const parts = [
    `Regarding "${titleOf(question, 60)}": ${random.pick(OPENINGS).toLowerCase()}, ${fill(random.pick(CLAIMS), k(0), k(1))}.`,
  ];
  for (let i = 1; i < sentences - 1; i++)
    parts.push(`${capitalise(fill(random.pick(CLAIMS), k(i + 1), k(i + 2)))}.`);
  parts.push(random.pick(CLOSINGS));
  return parts.join(' ');
}

function fill(template: string, k1: string, k2: string): string {
  return template.replace('{k1}', k1).replace('{k2}', k2);
}

/** Split a text into stream pieces of a few words each (whitespace kept, so pieces join back exactly). */
export function streamPieces(text: string, wordsPerPiece = 3): string[] {
  const tokens = text.match(/\S+\s*/g) ?? [text];
  const pieces: string[] = [];
  for (let i = 0; i < tokens.length; i += wordsPerPiece)
    pieces.push(tokens.slice(i, i + wordsPerPiece).join(''));
  return pieces;
}

/** A rough token count (four characters a token), for usage figures. */
export function tokenCount(text: string): number {
  return Math.max(1, Math.ceil(text.length / 4));
}
