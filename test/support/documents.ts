/**
 * The repository's documents, listed once for the tests that read them (test/unit/docs-links,
 * documents and docs-images): the Markdown files git knows (tracked, or new and not ignored), what
 * each test leaves out said here, by kind.
 */
import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';

export const repoRoot = resolve(__dirname, '../..');

/** The repository's files matching `patterns` (git pathspecs), tracked or new and not ignored. */
export function trackedFiles(...patterns: string[]): string[] {
  return execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '--', ...patterns], {
    cwd: repoRoot,
    encoding: 'utf8',
  })
    .split('\n')
    .filter((file) => file !== '' && !file.startsWith('node_modules/'));
}

/** Inputs and fixtures that happen to be Markdown (sample disclosures, recorded state): not documents. */
const notDocuments = [/^examples\//, /^test\/fixtures\//];
/** Records of past runs, kept as they were written: their links are not followed, no limit applies. */
const records = [/^bench\/journal\//, /^CHANGELOG\.md$/];
/** Written by a script (the operation list, the configuration reference): no size limit applies. */
const generated = [/^docs\/operations\.md$/, /^docs\/reference\//];

const matches = (patterns: RegExp[]) => (file: string) => patterns.some((pattern) => pattern.test(file));

/** Every document: the Markdown files of the repository, inputs and fixtures left out. */
export const documents: readonly string[] = trackedFiles('*.md').filter(
  (file) => !matches(notDocuments)(file),
);
/** The documents people read as they are now (records of past runs left out): their links must hold. */
export const currentDocuments: readonly string[] = documents.filter((file) => !matches(records)(file));
/** The documents written by hand: held to the size limits and the no-work-log rule. */
export const handWrittenDocuments: readonly string[] = currentDocuments.filter(
  (file) => !matches(generated)(file),
);
