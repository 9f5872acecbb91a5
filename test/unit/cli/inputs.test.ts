// Reading the inputs of `opflow run`: which files are used, and what is said about the others.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { maxInputBytes, readInputs } from '../../../shared/cli/inputs';

describe('readInputs', () => {
  let dir: string;
  const read = (sources: string[], stdin = '') =>
    readInputs(sources, { cwd: dir, readStdin: async () => stdin });

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'opflow-inputs-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('reads Markdown, text and JSON files by their extension', async () => {
    writeFileSync(join(dir, 'a.md'), '# Hinge\nA hinge.');
    writeFileSync(join(dir, 'b.txt'), 'Plain text.');
    writeFileSync(join(dir, 'c.json'), '{"text": "From JSON"}');
    const { documents, problems } = await read(['a.md', 'b.txt', 'c.json']);
    expect(problems).toEqual([]);
    expect(documents.map((d) => [d.fileName, d.kind])).toEqual([
      ['a.md', 'markdown'],
      ['b.txt', 'text'],
      ['c.json', 'json'],
    ]);
    expect(documents[2]?.json).toEqual({ text: 'From JSON' });
  });

  it('reads a folder: its usable files sorted by name, skipping hidden and other files', async () => {
    mkdirSync(join(dir, 'folder'));
    writeFileSync(join(dir, 'folder', 'z.md'), 'z');
    writeFileSync(join(dir, 'folder', 'a.txt'), 'a');
    writeFileSync(join(dir, 'folder', '.hidden.md'), 'h');
    writeFileSync(join(dir, 'folder', 'picture.png'), 'p');
    const { documents, problems, skipped } = await read(['folder']);
    expect(skipped).toEqual([join('folder', 'picture.png')]);
    expect(problems).toEqual([]);
    expect(documents.map((d) => d.source)).toEqual([join('folder', 'a.txt'), join('folder', 'z.md')]);
  });

  it('says which file is wrong and why, and keeps the others', async () => {
    writeFileSync(join(dir, 'good.md'), 'fine');
    writeFileSync(join(dir, 'empty.md'), '  \n');
    writeFileSync(join(dir, 'broken.json'), '{"text": ');
    writeFileSync(join(dir, 'binary.txt'), Buffer.from([0xff, 0xfe, 0xfd, 0x00]));
    writeFileSync(join(dir, 'slides.pdf'), '%PDF');
    mkdirSync(join(dir, 'nothing-here'));
    const { documents, problems } = await read([
      'good.md',
      'empty.md',
      'broken.json',
      'binary.txt',
      'slides.pdf',
      'missing.md',
      'nothing-here',
    ]);
    expect(documents.map((d) => d.source)).toEqual(['good.md']);
    expect(problems).toEqual([
      { source: 'empty.md', reason: 'the file is empty' },
      { source: 'broken.json', reason: expect.stringMatching(/^invalid JSON: /) },
      { source: 'binary.txt', reason: 'not UTF-8 text (is it a binary file?)' },
      { source: 'slides.pdf', reason: expect.stringMatching(/^cannot read the pdf document/) },
      { source: 'missing.md', reason: 'no such file or folder' },
      { source: 'nothing-here', reason: 'the folder has no .md, .txt, .json, .docx or .pdf files' },
    ]);
  });

  it('refuses valid UTF-8 that is binary (NUL or many control bytes), and keeps text with tabs and page breaks', async () => {
    writeFileSync(join(dir, 'nul.md'), Buffer.from('\u0000\u0001\u0002hello\u0000', 'utf8'));
    writeFileSync(join(dir, 'controls.txt'), `${'\u0007'.repeat(5)}${'x'.repeat(100)}`);
    writeFileSync(join(dir, 'tabs.txt'), 'a\tb\r\nc\fd\u000be\n');
    const { documents, problems } = await read(['nul.md', 'controls.txt', 'tabs.txt']);
    expect(documents.map((d) => d.source)).toEqual(['tabs.txt']);
    expect(problems).toEqual([
      { source: 'nul.md', reason: 'not text: it holds NUL or control bytes (is it a binary file?)' },
      { source: 'controls.txt', reason: 'not text: it holds NUL or control bytes (is it a binary file?)' },
    ]);
  });

  it('refuses a file larger than the limit', async () => {
    writeFileSync(join(dir, 'huge.txt'), Buffer.alloc(maxInputBytes + 1, 'a'));
    const { problems } = await read(['huge.txt']);
    expect(problems[0]?.reason).toMatch(/^too large/);
  });

  it('reads standard input for -, as JSON when it looks like JSON, once', async () => {
    const asText = await read(['-'], '# Idea\nSome text');
    expect(asText.documents[0]).toMatchObject({ source: '-', fileName: 'stdin', kind: 'markdown' });
    const asJson = await read(['-', '-'], ' {"text": "x"}');
    expect(asJson.documents[0]).toMatchObject({ kind: 'json', json: { text: 'x' } });
    expect(asJson.problems).toEqual([{ source: '-', reason: 'standard input can be read only once' }]);
    const empty = await read(['-'], ' \n');
    expect(empty.problems).toEqual([{ source: '-', reason: 'standard input is empty' }]);
  });

  it('reads a file named twice only once, and drops a byte order mark', async () => {
    writeFileSync(join(dir, 'a.md'), '\uFEFF# A');
    const { documents } = await read(['a.md', './a.md']);
    expect(documents).toHaveLength(1);
    expect(documents[0]?.content).toBe('# A');
  });
});
