/**
 * The documents stay pages a newcomer can read: no hand-written document over 25 KB, a README of
 * at most 10 KB, and no document or code comment that points at a work-log number (the word
 * session, issue or PR followed by a number, or a number after a hash in brackets), which nothing
 * in the repository resolves. Generated files (the operation
 * list, the configuration reference) and the bench journal, a record of past runs, are left out.
 * Comments are found with the TypeScript scanner, so strings and code are never read as comments.
 */
import { readFileSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { handWrittenDocuments, repoRoot, trackedFiles } from '../support/documents';

const root = repoRoot;
const maxDocumentBytes = 25 * 1024;
const maxReadmeBytes = 10 * 1024;

/**
 * A reference to a work-log number: session, issue, PR or pull request (any case, singular or
 * plural) followed by a number, with or without a hash, even across a line break; a hash and a
 * number in brackets; or the short form of an issue's number as an owner (an i and two digits, 's). Words that merely share a prefix (sessionId, issuer) and numbers that are not
 * work-log ones (a cron day such as N#4, a colour, an HTTP status, "an issue" in prose) do not
 * match: the first test below holds examples of both.
 */
const workLogReference = /\b(?:sessions?|issues?|PR|pull request)\s+#?\d+\b|\(#\d+\)|\bi\d{1,2}'s\b/gi;

const handWritten = handWrittenDocuments;

const codeFiles = trackedFiles('*.ts', '*.tsx', '*.mts', '*.cts', '*.js', '*.mjs', '*.cjs').filter(
  (file) => !file.startsWith('shared/openplatform/generated/') && !file.startsWith('dist/'),
);

/**
 * The text of every comment of a source file, with the line it starts on: the trivia before and
 * after every token of the parsed file (a comment on a token's line is its trailing trivia, one
 * on a later line the next token's leading trivia), so strings, regular expressions and template
 * literals are never read as comments.
 */
function commentsOf(file: string, text: string): { line: number; text: string }[] {
  const kind = file.endsWith('.tsx')
    ? ts.ScriptKind.TSX
    : /\.[cm]?js$/.test(file)
      ? ts.ScriptKind.JS
      : ts.ScriptKind.TS;
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, kind);
  const found = new Map<number, string>();
  const visit = (node: ts.Node) => {
    const ranges = [
      ...(ts.getLeadingCommentRanges(text, node.pos) ?? []),
      ...(ts.getTrailingCommentRanges(text, node.pos) ?? []),
    ];
    for (const range of ranges) found.set(range.pos, text.slice(range.pos, range.end));
    if (ts.isJSDoc(node)) return;
    for (const child of node.getChildren(source)) visit(child);
  };
  visit(source);
  return [...found]
    .sort(([a], [b]) => a - b)
    .map(([pos, comment]) => ({ line: source.getLineAndCharacterOfPosition(pos).line + 1, text: comment }));
}

/** `file:line: the matched text` for every work-log reference in the given texts. */
function referencesIn(file: string, pieces: { line: number; text: string }[]): string[] {
  return pieces.flatMap(({ line, text }) =>
    [...text.matchAll(workLogReference)].map((match) => {
      const lineOfMatch = line + (text.slice(0, match.index).match(/\n/g)?.length ?? 0);
      return `${file}:${lineOfMatch}: ${match[0]}`;
    }),
  );
}

describe('document sizes', () => {
  it('reads the documents it is about', () => {
    expect(handWritten).toContain('README.md');
    expect(handWritten).toContain('bench/README.md');
    expect(handWritten.some((file) => file.startsWith('docs/concepts/'))).toBe(true);
    expect(handWritten).not.toContain('docs/operations.md');
  });

  it(`keeps every hand-written document at or under ${maxDocumentBytes / 1024} KB`, () => {
    const tooLarge = handWritten
      .map((file) => ({ file, bytes: statSync(resolve(root, file)).size }))
      .filter(({ bytes }) => bytes > maxDocumentBytes)
      .map(({ file, bytes }) => `${file}: ${(bytes / 1024).toFixed(1)} KB`);
    expect(tooLarge, 'split these by topic, or move history to an ADR or the bench journal').toEqual([]);
  });

  it(`keeps README.md at or under ${maxReadmeBytes / 1024} KB`, () => {
    expect(statSync(resolve(root, 'README.md')).size).toBeLessThanOrEqual(maxReadmeBytes);
  });
});

describe('work-log references', () => {
  it('matches the ways a work-log number is written, and nothing else', () => {
    const matches = (text: string) => text.match(workLogReference) ?? [];
    for (const reference of [
      'session 8',
      'Sessions 8',
      'issue 12',
      "Issue 9's goals",
      'issue #12',
      'PR #12',
      '(#7)',
    ]) {
      expect(matches(reference), reference).toHaveLength(1);
    }
    for (const prose of [
      'an HTTP 429 or 503',
      'the sessionId 12',
      'an issuer 3',
      'use FRI#4 or N#5',
      '`0 9 * * 1#2`',
      'an issue with 3 retries',
      'issue the call',
      '# 1. Heading',
      'colour #555 stays',
      "ai35-1's answer",
    ]) {
      expect(matches(prose), prose).toEqual([]);
    }
  });

  it('finds comments and only comments in code', () => {
    const source = [
      "const a = 'issue 12 in a string'; // a comment",
      'const re = /session 8/; /* block',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the source text of a template literal
      '   comment */ const t = `x ${a} issue 3 // not a comment`;',
      '// last',
    ].join('\n');
    expect(commentsOf('x.ts', source).map(({ line, text }) => [line, text])).toEqual([
      [1, '// a comment'],
      [2, '/* block\n   comment */'],
      [4, '// last'],
    ]);
  });

  it('finds none in the hand-written documents', () => {
    const found = handWritten.flatMap((file) =>
      referencesIn(file, [{ line: 1, text: readFileSync(resolve(root, file), 'utf8') }]),
    );
    expect(found, 'say what the text means instead of pointing at a number').toEqual([]);
  });

  it('finds none in code comments', () => {
    expect(codeFiles.length).toBeGreaterThan(300);
    const found = codeFiles.flatMap((file) => {
      const text = readFileSync(resolve(root, file), 'utf8');
      // Parsing is the slow part: only a file whose text holds a match anywhere can have one in a comment.
      if (!new RegExp(workLogReference.source, workLogReference.flags).test(text)) return [];
      return referencesIn(file, commentsOf(file, text));
    });
    expect(found, 'say what the comment means instead of pointing at a number').toEqual([]);
  });
});
