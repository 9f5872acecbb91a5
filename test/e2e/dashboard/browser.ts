/**
 * The browser side of the dashboard's tests: Debian's chromium through playwright-core, a page set
 * up the same way for each suite, axe-core's WCAG 2 A/AA rules run inside it, and screenshots kept
 * as test artefacts in test-artifacts/dashboard/.
 */
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { repoRoot } from '../local/opflow-process';
import { childEnv, startServe } from '../local/serve-process';

const chromiumPath = process.env.OPFLOW_CHROMIUM ?? '/usr/bin/chromium';
export const artefacts = join(repoRoot, 'test-artifacts', 'dashboard');
/** axe-core, the accessibility rules engine. */
const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

interface AxeResults {
  violations: { id: string; help: string; nodes: { target: string[] }[] }[];
}

/** A headless chromium and one page of 1280 × 900 that accepts the page's confirm dialogs. */
export async function openBrowser(): Promise<{ browser: Browser; page: Page }> {
  if (!existsSync(chromiumPath)) {
    throw new Error(`no chromium at ${chromiumPath}: apt-get install -y chromium (.ci/run does it)`);
  }
  mkdirSync(artefacts, { recursive: true });
  const browser = await chromium.launch({
    executablePath: chromiumPath,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  page.setDefaultTimeout(45_000);
  page.on('dialog', (dialog) => void dialog.accept());
  return { browser, page };
}

/** What axe finds wrong on the page as it is now (frames included), one line a rule; '' if nothing. */
export async function accessibilityProblems(page: Page): Promise<string> {
  await page.evaluate(axeSource);
  const results = (await page.evaluate(
    "axe.run(document, { runOnly: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] })",
  )) as AxeResults;
  return results.violations
    .map(
      (violation) =>
        `${violation.id}: ${violation.help} (${violation.nodes.map((node) => node.target.join(' ')).join(', ')})`,
    )
    .join('\n');
}

/** A full-page screenshot kept as `<name>.png`. */
export function screenshot(page: Page, name: string): Promise<Buffer> {
  return page.screenshot({ path: join(artefacts, `${name}.png`), fullPage: true });
}

/** The job API of the server at `url()`, called as a script would, with the token: its JSON answer. */
export function jobApiClient(url: () => string, token: string) {
  return async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const response = await fetch(`${url()}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return (await response.json()) as T;
  };
}

/**
 * The real `opflow serve` in `dir` on the built-in sandbox (at `env`'s speed, 100 unless set), with
 * `token` as its server token, and a browser page signed in to its dashboard on the jobs list.
 */
export async function servedDashboard(
  dir: string,
  token: string,
  env: Record<string, string> = {},
): Promise<{ url: string; browser: Browser; page: Page }> {
  const { url } = await startServe([], {
    cwd: dir,
    env: childEnv({
      OPFLOW_SANDBOX_SPEED: '100',
      OPFLOW_DB: join(dir, 'state', 'jobs.db'),
      OPFLOW_OUT: join(dir, 'reports'),
      OPFLOW_SERVE_TOKEN: token,
      ...env,
    }),
  });
  const { browser, page } = await openBrowser();
  await page.goto(`${url}/`);
  await page.getByLabel('Server token').fill(token);
  await page.keyboard.press('Enter');
  await page.getByRole('heading', { name: 'Jobs' }).waitFor();
  return { url, browser, page };
}
