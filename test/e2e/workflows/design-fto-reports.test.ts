/**
 * The FTO and design infringement reports as their readers get them: a real `opflow run` against the
 * built-in sandbox, then report.html opened in chromium and checked item by item against the
 * checklists of docs/guides/fto.md and docs/guides/design-infringement.md, on what the page shows
 * (headings, table cells, links), not on the Markdown behind it. The specification drafting,
 * feasibility analysis and translation reports are rendered beside them (sandbox marked above the
 * title). Screenshots of all are kept in test-artifacts/reports/ to be looked at.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import mammoth from 'mammoth';
import { type Browser, chromium, type Locator, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workflows } from '../../../shared/workflows';
import { childEnv, killRunningOpflows, repoRoot, runOpflow } from '../local/opflow-process';

const chromiumPath = process.env.OPFLOW_CHROMIUM ?? '/usr/bin/chromium';
const artefacts = join(repoRoot, 'test-artifacts', 'reports');

/** A real PNG (48x48), as a product photo would be sent. */
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAADAAAAAwCAAAAAByaaZbAAAAq0lEQVR42u2WSw6AMAhE5/6XxpgaU8oMLS4aF2WlhIf8SoUVBQd4tU1WgWYsEFD78JQBvRUhoOKHyAPK3gQBlq9+H4DHs9PY6CKkOwJD6gjlIVVyqlhC0oeOACk56XTnxEWrZykAYtRIwOwDnHAAFgB4YH5y9gJYArAT+GGV6p0uz1J9Wm0KJCfO0vVpKwQ70xnBt4Ym1F4yozdCsvkYku/WD9s7XBDnT+CWC0dz1oyW+a8bAAAAAElFTkSuQmCC',
  'base64',
);

const inputs: Record<string, unknown> = {
  fto: {
    text: 'A drone battery latch with a spring-loaded pawl that engages a notch in the battery housing. A release lever disengages the pawl with one hand. A hall sensor tells the flight controller when the latch is closed.',
    title: 'Drone battery latch',
    markets: ['US', 'EP', 'CN'],
    comparePatents: ['CN118289111A'],
  },
  'design-infringement-search': {
    images: [
      { url: 'https://example.com/products/front.png' },
      { data: `data:image/png;base64,${PNG.toString('base64')}`, name: 'side.png' },
    ],
    countries: ['US', 'EU', 'CN'],
    field: 'inflatable swim ring',
  },
  'design-infringement-1v1': {
    image: { data: PNG.toString('base64'), name: 'unicorn-float.png' },
    patent: 'EU0040356240003S',
  },
  // The other new workflows' reports, rendered and kept as screenshots too (their checklists are
  // checked in their own tests): their shipped examples.
  ...Object.fromEntries(
    ['specification-drafting', 'feasibility-analysis', 'translation'].map((name) => [
      name,
      workflows.get(name)!.example,
    ]),
  ),
};

/** A table's rows as records by its header cells. */
async function rowsOf(table: Locator): Promise<Record<string, string>[]> {
  const headers = (await table.locator('thead th').allTextContents()).map((text) => text.trim());
  const rows: Record<string, string>[] = [];
  for (const row of await table.locator('tbody tr').all()) {
    const cells = (await row.locator('td').allTextContents()).map((text) => text.trim());
    rows.push(Object.fromEntries(headers.map((header, index) => [header, cells[index] ?? ''])));
  }
  return rows;
}

/** The first table after the h2 titled `title`. */
const tableAfter = (page: Page, title: string) =>
  page.locator(`xpath=//h2[normalize-space()="${title}"]/following-sibling::table[1]`);

/** The h2 titles in order. */
const sections = async (page: Page) =>
  (await page.locator('h2').allTextContents()).map((text) => text.trim());

/** The text between the h2 titled `title` and the next h2. */
async function sectionText(page: Page, title: string): Promise<string> {
  // The text as rendered (line breaks between blocks), as a reader sees it.
  // biome-ignore lint/performance/useDomNodeTextContent: Playwright's innerText, the rendered text
  const text = await page.locator('body').innerText();
  const start = text.indexOf(`\n${title}\n`);
  const rest = text.slice(start + title.length + 2);
  const all = await sections(page);
  const next = all[all.indexOf(title) + 1];
  return (next ? rest.slice(0, rest.indexOf(`\n${next}\n`)) : rest).trim();
}

describe('FTO and design infringement reports, read in chromium against their checklists', () => {
  let dir: string;
  let browser: Browser;
  const pages = new Map<string, Page>();
  const folders = new Map<string, string>();

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'opflow-e2e-ip-reports-'));
    mkdirSync(artefacts, { recursive: true });
    const env = childEnv({
      OPFLOW_SANDBOX_SPEED: '1000',
      OPFLOW_DB: join(dir, 'jobs.db'),
      OPFLOW_OUT: join(dir, 'out'),
    });
    for (const [workflow, input] of Object.entries(inputs)) {
      const file = join(dir, `${workflow}.json`);
      writeFileSync(file, JSON.stringify(input));
      const run = await runOpflow(['run', workflow, file, '--json'], { env, cwd: dir });
      expect(run.code, `${workflow}: ${run.stderr}`).toBe(0);
      const [job] = JSON.parse(run.stdout).jobs as { id: string; status: string }[];
      expect(job!.status, workflow).toBe('SUCCEEDED');
      folders.set(workflow, join(dir, 'out', job!.id));
    }
    browser = await chromium.launch({
      executablePath: chromiumPath,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
    });
    for (const [workflow, folder] of folders) {
      const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
      await page.goto(pathToFileURL(join(folder, 'report.html')).href);
      await page.screenshot({ path: join(artefacts, `${workflow}.png`), fullPage: true });
      pages.set(workflow, page);
    }
  }, 300_000);

  afterAll(async () => {
    killRunningOpflows();
    await browser?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Every report: sandbox data marked above the title; no image as base64 in report.md or result.json. */
  it.each(Object.keys(inputs))('%s: sandbox data is marked above the title', async (workflow) => {
    const page = pages.get(workflow)!;
    const banner = page.locator('.banner[role="alert"]');
    await expect(banner.textContent()).resolves.toContain('Sandbox data: not real publications.');
    const bannerBox = (await banner.boundingBox())!;
    const titleBox = (await page.locator('h1').boundingBox())!;
    expect(bannerBox.y).toBeLessThan(titleBox.y);
    for (const file of ['report.md', 'result.json'])
      expect(readFileSync(join(folders.get(workflow)!, file), 'utf8'), file).not.toContain(
        PNG.toString('base64').slice(0, 40),
      );
  });

  it('fto: the recommendation comes first, naming markets and patents', async () => {
    const page = pages.get('fto')!;
    expect((await sections(page))[0]).toBe('Recommendation');
    const recommendation = await sectionText(page, 'Recommendation');
    expect(recommendation).toMatch(/\b(US|EP|CN)\b/);
    expect(recommendation).toMatch(/P1 [A-Z]{2}\d/);
  });

  it('fto: every patent shows its risk and jurisdiction, and the markets it reaches', async () => {
    const page = pages.get('fto')!;
    const patents = await rowsOf(tableAfter(page, 'Patents'));
    expect(patents.length).toBeGreaterThan(1);
    for (const patent of patents) {
      expect(patent['Risk'], patent['Patent']).toMatch(/^(High|Medium|Low)/);
      expect(patent['Office'], patent['Patent']).toMatch(/^[A-Z]{2}$/);
    }
    const markets = await rowsOf(tableAfter(page, 'Risk by market'));
    expect(markets.map((market) => market['Market'])).toEqual(['US', 'EP', 'CN']);
    // Each live patent of risk above low is named in a market it reaches.
    const reach = markets.map((market) => market['Patents that reach it']).join(' ');
    for (const patent of patents.filter((row) => /^(High|Medium)/.test(row['Risk'] ?? '')))
      expect(reach, patent['Patent']).toContain(patent['Patent']!);
  });

  it('fto: every patent shows its legal status, or the report says why it is missing', async () => {
    const page = pages.get('fto')!;
    for (const patent of await rowsOf(tableAfter(page, 'Patents')))
      expect(patent['Legal status'], patent['Patent']).toMatch(/^(Active|Pending|Inactive)$/);
  });

  it('fto: a claim chart per independent claim, element by element, the named patent among them', async () => {
    const page = pages.get('fto')!;
    const patents = await rowsOf(tableAfter(page, 'Patents'));
    const charts = (await page.locator('h3').allTextContents()).map((text) => text.trim());
    for (const patent of patents)
      expect(charts.some((chart) => chart.includes(` · ${patent['Patent']}`))).toBe(true);
    const claims = page.locator('h4', { hasText: /^Claim \d+ \(independent\)/ });
    expect(await claims.count()).toBeGreaterThanOrEqual(patents.length);
    for (const claim of await claims.all()) {
      const chart = claim.locator('xpath=following-sibling::table[1]');
      const rows = await rowsOf(chart);
      expect(rows.length).toBeGreaterThan(0);
      for (const row of rows) expect(row['Match']).toMatch(/identical|equivalent|different|—/);
    }
    const named = patents.find((patent) => patent['Patent'] === 'CN118289111A');
    expect(named?.['Risk']).toMatch(/\(named; from the scores\)/);
    // The note on named patents reads as prose, its field name as code (not escaped backticks).
    const note = await sectionText(page, 'Patents');
    expect(note).toContain('named for comparison (comparePatents)');
    expect(note).not.toContain('`');
  });

  it('fto: report.docx, read by mammoth, has the recommendation first and each claim chart as a table', async () => {
    const page = pages.get('fto')!;
    const charts = await page.locator('h4', { hasText: /^Claim \d+ \(independent\)/ }).count();
    const { value: word } = await mammoth.convertToHtml({ path: join(folders.get('fto')!, 'report.docx') });
    const headings = [...word.matchAll(/<h2>(.*?)<\/h2>/g)].map((match) => match[1]);
    expect(headings[0]).toBe('Recommendation');
    const tables = [...word.matchAll(/<table>(.*?)<\/table>/gs)].map((match) => match[1]!);
    const claimTables = tables.filter((table) => /<p><strong>Match<\/strong><\/p>/.test(table));
    expect(claimTables.length).toBe(charts);
    for (const table of claimTables)
      expect(table).toMatch(/<td><p>[^<]*(identical|equivalent|different)[^<]*<\/p><\/td>/);
    expect(word).toContain('CN118289111A');
  });

  it('design search: the risk conclusion comes first, with the countries at high and medium risk', async () => {
    const page = pages.get('design-infringement-search')!;
    expect((await sections(page))[0]).toBe('Risk conclusion');
    const risk = await rowsOf(tableAfter(page, 'Risk conclusion'));
    expect(risk.map((row) => row['Risk'])).toEqual(['High', 'Medium']);
    const designs = await rowsOf(tableAfter(page, 'Closest registered designs'));
    const inForce = (level: string) =>
      new Set(designs.filter((row) => row['Risk'] === level).map((row) => row['Jurisdiction']));
    for (const [level, row] of [
      ['High', risk[0]],
      ['Medium', risk[1]],
    ] as const) {
      const countries = row!['Countries']!.split(', ').filter((country) => country !== '—');
      // The countries named are those where a design in force is at that risk (each named once, at its worst).
      for (const country of countries) expect(inForce(level).has(country), `${level} ${country}`).toBe(true);
    }
  });

  it('design search: each reviewed design has its number linked, jurisdiction, legal status, similarity, risk and the image that found it', async () => {
    const page = pages.get('design-infringement-search')!;
    const table = tableAfter(page, 'Closest registered designs');
    const designs = await rowsOf(table);
    expect(designs.length).toBeGreaterThan(2);
    for (const design of designs) {
      expect(design['Jurisdiction'], design['Design']).toMatch(/^(US|EU|CN)$/);
      expect(design['Legal status'], design['Design']).toMatch(/^(Valid|Invalid|Pending)$/);
      expect(design['Similarity'], design['Design']).toMatch(/^\d{1,3}%$/);
      expect(design['Risk'], design['Design']).toMatch(/^(High|Medium|Low)/);
      expect(['front.png', 'side.png'], design['Design']).toContain(design['Found from']);
    }
    const links = await table.locator('tbody tr td:nth-child(2) a').all();
    expect(links.length).toBe(designs.length);
    for (const link of links)
      expect(await link.getAttribute('href')).toMatch(
        /^https:\/\/worldwide\.espacenet\.com\/patent\/search\?q=pn/,
      );
  });

  it('design search: each reviewed design says what it shares, how it differs and how to design around it', async () => {
    const page = pages.get('design-infringement-search')!;
    const reviews = page.locator('h3');
    const count = await reviews.count();
    expect(count).toBe((await rowsOf(tableAfter(page, 'Closest registered designs'))).length);
    for (const review of await reviews.all()) {
      const points = (await review.locator('xpath=following-sibling::ul[1]').textContent()) ?? '';
      for (const label of ['In common:', 'Differences:', 'Design-around:'])
        expect(points, (await review.textContent()) ?? '').toContain(label);
    }
  });

  it('design search: a design not in force says so beside its risk, in the table and its review', async () => {
    const page = pages.get('design-infringement-search')!;
    const designs = await rowsOf(tableAfter(page, 'Closest registered designs'));
    const reviews = (await page.locator('h3').allTextContents()).map((text) => text.trim());
    designs.forEach((design, index) => {
      const lapsed = design['Legal status'] === 'Invalid';
      expect(design['Risk']!.endsWith('(not in force)'), design['Design']).toBe(lapsed);
      expect(reviews[index]!.endsWith(', not in force)'), reviews[index]).toBe(lapsed);
    });
  });

  it('design search: the title names every image searched, and the images are named with type and size, never their bytes', async () => {
    const page = pages.get('design-infringement-search')!;
    expect((await page.locator('h1').textContent())?.trim()).toBe(
      'Design infringement search: front.png and side.png',
    );
    const searched = await sectionText(page, 'What was searched');
    expect(searched).toContain('side.png (PNG, 1 KB, uploaded)');
    expect(searched).toContain('front.png (by URL: https://example.com/products/front.png)');
  });

  it('design search: each image given as data and the platform’s line drawing of each show in the page, in report.md and in report.docx', async () => {
    const page = pages.get('design-infringement-search')!;
    const table = tableAfter(page, 'The product’s images');
    const rows = await rowsOf(table);
    expect(rows.map((row) => [row['Image'], row['As searched']])).toEqual([
      ['front.png', 'by URL'],
      ['side.png', ''],
    ]);
    // Shown from the page itself (opened from disk): nothing is fetched from elsewhere.
    const shown = await table.locator('img').evaluateAll((images) =>
      images.map((image) => {
        const { alt, naturalWidth, src } = image as unknown as {
          alt: string;
          naturalWidth: number;
          src: string;
        };
        return { alt, naturalWidth, data: src.startsWith('data:image/png;base64,') };
      }),
    );
    expect(shown).toEqual([
      { alt: 'Line drawing of front.png', naturalWidth: expect.any(Number), data: true },
      { alt: 'side.png', naturalWidth: 48, data: true },
      { alt: 'Line drawing of side.png', naturalWidth: expect.any(Number), data: true },
    ]);
    for (const image of shown) expect(image.naturalWidth, image.alt).toBeGreaterThan(0);
    expect(await table.locator('a').getAttribute('href')).toBe('https://example.com/products/front.png');
    await table.screenshot({ path: join(artefacts, 'design-infringement-search-images.png') });
    // report.md links the files beside it; each exists and is the image.
    const folder = folders.get('design-infringement-search')!;
    const markdown = readFileSync(join(folder, 'report.md'), 'utf8');
    const linked = [...markdown.matchAll(/!\[([^\]]+)\]\((images\/\d+\.png)\)/g)].map((match) => [
      match[1],
      match[2],
    ]);
    expect(linked.map(([alt]) => alt)).toEqual([
      'Line drawing of front.png',
      'side.png',
      'Line drawing of side.png',
    ]);
    for (const [alt, file] of linked)
      expect(readFileSync(join(folder, file!)).subarray(0, 4).toString('latin1'), alt).toBe('\x89PNG');
    const side = linked.find(([alt]) => alt === 'side.png')![1]!;
    expect(readFileSync(join(folder, side)).equals(PNG)).toBe(true);
    // report.docx, read by mammoth: the pictures with their alt text.
    const { value: word } = await mammoth.convertToHtml({ path: join(folder, 'report.docx') });
    for (const alt of ['Line drawing of front.png', 'side.png', 'Line drawing of side.png'])
      expect(word).toContain(`<img alt="${alt}" src="data:image/png;base64,`);
  });

  it('design 1v1: the conclusion comes first and names the design', async () => {
    const page = pages.get('design-infringement-1v1')!;
    expect((await sections(page))[0]).toBe('Conclusion');
    expect(await sectionText(page, 'Conclusion')).toMatch(/^(High|Medium|Low) risk.*EU0040356240003S/s);
  });

  it('design 1v1: one row per view with similarity, risk and a link to the view; each view says what it shares, how it differs and how to design around it', async () => {
    const page = pages.get('design-infringement-1v1')!;
    const table = tableAfter(page, 'View by view');
    const views = await rowsOf(table);
    expect(views.length).toBeGreaterThanOrEqual(3);
    for (const view of views) {
      expect(view['Similarity']).toMatch(/^\d{1,3}%$/);
      expect(view['Risk']).toMatch(/^(High|Medium|Low)$/);
    }
    for (const link of await table.locator('tbody a').all())
      expect(await link.getAttribute('href')).toMatch(/^https:\/\//);
    const headings = page.locator('h3', { hasText: /^View \d+:/ });
    expect(await headings.count()).toBe(views.length);
    for (const heading of await headings.all()) {
      const points = (await heading.locator('xpath=following-sibling::ul[1]').textContent()) ?? '';
      for (const label of ['In common:', 'Differences:', 'Design-around:']) expect(points).toContain(label);
    }
  });

  it('design 1v1: the product image is named with type and size, and shown', async () => {
    const page = pages.get('design-infringement-1v1')!;
    expect(await sectionText(page, 'What was compared')).toContain('unicorn-float.png (PNG, 1 KB, uploaded)');
    const image = page.locator('img[alt="unicorn-float.png"]');
    expect(
      await image.evaluate((element) => (element as unknown as { naturalWidth: number }).naturalWidth),
    ).toBe(48);
    const folder = folders.get('design-infringement-1v1')!;
    expect(readFileSync(join(folder, 'report.md'), 'utf8')).toContain('![unicorn-float.png](images/1.png)');
    const { value: word } = await mammoth.convertToHtml({ path: join(folder, 'report.docx') });
    expect(word).toContain('<img alt="unicorn-float.png" src="data:image/png;base64,');
  });
});
