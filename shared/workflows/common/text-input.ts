/**
 * Turning a text or Markdown document into a workflow input (`opflow run <files>`): the title comes
 * from the document's first Markdown heading, else from the file name; the body is the text without
 * that heading line. JSON files are parsed by the CLI, never here.
 */

export interface TextDocument {
  /**
   * The first `#` heading's text; in plain text, a short first line on its own above a blank line;
   * else the file name without folders and extension.
   */
  title: string;
  /** The whole text, trimmed. */
  text: string;
  /** The text without its title heading line, trimmed. */
  body: string;
}

const HEADING = /^ {0,3}#{1,6}[ \t]+(.+?)[ \t#]*$/;

/** Read a document's title and body (see `TextDocument`). */
export function readTextDocument(text: string, fileName: string): TextDocument {
  const normalised = text.replace(/^\uFEFF/, '').replace(/\r\n?/g, '\n');
  const lines = normalised.split('\n');
  let headingIndex = lines.findIndex((line) => HEADING.test(line));
  let headingText = headingIndex >= 0 ? HEADING.exec(lines[headingIndex]!)?.[1]?.trim() : undefined;
  if (headingIndex < 0) {
    // Plain text: a short first line standing alone above a blank line is the title.
    const first = lines.findIndex((line) => line.trim() !== '');
    const line = first >= 0 ? lines[first]!.trim() : '';
    if (
      first >= 0 &&
      line.length <= 150 &&
      !/[.!?:;,]$/.test(line) &&
      (lines[first + 1] ?? '').trim() === ''
    ) {
      headingIndex = first;
      headingText = line;
    }
  }
  const title = headingText && headingText !== '' ? headingText : titleFromFileName(fileName);
  const body =
    headingIndex >= 0
      ? lines
          .filter((_, index) => index !== headingIndex)
          .join('\n')
          .trim()
      : normalised.trim();
  return { title, text: normalised.trim(), body };
}

/** `examples/disclosures/heat-pump_dryer.md` → "heat-pump dryer". */
export function titleFromFileName(fileName: string): string {
  const base = fileName.split(/[\\/]/).pop() ?? fileName;
  const withoutExtension = base.replace(/\.[^.]+$/, '');
  const title = withoutExtension.replace(/_+/g, ' ').trim();
  return title === '' || title === '-' ? 'untitled' : title;
}

/** The first non-empty line of a text, without Markdown heading marks, at most `max` characters. */
export function firstLine(text: string, max = 200): string {
  const line =
    text
      .split(/\r?\n/)
      .map((candidate) => candidate.replace(/^ {0,3}#{1,6}[ \t]+/, '').trim())
      .find((candidate) => candidate !== '') ?? '';
  return line.length <= max ? line : `${line.slice(0, max - 1).trimEnd()}…`;
}
