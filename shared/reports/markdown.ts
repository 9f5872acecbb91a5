/**
 * Small Markdown builders for the workflow reports. Upstream text is never trusted: everything that
 * came from the platform goes through `inline`, `paragraphs` or `table`, which escape the characters
 * that would open Markdown structure (emphasis, links, tables, headings, lists, HTML), so a report's
 * own headings and tables stay intact whatever the upstream answers.
 */

/** Characters that open inline structure anywhere in a line (`_` only at a word's edge, below). */
const INLINE_SPECIAL = /[\\`*[\]<>|~]/g;

/** One line of upstream text with its inline structure escaped; `atLineStart` also guards block starts. */
function escapeLine(value: unknown, atLineStart: boolean): string {
  const text = plainText(value)
    .replace(/\s*[\r\n]+\s*/g, ' ')
    .replace(INLINE_SPECIAL, (char) => `\\${char}`)
    // snake_case needs no escaping: GFM never opens emphasis inside a word with `_`.
    .replace(/(^|[^\p{L}\p{N}])_|_(?=[^\p{L}\p{N}]|$)/gu, (match) => match.replace('_', '\\_'));
  return atLineStart ? escapeLineStart(text) : text.trim();
}

/**
 * Escape a piece of upstream text for use as (or at the start of) a line: a paragraph line, a list
 * item. Line breaks become spaces, Markdown punctuation is backslash-escaped, and a start that would
 * open a heading, list, quote or rule is escaped too.
 */
export function inline(value: unknown): string {
  return escapeLine(value, true);
}

/** Like `inline`, for text that cannot start a block anyway: a table cell, a heading's text. */
export function cellText(value: unknown): string {
  return escapeLine(value, false);
}

/** A line that starts like a heading, list item, or rule/setext underline would become one. */
function escapeLineStart(line: string): string {
  const trimmed = line.replace(/^\s+/, '');
  if (/^(#{1,6}(\s|$)|[-+](\s|$)|[-=]+\s*$)/.test(trimmed)) return `\\${trimmed}`;
  const ordered = /^(\d{1,9})([.)])(\s|$)/.exec(trimmed);
  if (ordered) return `${ordered[1]}\\${trimmed.slice(ordered[1]!.length)}`;
  return trimmed;
}

/** A line that ends a sentence (or a title-like clause): the line break after it starts a paragraph. */
const ENDS_SENTENCE = /[.!?。！？:;：；]["'”’)\]]*$/u;
/** A line that starts a list item or heading of its own: kept on its own line. */
const STARTS_BLOCK = /^\s*(#{1,6}\s|[-+*•]\s|\d{1,9}[.)]\s)/;

/**
 * Escape multi-line upstream text as paragraphs, every line escaped as with `inline`. Blank lines
 * separate paragraphs; a single line break after a sentence's end starts a paragraph too, one in
 * mid-sentence (hard-wrapped text) becomes a space, and a line that starts a list item or heading
 * stays on a line of its own. Empty text gives `fallback`.
 */
export function paragraphs(value: unknown, fallback = '_(none)_'): string {
  const text = plainText(value).replace(/\r\n?/g, '\n').trim();
  if (text === '') return fallback;
  const out: string[] = [];
  for (const block of text.split(/\n\s*\n/)) {
    let current = '';
    let afterBlockStart = false;
    for (const raw of block.split('\n')) {
      const line = raw.trim();
      if (line === '') continue;
      const startsBlock = STARTS_BLOCK.test(line);
      if (current === '') current = inline(line);
      else if (startsBlock || afterBlockStart) current += `  \n${inline(line)}`;
      else if (ENDS_SENTENCE.test(current)) {
        out.push(current);
        current = inline(line);
      } else current += ` ${inline(line)}`;
      afterBlockStart = startsBlock;
    }
    if (current !== '') out.push(current);
  }
  return out.length === 0 ? fallback : out.join('\n\n');
}

/** A heading of `level` 1–6 with escaped text. */
export function heading(level: number, text: unknown): string {
  return `${'#'.repeat(Math.min(6, Math.max(1, level)))} ${cellText(text)}`;
}

/** Markdown this module built (a link, say), which a table cell takes as it is instead of escaping it. */
export class Rendered {
  constructor(readonly markdown: string) {}
}

/**
 * A GFM table; every cell is escaped, except `Rendered` ones. An empty `rows` gives `empty` instead
 * of a table.
 */
export function table(headers: string[], rows: unknown[][], empty = '_(none)_'): string {
  if (rows.length === 0) return empty;
  const cell = (value: unknown) => {
    const text = value instanceof Rendered ? value.markdown.replace(/\s*[\r\n]+\s*/g, ' ') : cellText(value);
    return text === '' ? ' ' : text;
  };
  const lines = [
    `| ${headers.map(cell).join(' | ')} |`,
    `| ${headers.map(() => '---').join(' | ')} |`,
    ...rows.map((row) => `| ${headers.map((_, index) => cell(row[index])).join(' | ')} |`),
  ];
  return lines.join('\n');
}

/** A bullet list of escaped items; an empty list gives `empty`. */
export function bullets(items: unknown[], empty = '_(none)_'): string {
  const lines = items.map((item) => inline(item)).filter((line) => line !== '');
  return lines.length === 0 ? empty : lines.map((line) => `- ${line}`).join('\n');
}

/**
 * A link to a file of the report folder (an attachment). The target is a relative path whose
 * segments are percent-encoded, so no upstream file name can break out of the link.
 */
export function fileLink(label: unknown, relativePath: string): string {
  const target = relativePath
    .split('/')
    .filter((segment) => segment !== '' && segment !== '.' && segment !== '..')
    .map((segment) => encodeURIComponent(segment))
    .join('/');
  return `[${cellText(label)}](${target})`;
}

/** Join report blocks with blank lines, dropping empty ones. */
export function blocks(...parts: (string | undefined | false)[]): string {
  return `${parts.filter((part): part is string => typeof part === 'string' && part.trim() !== '').join('\n\n')}\n`;
}

/** A short form of `text` for labels: at most `max` characters, cut at a word when possible. */
export function shorten(value: unknown, max = 120): string {
  const text = plainText(value).replace(/\s+/g, ' ').trim();
  if (text.length <= max) return text;
  const cut = text.slice(0, max - 1);
  const space = text.charAt(max - 1) === ' ' ? cut.length : cut.lastIndexOf(' ');
  return `${(space > max / 2 ? cut.slice(0, space) : cut).trimEnd()}…`;
}

/** A number with thousands separators, or an em dash when absent. */
export function count(value: number | null | undefined): string {
  return typeof value === 'number' && Number.isFinite(value) ? value.toLocaleString('en-US') : '—';
}

/** A score with up to two decimals, or an em dash when absent. */
export function score(value: number | null | undefined): string {
  return typeof value === 'number' && Number.isFinite(value) ? String(Math.round(value * 100) / 100) : '—';
}

/** Field names that usually hold the readable part of an upstream object. */
const READABLE_KEYS = ['title', 'name', 'text', 'content', 'description', 'summary', 'label', 'value'];

/**
 * The readable text of an upstream value of unknown shape: strings as they are, numbers and booleans
 * printed, arrays joined, objects by their first readable field (title, name, text...) or as JSON.
 */
export function plainText(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint')
    return String(value);
  if (Array.isArray(value))
    return value
      .map(plainText)
      .filter((part) => part !== '')
      .join('; ');
  if (typeof value === 'object') {
    const record = value as Record<string, unknown>;
    for (const key of READABLE_KEYS) {
      const field = record[key];
      if (typeof field === 'string' && field.trim() !== '') return field;
    }
    return JSON.stringify(value);
  }
  return String(value);
}

/**
 * An upstream value of unknown shape as a nested bullet list (keys humanised, values escaped), at
 * most `maxDepth` levels deep and `maxItems` items per level. For analysis objects whose fields the
 * description does not publish.
 */
export function outline(value: unknown, maxDepth = 3, maxItems = 20): string {
  const lines: string[] = [];
  const walk = (node: unknown, depth: number, label: string | undefined) => {
    const indent = '  '.repeat(depth);
    const prefix = label === undefined ? '' : `**${cellText(label)}**: `;
    if (node === null || node === undefined || node === '') return;
    if (typeof node !== 'object') {
      lines.push(`${indent}- ${prefix}${prefix ? cellText(node) : inline(node)}`);
      return;
    }
    const entries: [string | undefined, unknown][] = Array.isArray(node)
      ? node.map((item) => [undefined, item])
      : Object.entries(node as Record<string, unknown>).map(([key, item]) => [humanise(key), item]);
    const simple = entries.every(([, item]) => item === null || typeof item !== 'object');
    if (depth >= maxDepth || (Array.isArray(node) && simple && entries.length > 0 && label !== undefined)) {
      const text = plainText(node);
      if (text !== '') lines.push(`${indent}- ${prefix}${prefix ? cellText(text) : inline(text)}`);
      return;
    }
    if (label !== undefined) lines.push(`${indent}- **${cellText(label)}**`);
    const childDepth = label === undefined ? depth : depth + 1;
    for (const [key, item] of entries.slice(0, maxItems)) walk(item, childDepth, key);
    if (entries.length > maxItems) {
      lines.push(`${'  '.repeat(childDepth)}- _…and ${entries.length - maxItems} more_`);
    }
  };
  walk(value, 0, undefined);
  return lines.length === 0 ? '_(none)_' : lines.join('\n');
}

/** `head_player_analysis` → "Head player analysis". */
export function humanise(key: string): string {
  const words = key
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/[_-]+/g, ' ')
    .trim()
    .toLowerCase();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/**
 * Upstream text that carries HTML (the materials node references wrap citations in
 * `<cite title="..."><a ...>1</a></cite>`) as plain text: a citation becomes its title in
 * parentheses, other tags are dropped and the common entities decoded. The result still goes through
 * `inline` or `paragraphs`, so nothing of it is rendered as HTML.
 */
export function htmlToText(value: unknown): string {
  return plainText(value)
    .replace(/<cite\b[^>]*\btitle="([^"]*)"[^>]*>[\s\S]*?<\/cite>/gi, ' ($1)')
    .replace(/<br\s*\/?>/gi, '\n')
    .replace(/<[^>]+>/g, '')
    .replace(/&quot;/g, '"')
    .replace(/&#39;|&apos;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&nbsp;/g, ' ')
    .replace(/&amp;/g, '&')
    .replace(/[ \t]+([.,;:])/g, '$1')
    .replace(/[ \t]{2,}/g, ' ')
    .trim();
}

/** A field of an upstream record by any of `keys`, compared without regard to case (`PN`, `pn`). */
export function field(record: unknown, ...keys: string[]): unknown {
  if (record === null || typeof record !== 'object' || Array.isArray(record)) return undefined;
  const entries = Object.entries(record as Record<string, unknown>);
  for (const key of keys) {
    const found = entries.find(([name]) => name.toLowerCase() === key.toLowerCase());
    if (found && found[1] !== null && found[1] !== undefined && found[1] !== '') return found[1];
  }
  return undefined;
}

export interface RecordColumn {
  header: string;
  /** Field names to try in order, without regard to case. */
  keys: string[];
}

/**
 * A table of upstream records of unknown shape: `columns` that no record fills are left out; when
 * none is filled, the records' own scalar fields (at most six) become the columns.
 */
export function recordsTable(records: unknown[], columns: RecordColumn[], empty = '_(none)_'): string {
  const objects = records.filter(
    (record) => record !== null && typeof record === 'object' && !Array.isArray(record),
  );
  if (objects.length === 0) return records.length === 0 ? empty : bullets(records, empty);
  let used = columns.filter((column) =>
    objects.some((record) => field(record, ...column.keys) !== undefined),
  );
  if (used.length === 0) {
    const names = new Set<string>();
    for (const record of objects) {
      for (const [name, value] of Object.entries(record as Record<string, unknown>)) {
        if (value !== null && typeof value !== 'object') names.add(name);
      }
    }
    used = [...names].slice(0, 6).map((name) => ({ header: humanise(name), keys: [name] }));
  }
  if (used.length === 0) return bullets(objects, empty);
  return table(
    used.map((column) => column.header),
    objects.map((record) => used.map((column) => shorten(field(record, ...column.keys), 300))),
    empty,
  );
}

/**
 * A link to an upstream web address when it is an http(s) URL (characters that could end the link
 * are percent-encoded), else the label alone as escaped text.
 */
export function webLink(label: unknown, url: unknown): Rendered {
  return new Rendered(webLinkText(label, url));
}

function webLinkText(label: unknown, url: unknown): string {
  const text = cellText(label) || cellText(url);
  if (typeof url !== 'string') return text;
  let parsed: URL;
  try {
    parsed = new URL(url.trim());
  } catch {
    return text;
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return text;
  const target = parsed.href.replace(
    /[()<>\s"'\\[\]`|]/g,
    (char) => `%${char.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`,
  );
  return `[${text}](${target})`;
}
