/**
 * Each workflow's report as a user gets it: a real `opflow run <workflow> <input> --json` against
 * the built-in sandbox, then report.md, result.json and report.html read back. What the reader needs
 * first comes first (the workflow's verdict, answer or key figures, then the cost, then the detail),
 * the cost line agrees with result.json's usage, and the HTML page is looked at in Debian's chromium
 * (desktop and phone widths; screenshots kept in test-artifacts/reports/). The novelty check's report
 * document (a sandbox PDF) is parsed back with unpdf and keeps its Unicode text.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { type Browser, chromium, type Page } from 'playwright-core';
import { extractText } from 'unpdf';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workflows } from '../../../shared/workflows';

const workflowExamples = Object.fromEntries(
  [...workflows].map(([name, workflow]) => [name, workflow.example]),
);

import { childEnv, killRunningOpflows, repoRoot, runOpflow } from '../local/opflow-process';

interface JobSummary {
  id: string;
  status: string;
  workflow: string;
  report?: string;
}

interface Usage {
  calls: number;
  failedCalls: number;
  billedUnits: number;
  taskCost?: number;
}

const chromiumPath = process.env.OPFLOW_CHROMIUM ?? '/usr/bin/chromium';
const artefacts = join(repoRoot, 'test-artifacts', 'reports');
const UNICODE = 'cycles 100–500 at −20 °C, “Müller” façade';

/**
 * Per workflow: its input (the shipped example; novelty-check's with Unicode text) and the first
 * section of its report, the answer a reader looks for (or, for patent-count, the count is the lead).
 */
const cases: { workflow: string; input: Record<string, unknown>; firstSection?: RegExp; lead?: RegExp }[] = [
  {
    workflow: 'novelty-check',
    input: {
      ...workflowExamples['novelty-check'],
      text: `${workflowExamples['novelty-check']!['text']} It survives ${UNICODE}.`,
    },
    firstSection: /^Conclusion$/,
  },
  {
    workflow: 'technical-disclosure',
    input: workflowExamples['technical-disclosure']!,
    firstSection: /^Disclosure document$/,
    lead: /mechanism: /,
  },
  {
    workflow: 'find-solution',
    input: workflowExamples['find-solution']!,
    firstSection: /^Final solution: /,
    lead: /solution nodes? from/,
  },
  {
    workflow: 'materials-find-solution',
    input: workflowExamples['materials-find-solution']!,
    firstSection: /^Mind map: /,
    lead: /mind-map nodes?, 0 detailed/,
  },
  {
    workflow: 'pre-research-report',
    input: workflowExamples['pre-research-report']!,
    firstSection: /^Key players$/,
    lead: /key players?, \d+ key patents?/,
  },
  {
    workflow: 'encyclopedia-qa',
    input: workflowExamples['encyclopedia-qa']!,
    firstSection: /^Answer$/,
    lead: /^Answer of [\d,]+ characters with \d+ references?$/,
  },
  {
    workflow: 'llm-chat',
    input: workflowExamples['llm-chat']!,
    firstSection: /^Answer$/,
    lead: /^ai50: answer of [\d,]+ characters/,
  },
  {
    workflow: 'patent-count',
    input: workflowExamples['patent-count']!,
    firstSection: /^Query$/,
    lead: /^\*\*[\d,]+\*\* patents? match(es)? the query\.$/,
  },
];

/** The text between the title and the first "## " heading, without blank lines. */
function leadOf(markdown: string): string[] {
  const lines = markdown.split('\n');
  const title = lines.findIndex((line) => line.startsWith('# '));
  const section = lines.findIndex((line, index) => index > title && line.startsWith('## '));
  return lines.slice(title + 1, section < 0 ? undefined : section).filter((line) => line.trim() !== '');
}

const expectedCost = (usage: Usage) =>
  `**Cost:** ${usage.calls.toLocaleString('en-US')} ${usage.calls === 1 ? 'call' : 'calls'}${
    usage.failedCalls > 0 ? ` (${usage.failedCalls} failed)` : ''
  } · ${usage.billedUnits.toLocaleString('en-US')} ${usage.billedUnits === 1 ? 'unit' : 'units'} billed`;

describe('each workflow’s report, through opflow run', () => {
  let dir: string;
  let env: NodeJS.ProcessEnv;
  let browser: Browser;
  const jobs = new Map<string, JobSummary>();
  const out = (job: JobSummary, file: string) => join(dir, 'opflow-out', job.id, file);

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'opflow-e2e-reports-'));
    env = childEnv({ OPFLOW_SANDBOX_SPEED: '300' });
    mkdirSync(artefacts, { recursive: true });
    // One run per workflow, one after the other (each a real process with the built-in sandbox).
    for (const { workflow, input } of cases) {
      const file = join(dir, `${workflow}.json`);
      writeFileSync(file, JSON.stringify(input));
      const result = await runOpflow(['run', workflow, file, '--json'], { env, cwd: dir });
      expect(result.code, `${workflow}: ${result.stderr}`).toBe(0);
      const [job] = (JSON.parse(result.stdout) as { jobs: JobSummary[] }).jobs;
      expect(job, workflow).toMatchObject({ workflow, status: 'SUCCEEDED' });
      jobs.set(workflow, job!);
    }
    browser = await chromium.launch({
      executablePath: chromiumPath,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
    });
  }, 600_000);

  afterAll(async () => {
    killRunningOpflows();
    await browser?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  describe.each(cases)('$workflow', ({ workflow, firstSection, lead }) => {
    it('puts the answer first, then the cost as result.json counts it, then the detail', () => {
      const job = jobs.get(workflow)!;
      const markdown = readFileSync(out(job, 'report.md'), 'utf8');
      const result = JSON.parse(readFileSync(out(job, 'result.json'), 'utf8')) as { usage: Usage };
      expect(result.usage.calls).toBeGreaterThan(0);
      // A report without lead text (the novelty check) opens with its verdict section, the cost under it.
      const top = leadOf(workflow === 'novelty-check' ? markdown.replace(/^## Conclusion$/m, '') : markdown);
      // The cost line is the last line of the lead, under the workflow's verdict or key figures.
      expect(top.at(-1)).toMatch(
        new RegExp(`^${expectedCost(result.usage).replace(/[*.()]/g, '\\$&')}( · platform task_cost .+)?$`),
      );
      if (lead)
        expect(
          top.slice(0, -1).some((line) => lead.test(line)),
          top.join('\n'),
        ).toBe(true);
      const sections = markdown
        .split('\n')
        .filter((line) => line.startsWith('## '))
        .map((line) => line.slice(3));
      if (firstSection) expect(sections[0]).toMatch(firstSection);
      // Every report ends with the cost table and the job's facts.
      expect(sections.slice(-2)).toEqual(['Cost', 'Job']);
    });

    it('reads well in chromium, on a desktop and on a phone', async () => {
      const job = jobs.get(workflow)!;
      const page: Page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
      try {
        await page.goto(pathToFileURL(out(job, 'report.html')).href);
        const cost = page.locator('p', { hasText: /^Cost: \d/ });
        await expect(cost.count()).resolves.toBe(1);
        // The cost is seen without scrolling, with the answer above it.
        const box = await cost.boundingBox();
        expect(box!.y + box!.height).toBeLessThan(900);
        await page.screenshot({ path: join(artefacts, `${workflow}.png`), fullPage: true });

        await page.setViewportSize({ width: 390, height: 844 });
        // Nothing but a table's own scroll box is wider than the phone.
        const overflow = await page
          .locator('html')
          .evaluate(
            (html: { scrollWidth: number; clientWidth: number }) => html.scrollWidth - html.clientWidth,
          );
        expect(overflow).toBeLessThanOrEqual(0);
        await page.screenshot({ path: join(artefacts, `${workflow}-phone.png`), fullPage: false });
      } finally {
        await page.close();
      }
    }, 120_000);
  });

  it('keeps Unicode text in the novelty check’s report document (a sandbox PDF)', async () => {
    const job = jobs.get('novelty-check')!;
    const result = JSON.parse(readFileSync(out(job, 'result.json'), 'utf8')) as {
      attachments: { fileName: string; contentType: string }[];
    };
    const pdf = result.attachments.find((attachment) => attachment.contentType === 'application/pdf');
    expect(pdf, JSON.stringify(result.attachments)).toBeDefined();
    const bytes = new Uint8Array(readFileSync(out(job, join('attachments', pdf!.fileName))));
    const { text } = await extractText(bytes, { mergePages: true });
    expect(text.replace(/\s+/g, ' ')).toContain(UNICODE);
  });
});
