// The images of the docs stay true to the script that retakes them (scripts/screenshots.ts): every
// image a doc shows exists, every file of docs/images is one the script takes (so none goes stale
// unseen), and every image the script takes is shown by a doc.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { screenshots } from '../../scripts/screenshots';
import { documents, repoRoot } from '../support/documents';

const root = repoRoot;
const imagesDir = join(root, 'docs', 'images');

/** Every image a doc shows (`![...](path)` or `<img src>`), as a path from the repository's root. */
const shown = documents
  .map((doc) => join(root, doc))
  .flatMap((file) =>
    [...readFileSync(file, 'utf8').matchAll(/!\[[^\]]*\]\(([^)\s]+)\)|<img[^>]*\ssrc="([^"]+)"/g)]
      .map((match) => (match[1] ?? match[2])!)
      .filter((target) => !/^https?:/.test(target))
      .map((target) => ({ doc: relative(root, file), image: relative(root, resolve(file, '..', target)) })),
  );

describe('the images of the docs', () => {
  it('finds the images the dashboard guides show', () => {
    expect(shown.filter(({ doc }) => doc === 'docs/guides/dashboard.md').length).toBeGreaterThan(3);
    expect(shown.filter(({ doc }) => doc.startsWith('docs/guides/dashboard')).length).toBeGreaterThan(10);
  });

  it('has every image a doc shows', () => {
    const files = new Set(readdirSync(imagesDir).map((name) => `docs/images/${name}`));
    expect(shown.filter(({ image }) => !files.has(image))).toEqual([]);
  });

  it('retakes every file of docs/images with npm run screenshots, and shows each in a doc', () => {
    expect(readdirSync(imagesDir).sort()).toEqual(Object.keys(screenshots).sort());
    const used = new Set(shown.map(({ image }) => image));
    expect(Object.keys(screenshots).filter((name) => !used.has(`docs/images/${name}`))).toEqual([]);
  });
});
