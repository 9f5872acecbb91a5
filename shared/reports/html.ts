/**
 * A report's Markdown as a standalone HTML page: the page's stylesheet (screen, phone and print) and
 * the Markdown rendering. Raw HTML in the Markdown (which may come from upstream text) is escaped,
 * never rendered. The page's own policy lets it load nothing: its images are inside it (`data:`), so
 * an image link in upstream text fetches nothing from anyone when the page is opened from disk.
 */
import { Marked } from 'marked';

const escapeHtml = (text: string) =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

const marked = new Marked({
  gfm: true,
  renderer: {
    html: ({ text }) => escapeHtml(text),
  },
});

/** Markdown as an HTML fragment (raw HTML in it escaped, as in the page). */
export function markdownToHtml(markdown: string): string {
  return marked.parse(markdown, { async: false });
}

/**
 * `section` inserted after the Markdown line `line` (e.g. a report's cost line), or after the title
 * when the report has no such line.
 */
export function withSectionAfterLine(markdown: string, line: string, section: string): string {
  const lines = markdown.split('\n');
  let at = lines.indexOf(line);
  if (at < 0) at = lines.findIndex((text) => /^#\s/.test(text));
  if (at < 0) return `${section.trim()}\n\n${markdown}`;
  const rest = lines.slice(at + 1);
  while (rest[0]?.trim() === '') rest.shift();
  return [...lines.slice(0, at + 1), '', section.trim(), '', ...rest].join('\n');
}

/**
 * The page. `insert`: trusted HTML opflow built itself (the changes section of a scheduled report,
 * with its SVG chart), placed after the paragraph of the Markdown line `afterLine` (the cost line),
 * or after the first `<h1>` when there is none. `banner`: a warning shown above everything, on screen
 * and in print (the sandbox's "not real publications").
 */
export function renderHtml(
  title: string,
  markdown: string,
  options: {
    insert?: { afterLine: string; html: string };
    banner?: { headline: string; detail: string };
  } = {},
): string {
  let body = markdownToHtml(markdown);
  if (options.insert) {
    const { afterLine, html } = options.insert;
    const paragraph = markdownToHtml(afterLine).trim();
    const found = body.indexOf(paragraph);
    const titleEnd = body.indexOf('</h1>');
    const at = found >= 0 ? found + paragraph.length : titleEnd >= 0 ? titleEnd + 5 : 0;
    body = `${body.slice(0, at)}\n${html}\n${body.slice(at)}`;
  }
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<title>${escapeHtml(title)}</title>
<style>
body { font: 15px/1.5 system-ui, sans-serif; max-width: 60rem; margin: 2rem auto; padding: 0 1rem; color: #1a1a1a; }
table { border-collapse: collapse; margin: 1rem 0; width: 100%; }
th, td { border: 1px solid #ccc; padding: .35rem .5rem; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
code { background: #f3f3f3; padding: 0 .2rem; }
a { color: #0645ad; overflow-wrap: anywhere; }
a[href^="https://worldwide.espacenet.com/"] { overflow-wrap: normal; white-space: nowrap; }
p, li, td { overflow-wrap: break-word; }
img { max-width: 100%; height: auto; }
td img { max-height: 16rem; background: #fff; }
h1 { font-size: 1.6rem; line-height: 1.25; }
.banner { background: #fff3cd; border: 2px solid #b45309; color: #5c2d00; padding: .6rem .8rem; margin: 0 0 1rem; font-size: 1.05rem; }
@media (max-width: 40rem) {
  body { font-size: 16px; margin: 1rem auto; padding: 0 .75rem; }
  h1 { font-size: 1.35rem; }
  table { display: block; overflow-x: auto; width: auto; max-width: 100%; }
  th, td { min-width: 4rem; }
  td:nth-child(2) { min-width: 10rem; }
}
@media print {
  @page { margin: 1.5cm; }
  body { font: 10.5pt/1.4 Georgia, 'Times New Roman', serif; max-width: none; margin: 0; padding: 0; color: #000; }
  h1, h2, h3 { break-after: avoid; page-break-after: avoid; }
  table, tr, img, pre, blockquote { break-inside: avoid; page-break-inside: avoid; }
  thead { display: table-header-group; }
  th { background: #eee !important; -webkit-print-color-adjust: exact; print-color-adjust: exact; }
  .banner { border: 2pt solid #000; -webkit-print-color-adjust: exact; print-color-adjust: exact; }
  a { color: #000; text-decoration: none; }
  a[href^="http"]::after { content: " (" attr(href) ")"; font-size: 85%; color: #444; }
}
</style>
</head>
<body>
${options.banner === undefined ? '' : `<div class="banner" role="alert"><strong>${escapeHtml(options.banner.headline)}</strong> ${escapeHtml(options.banner.detail)}</div>\n`}${body}</body>
</html>
`;
}
