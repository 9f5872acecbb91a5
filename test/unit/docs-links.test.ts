/**
 * The documents' links stay true: every relative link of a hand-written Markdown document (the
 * README, docs/**, bench/README.md, a package's README) names a file of the repository, and a link
 * to a heading of a Markdown page (`guide.md#a-heading`, or `#a-heading` on the same page) names a
 * heading that page has, spelt as GitHub spells its anchors. Links inside code blocks and code
 * spans are not links, and web addresses are not followed. The docs index (docs/README.md) lists
 * every guide and concept page and every npm script; and every document the code names (`see
 * docs/guides/x.md`, in a comment, an error or a help text) exists.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { currentDocuments, repoRoot, trackedFiles } from '../support/documents';

const root = repoRoot;
const tracked = trackedFiles;
/** Records of past runs (the bench journal, the changelog) are left out: their links are history. */
const documents = currentDocuments;

/** The text of a Markdown page with its fenced code blocks and code spans blanked out. */
function prose(text: string): string {
  return text
    .replace(/^(`{3,}|~{3,})[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '')
    .replace(/(`+)[\s\S]*?\1/g, (span) => (span.includes('\n') ? '\n' : ''));
}

/** The anchor GitHub gives a heading: lower case, punctuation dropped, spaces as hyphens. */
function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** Every anchor a page has: its headings' (a repeated one with -1, -2, ...) and `<a id>`/`name`. */
function anchorsOf(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  const withoutFences = text.replace(/^(`{3,}|~{3,})[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '');
  for (const match of withoutFences.matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = anchorOf(match[1]!);
    const count = seen.get(base) ?? 0;
    anchors.add(count === 0 ? base : `${base}-${count}`);
    seen.set(base, count + 1);
  }
  for (const match of text.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(match[1]!);
  return anchors;
}

/** Every link target of a page: `[text](target)`, `[text]: target` and `<img src>`. */
function linksOf(text: string): string[] {
  const body = prose(text);
  return [
    ...[...body.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((match) => match[1]!),
    ...[...body.matchAll(/^\s*\[[^\]]+\]:\s+(\S+)/gm)].map((match) => match[1]!),
    ...[...body.matchAll(/<img[^>]*\ssrc="([^"]+)"/g)].map((match) => match[1]!),
  ];
}

const pageCache = new Map<string, Set<string>>();
function anchorsOfFile(file: string): Set<string> {
  let anchors = pageCache.get(file);
  if (anchors === undefined) {
    anchors = anchorsOf(readFileSync(file, 'utf8'));
    pageCache.set(file, anchors);
  }
  return anchors;
}

/** `doc: target (why)` for each link of a document that names no file or no heading. */
function brokenLinks(doc: string): string[] {
  const file = resolve(root, doc);
  return linksOf(readFileSync(file, 'utf8')).flatMap((target) => {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return [];
    const [path = '', anchor] = target.split('#') as [string, string | undefined];
    const to = path === '' ? file : resolve(dirname(file), decodeURIComponent(path));
    if (!existsSync(to)) return [`${doc}: ${target} (no file ${relative(root, to)})`];
    if (anchor === undefined || anchor === '' || !to.endsWith('.md')) return [];
    return anchorsOfFile(to).has(decodeURIComponent(anchor).toLowerCase())
      ? []
      : [`${doc}: ${target} (no heading "#${anchor}" in ${relative(root, to)})`];
  });
}

describe('the links of the documents', () => {
  it('spells anchors as GitHub does', () => {
    expect(anchorOf('Check a deploy (`opflow doctor`)')).toBe('check-a-deploy-opflow-doctor');
    expect(anchorOf('Run again like this…')).toBe('run-again-like-this');
    expect(anchorOf('How it is built (`dashboard/`, `shared/dashboard/`)')).toBe(
      'how-it-is-built-dashboard-shareddashboard',
    );
    expect([...anchorsOf('# A\n\n## Step\n\n```\n## not a heading\n```\n\n## Step\n')]).toEqual([
      'a',
      'step',
      'step-1',
    ]);
  });

  it('reads links outside code only', () => {
    const page = [
      'See [the guide](guide.md#a) and [site](https://example.com).',
      '`[not](a-link.md)` and',
      '```md',
      '[not](either.md)',
      '```',
      '![image](../images/x.png)',
      '[ref]: other.md',
    ].join('\n');
    expect(linksOf(page)).toEqual(['guide.md#a', 'https://example.com', '../images/x.png', 'other.md']);
  });

  it('finds the documents it is about', () => {
    expect(documents).toContain('README.md');
    expect(documents).toContain('docs/guides/cli.md');
    expect(documents.filter((doc) => doc.startsWith('docs/guides/')).length).toBeGreaterThan(20);
  });

  it('has every relative link name a file, and every anchor a heading of that page', () => {
    const broken = documents.flatMap(brokenLinks);
    expect(broken, 'fix the link, or the heading it names').toEqual([]);
  });

  it('lists every guide and concept page in the docs index (docs/README.md)', () => {
    const index = readFileSync(resolve(root, 'docs/README.md'), 'utf8');
    const listed = new Set(
      linksOf(index)
        .map((target) => target.split('#')[0]!)
        .map((target) => relative(root, resolve(root, 'docs', target))),
    );
    const pages = documents.filter((doc) => /^docs\/(guides|concepts)\/[^/]+\.md$/.test(doc));
    expect(
      pages.filter((page) => !listed.has(page)),
      'add these pages to docs/README.md, under their topic',
    ).toEqual([]);
  });
});

describe('what the documents name', () => {
  it('names every npm script in the docs index', () => {
    const index = readFileSync(resolve(root, 'docs/README.md'), 'utf8');
    const scripts = Object.keys(
      (JSON.parse(readFileSync(resolve(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> })
        .scripts,
    );
    expect(scripts).toContain('aws-local');
    const named = (script: string) =>
      script === 'prepare'
        ? index.includes('`prepare`')
        : index.includes(`\`npm run ${script}`) || (script === 'test' && index.includes('`npm test`'));
    expect(
      scripts.filter((script) => !named(script)),
      'add these npm scripts to the table of docs/README.md',
    ).toEqual([]);
  });

  it('has every document the code names', () => {
    const code = tracked('*.ts', '*.tsx', '*.mjs', '*.js').filter(
      // Tests write the paths of their own fixtures (docs/a.md in a temporary folder): not documents.
      (file) =>
        !file.startsWith('dist/') &&
        !file.startsWith('test/') &&
        !file.startsWith('shared/openplatform/generated/'),
    );
    expect(code.length).toBeGreaterThan(300);
    const missing = code.flatMap((file) =>
      [...readFileSync(resolve(root, file), 'utf8').matchAll(/\b(?:docs|bench)\/[\w./-]*?\.md\b/g)]
        .map((match) => match[0])
        .filter((doc) => !existsSync(resolve(root, doc)))
        .map((doc) => `${file}: ${doc}`),
    );
    expect(missing, 'name a document that exists').toEqual([]);
  });
});
