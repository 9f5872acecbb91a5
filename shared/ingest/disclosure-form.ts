/**
 * Invention disclosure forms: the administrative front matter (docket id, title, inventors, business
 * unit, dates) is read apart from the technical text, so that only the technical text goes upstream
 * (as plain text, Markdown markup stripped) and the rest stays with the job as its metadata.
 *
 * Front matter is read from the top of a document: YAML between `---` lines, or `Label: value`
 * and `**Label:** value` lines before the technical body (a .docx form's label/value tables arrive
 * as such lines, see docx-form.ts). A block of label lines counts as front matter only when at least
 * one of its labels is known (the label map), so a body that opens with "Note: ..." is left alone.
 * Labels map to fields through `labelMap` (defaults below, extended by the config file's
 * `disclosureForm.labels`); a label that maps to no field is kept under its own name.
 */
import type { Lexer, Token, Tokens } from 'marked';
import type { parse } from 'yaml';
import { type DisclosureFormConfig, defaultDisclosureFormConfig } from '../config/disclosure-form-config';
import type { Workflow } from '../engine/workflow';
import { errorMessage } from '../errors/error-message';

/**
 * The Markdown lexer and the YAML parser, loaded on first use (`loadDisclosureParsers`), so that no
 * function's cold start carries them: the ingest function loads them at its first text document.
 */
let parsers: { Lexer: typeof Lexer; parseYaml: typeof parse } | undefined;

/** Loads the parsers `disclosureInput`, `parseDisclosureForm` and `plainText` need; call it once before them. */
export async function loadDisclosureParsers(): Promise<void> {
  if (parsers) return;
  const [marked, yaml] = await Promise.all([import('marked'), import('yaml')]);
  parsers ??= { Lexer: marked.Lexer, parseYaml: yaml.parse };
}

function loaded(): NonNullable<typeof parsers> {
  if (!parsers) throw new Error('disclosure-form: call loadDisclosureParsers() before reading a form');
  return parsers;
}

/** The fields holding a date: read as YYYY-MM-DD (an unreadable one is kept as written, with a warning). */
export const dateFields: ReadonlySet<string> = new Set(['priorityDate', 'filingDate', 'submissionDate']);

/** Default labels (compared after `normaliseLabel`) and the field each fills. */
export const defaultLabelMap: Readonly<Record<string, string>> = {
  docket: 'docket',
  'docket id': 'docket',
  'docket no': 'docket',
  'docket number': 'docket',
  'disclosure id': 'docket',
  'disclosure no': 'docket',
  'disclosure number': 'docket',
  idf: 'docket',
  'idf id': 'docket',
  'idf no': 'docket',
  'idf number': 'docket',
  'case id': 'docket',
  'matter no': 'docket',
  'matter number': 'docket',
  'our ref': 'docket',
  'our reference': 'docket',
  title: 'title',
  'invention title': 'title',
  'title of invention': 'title',
  'title of the invention': 'title',
  inventor: 'inventors',
  inventors: 'inventors',
  'inventor names': 'inventors',
  'business unit': 'businessUnit',
  bu: 'businessUnit',
  division: 'businessUnit',
  department: 'businessUnit',
  'priority date': 'priorityDate',
  'earliest priority date': 'priorityDate',
  'filing date': 'filingDate',
  'date of filing': 'filingDate',
  'application date': 'filingDate',
  'submission date': 'submissionDate',
  'date submitted': 'submissionDate',
  'submitted on': 'submissionDate',
  'disclosure date': 'submissionDate',
  'date of disclosure': 'submissionDate',
};

/** A disclosure's fields: each known one as text (inventors as a list), others by their label. */
export type DisclosureMetadata = Record<string, string | string[]>;

export interface DisclosureForm {
  /** Whether the document had front matter (YAML, label lines or a label table). */
  found: boolean;
  metadata: DisclosureMetadata;
  /** The document's first heading when it stands before the front matter (a form's own title). */
  heading?: string | undefined;
  /** The technical text, plain (Markdown markup stripped): what may go upstream. */
  text: string;
  /** The same text as written (Markdown), without the front matter. */
  body: string;
  /** What could not be read as it should (a date that is not one), for the user; never fatal. */
  warnings: string[];
}

/** `Inventor(s)`, `Docket No.`, `BUSINESS-UNIT` → `inventors`, `docket no`, `business unit`. */
export function normaliseLabel(label: string): string {
  return label
    .toLowerCase()
    .replace(/\(s\)/g, 's')
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}

/** The label map with a config's labels on top of the defaults (its labels normalised). */
export function labelMapWith(extra: Readonly<Record<string, string>> = {}): Record<string, string> {
  const map: Record<string, string> = { ...defaultLabelMap };
  for (const [label, field] of Object.entries(extra)) map[normaliseLabel(label)] = field;
  return map;
}

// `Label: value`, `**Label:** value`, `**Label**: value`, `- Label: value`, `| Label | value |` is not one.
const labelLine =
  /^\s{0,3}(?:[-*+]\s+)?(?:\*\*|__)?([\p{L}][\p{L}\p{N} .,'()/#&-]{0,48}?)\s*(?::(?:\*\*|__)|(?:\*\*|__):|:)(?!\/\/)\s*(.*?)\s*$/u;
const listItem = /^\s{0,6}[-*+]\s+(.+?)\s*$/;
const headingLine = /^ {0,3}#{1,6}[ \t]+(.+?)[ \t#]*$/;

/**
 * Reads a disclosure form. `labelMap`: normalised label → field (`labelMapWith`). A document with no
 * front matter comes back whole as plain text, with `found: false` and no metadata.
 */
export function parseDisclosureForm(
  source: string,
  labelMap: Readonly<Record<string, string>> = defaultLabelMap,
): DisclosureForm {
  const normalised = source.replace(/^\uFEFF/, '').replace(/\r\n?/g, '\n');
  const warnings: string[] = [];
  const metadata: DisclosureMetadata = {};
  let rest = normalised;
  let found = false;

  const yaml = /^---[ \t]*\n([\s\S]*?)\n(?:---|\.\.\.)[ \t]*(?:\n|$)/.exec(normalised);
  if (yaml) {
    let value: unknown;
    try {
      value = loaded().parseYaml(yaml[1] ?? '');
    } catch (error) {
      warnings.push(`the YAML front matter cannot be read: ${errorMessage(error).split('\n')[0]}`);
    }
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
      found = true;
      rest = normalised.slice(yaml[0].length);
      for (const [label, raw] of Object.entries(value as Record<string, unknown>))
        keep(metadata, warnings, labelMap, label, yamlValue(raw), 'the YAML front matter');
    }
  }

  // Label lines at the top (after the YAML, if any), with the form's own heading before them.
  const lines = rest.split('\n');
  let at = 0;
  let heading: string | undefined;
  const skipBlank = () => {
    while (at < lines.length && (lines[at] ?? '').trim() === '') at += 1;
  };
  skipBlank();
  const firstHeading = headingLine.exec(lines[at] ?? '');
  if (firstHeading) {
    at += 1;
    skipBlank();
  }
  const block: { label: string; value: string; line: number }[] = [];
  let end = at;
  let sawBlank = false;
  for (let index = at; index < lines.length; index++) {
    const line = lines[index] ?? '';
    if (line.trim() === '') {
      sawBlank = true;
      continue;
    }
    const match = labelLine.exec(line);
    // Past a blank line only a known label goes on with the front matter ("Summary: ..." starts the
    // body); a long value is a sentence, not a field.
    const known = match !== null && labelMap[normaliseLabel(match[1] ?? '')] !== undefined;
    if (match && sawBlank && !known) break;
    if (match && (match[2] ?? '').length <= 300 && !/^https?$/i.test(match[1] ?? '')) {
      sawBlank = false;
      block.push({ label: match[1] ?? '', value: stripInline(match[2] ?? ''), line: index + 1 });
      end = index + 1;
      continue;
    }
    // `Inventors:` followed by a list: the list is its value.
    const last = block[block.length - 1];
    const item = listItem.exec(line);
    if (last && item && end === index) {
      last.value = last.value ? `${last.value}; ${stripInline(item[1] ?? '')}` : stripInline(item[1] ?? '');
      end = index + 1;
      continue;
    }
    break;
  }
  if (block.some((entry) => labelMap[normaliseLabel(entry.label)] !== undefined)) {
    found = true;
    for (const entry of block)
      keep(
        metadata,
        warnings,
        labelMap,
        entry.label,
        entry.value,
        `line ${entry.line + lineOffset(normalised, rest)}`,
      );
    if (firstHeading) heading = stripInline(firstHeading[1] ?? '');
    rest = lines.slice(end).join('\n');
  }
  return { found, metadata, heading, text: plainText(rest), body: rest.trim(), warnings };
}

export interface DisclosureInput {
  /** The workflow input: the technical text (plain), and only the fields mapped to inputs. */
  input: unknown;
  /** The form's fields, kept with the job (absent when the document had no front matter). */
  metadata?: DisclosureMetadata | undefined;
  warnings: string[];
}

/**
 * A text document as a workflow's input: its front matter read apart (`parseDisclosureForm`), the
 * rest through the workflow's `fromText`, its text fields as plain text (for Markdown or a form),
 * and the fields `config.inputs` maps to inputs the workflow takes added. Throws what `fromText`
 * throws.
 */
export function disclosureInput(
  workflow: Pick<Workflow, 'fromText' | 'input' | 'name'>,
  text: string,
  fileName: string,
  config: DisclosureFormConfig = defaultDisclosureFormConfig,
): DisclosureInput {
  if (!workflow.fromText) throw new Error(`${workflow.name} takes JSON input, not text`);
  const markdown = /\.(md|markdown)$/i.test(fileName);
  const form = parseDisclosureForm(text, labelMapWith(config.labels));
  if (!form.found && !markdown) return { input: workflow.fromText(text, fileName), warnings: [] };
  const base = workflow.fromText(form.body === '' ? text : form.body, fileName);
  if (base === null || typeof base !== 'object') return { input: base, warnings: form.warnings };
  const input: Record<string, unknown> = { ...(base as Record<string, unknown>) };
  for (const [name, value] of Object.entries(input))
    if (name !== 'title' && typeof value === 'string') input[name] = plainText(value);
  if (!form.found) return { input, warnings: form.warnings };
  // The form's title replaces one guessed from the body or the file name, if sent at all; a file
  // name (often the docket and the inventors' names) is not sent for a form.
  if (input.title !== undefined) {
    const without = { ...input };
    delete without.title;
    if (workflow.input.safeParse(without).success) delete input.title;
    // A workflow that needs a title (it names a document) takes the form's own heading.
    else if (form.heading) input.title = form.heading.slice(0, 200);
  }
  const filled = new Set<string>();
  for (const [field, name] of Object.entries(config.inputs)) {
    const value = form.metadata[field];
    if (value === undefined || filled.has(name)) continue;
    filled.add(name);
    const text = Array.isArray(value) ? value.join('; ') : value;
    const candidate = { ...input, [name]: name === 'title' ? text.slice(0, 200) : text };
    if (workflow.input.safeParse(candidate).success) input[name] = candidate[name];
  }
  return { input, metadata: form.metadata, warnings: form.warnings };
}

/** A job's label: the docket id first when the form has one, then the file name. */
export function disclosureLabel(fileName: string, metadata: DisclosureMetadata | undefined): string {
  const docket = metadata?.docket;
  return (typeof docket === 'string' && docket !== '' ? `${docket} · ${fileName}` : fileName).slice(0, 200);
}

/** How many lines of the source come before `rest` (for line numbers after YAML front matter). */
function lineOffset(source: string, rest: string): number {
  const before = source.slice(0, source.length - rest.length);
  return before === '' ? 0 : before.split('\n').length - 1;
}

function keep(
  metadata: DisclosureMetadata,
  warnings: string[],
  labelMap: Readonly<Record<string, string>>,
  label: string,
  value: string | string[],
  where: string,
): void {
  const field = labelMap[normaliseLabel(label)] ?? label.trim();
  const text = Array.isArray(value) ? value.join('; ') : value;
  if (text.trim() === '') return;
  if (field === 'inventors') {
    metadata[field] = (Array.isArray(value) ? value : splitNames(value)).filter((name) => name !== '');
    return;
  }
  if (dateFields.has(field)) {
    const date = isoDate(text);
    if (date === undefined) {
      warnings.push(`${where}: "${label}" is not a date opflow can read (${text}); write it as YYYY-MM-DD`);
      metadata[field] = text;
    } else metadata[field] = date;
    return;
  }
  metadata[field] = text.trim();
}

/** "Jane Doe, John Roe and Ann Poe" → three names ("Doe, Jane; Roe, John" → two). */
function splitNames(text: string): string[] {
  const parts = text.includes(';') ? text.split(';') : text.split(/,|\band\b|&/);
  return parts.map((part) => part.trim()).filter((part) => part !== '');
}

function yamlValue(raw: unknown): string | string[] {
  if (raw instanceof Date) return raw.toISOString().slice(0, 10);
  if (Array.isArray(raw)) return raw.flatMap((item) => yamlValue(item));
  if (raw !== null && typeof raw === 'object') {
    // `inventors: [{name: Jane Doe, ...}]`: the names.
    const name = (raw as { name?: unknown }).name;
    return typeof name === 'string' ? name : JSON.stringify(raw);
  }
  return raw === null || raw === undefined ? '' : String(raw);
}

const months = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'] as const;

/**
 * A date as YYYY-MM-DD: `2026-03-02`, `2026/3/2`, `20260302`, `2 March 2026`, `March 2, 2026`,
 * `02.03.2026` (day first, as written in Europe). `03/02/2026` is ambiguous (day or month first) and
 * so not read.
 */
export function isoDate(text: string): string | undefined {
  const value = text.trim();
  let parts: [number, number, number] | undefined;
  let match = /^(\d{4})[-/.]?(\d{1,2})[-/.]?(\d{1,2})$/.exec(value);
  if (match && (value.length === 8 || /[-/.]/.test(value))) parts = [+match[1]!, +match[2]!, +match[3]!];
  match = /^(\d{1,2})\.(\d{1,2})\.(\d{4})$/.exec(value);
  if (!parts && match) parts = [+match[3]!, +match[2]!, +match[1]!];
  match = /^(\d{1,2})(?:st|nd|rd|th)?\s+([A-Za-z]{3,})\.?,?\s+(\d{4})$/.exec(value);
  const monthOf = (name: string) =>
    months.indexOf(name.slice(0, 3).toLowerCase() as (typeof months)[number]) + 1;
  if (!parts && match && monthOf(match[2]!) > 0) parts = [+match[3]!, monthOf(match[2]!), +match[1]!];
  match = /^([A-Za-z]{3,})\.?\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{4})$/.exec(value);
  if (!parts && match && monthOf(match[1]!) > 0) parts = [+match[3]!, monthOf(match[1]!), +match[2]!];
  if (!parts) return undefined;
  const [year, month, day] = parts;
  const date = new Date(Date.UTC(year, month - 1, day));
  if (date.getUTCFullYear() !== year || date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day)
    return undefined;
  return date.toISOString().slice(0, 10);
}

/** Inline Markdown of one value (`**x**`, `[x](u)`, `` `x` ``) as plain text. */
function stripInline(text: string): string {
  return plainText(text)
    .replace(/\s*\n\s*/g, ' ')
    .trim();
}

/**
 * Markdown as plain text: headings, paragraphs and list items as lines of their text; emphasis,
 * links (their text), code marks and HTML tags dropped; table rows as cells joined by " | ".
 */
export function plainText(markdown: string): string {
  const tokens = new (loaded().Lexer)({ gfm: true }).lex(markdown);
  return blocks(tokens)
    .replace(/[ \t]+\n/g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

function blocks(tokens: readonly Token[]): string {
  return tokens.map(block).join('');
}

function block(token: Token): string {
  switch (token.type) {
    case 'heading':
    case 'paragraph':
      return `${inline((token as Tokens.Heading | Tokens.Paragraph).tokens)}\n\n`;
    case 'list': {
      // An ordered list keeps its numbers (claims are numbered, and refer to each other by number).
      const list = token as Tokens.List;
      const first = typeof list.start === 'number' ? list.start : 1;
      return `${list.items
        .map(
          (item, index) =>
            `${list.ordered ? `${first + index}.` : '-'} ${blocks(item.tokens).trim().replace(/\n+/g, '\n  ')}`,
        )
        .join('\n')}\n\n`;
    }
    case 'blockquote':
      return blocks((token as Tokens.Blockquote).tokens);
    case 'code':
      return `${(token as Tokens.Code).text}\n\n`;
    case 'table': {
      const table = token as Tokens.Table;
      const row = (cells: Tokens.TableCell[]) => cells.map((cell) => inline(cell.tokens)).join(' | ');
      return `${[row(table.header), ...table.rows.map(row)].join('\n')}\n\n`;
    }
    case 'html':
      return `${htmlText((token as Tokens.HTML).text)}\n`;
    case 'hr':
    case 'space':
    case 'def':
      return '\n';
    case 'text': {
      const text = token as Tokens.Text;
      return `${text.tokens ? inline(text.tokens) : text.text}\n`;
    }
    default:
      return 'text' in token && typeof token.text === 'string' ? `${token.text}\n` : '';
  }
}

function inline(tokens: readonly Token[] | undefined): string {
  if (!tokens) return '';
  return tokens
    .map((token) => {
      switch (token.type) {
        case 'strong':
        case 'em':
        case 'del':
        case 'link':
          return inline((token as Tokens.Strong).tokens);
        case 'image':
          return (token as Tokens.Image).text;
        case 'codespan':
        case 'escape':
          return (token as Tokens.Codespan).text
            .replace(/&amp;/g, '&')
            .replace(/&lt;/g, '<')
            .replace(/&gt;/g, '>');
        case 'br':
          return '\n';
        case 'html':
          return htmlText((token as Tokens.HTML).text);
        case 'text': {
          const text = token as Tokens.Text;
          return text.tokens ? inline(text.tokens) : decodeEntities(text.text);
        }
        default:
          return 'text' in token && typeof token.text === 'string' ? token.text : '';
      }
    })
    .join('');
}

function htmlText(html: string): string {
  return decodeEntities(html.replace(/<!--[\s\S]*?-->/g, '').replace(/<[^>]*>/g, ''));
}

function decodeEntities(text: string): string {
  return text
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}
