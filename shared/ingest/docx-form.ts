/**
 * The text of a .docx document, with an invention disclosure form's label/value tables (a table of
 * two columns whose first column holds labels such as "Docket No." or "Inventor(s)") turned into
 * `Label: value` lines at the top, where disclosure-form.ts reads front matter. Other tables stay in
 * the text as rows of cells joined by " | ". Through mammoth's HTML, which keeps the tables that its
 * raw text flattens into loose lines.
 */
import { defaultLabelMap, normaliseLabel } from './disclosure-form';

/** The document's text: the form's label lines first, then the rest in reading order. */
export async function docxText(body: Uint8Array): Promise<string> {
  const mammoth = await import('mammoth');
  const html = (await mammoth.convertToHtml({ buffer: Buffer.from(body) })).value;
  const labels: string[] = [];
  const rest = html.replace(/<table>([\s\S]*?)<\/table>/g, (_table, inner: string) => {
    const rows = [...inner.matchAll(/<tr>([\s\S]*?)<\/tr>/g)].map((row) =>
      [...(row[1] ?? '').matchAll(/<t[dh][^>]*>([\s\S]*?)<\/t[dh]>/g)].map((cell) => textOf(cell[1] ?? '')),
    );
    const isForm =
      rows.length > 0 &&
      rows.every((cells) => cells.length === 2) &&
      rows.some(
        (cells) => defaultLabelMap[normaliseLabel((cells[0] ?? '').replace(/:\s*$/, ''))] !== undefined,
      );
    if (!isForm) return `<p>${rows.map((cells) => cells.join(' | ')).join('</p><p>')}</p>`;
    for (const [label, value] of rows)
      if ((label ?? '').trim() !== '')
        labels.push(`${(label ?? '').replace(/:\s*$/, '').trim()}: ${value ?? ''}`);
    return '';
  });
  const text = textOf(rest);
  return labels.length === 0 ? text : `${labels.join('\n')}\n\n${text}`;
}

/** HTML of mammoth as text: a line per paragraph, heading or list item; tags dropped, entities decoded. */
function textOf(html: string): string {
  return html
    .replace(/<br\s*\/?>/g, '\n')
    .replace(/<\/(p|h[1-6])>/g, '\n\n')
    .replace(/<\/(li|tr)>/g, '\n')
    .replace(/<li>/g, '- ')
    .replace(/<[^>]*>/g, '')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&')
    .replace(/[ \t]+\n/g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}
