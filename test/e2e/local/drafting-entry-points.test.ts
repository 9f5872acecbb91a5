/**
 * Specification Drafting, Feasibility Analysis and AI Translation through every entry point but
 * `opflow run` (which drafting-workflows-run.test.ts covers), each the real bin against the built-in
 * sandbox: one `opflow serve --mcp` (bearer token, webhook secrets, a config of schedules and webhook
 * mappings) takes POST /jobs, signed webhook deliveries and MCP's submit_job; `opflow schedules
 * trigger` starts each schedule's job; `opflow ingest` takes a manifest naming each line's workflow
 * and a folder of Markdown disclosures. Every job ends SUCCEEDED, from the source it came by, and its
 * report puts first what its reader needs (the checklists of docs/guides/specification-drafting.md,
 * feasibility-analysis.md and translation.md): the drafted .docx or the assessment PDF linked as the
 * first section and really that file, the translation whole before the source text, the sandbox
 * marked above the title.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import JSZip from 'jszip';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EntryPoints, sourceOfEntry, startEntryPoints } from '../../support/entry-points';
import { killRunningOpflows, runOpflow } from './opflow-process';

const claims = [
  '1. A battery latch for a drone, comprising: a spring-loaded pawl engaging a notch of the battery housing; a release lever disengaging the pawl; and a hall sensor detecting the position of the pawl.',
  '2. The battery latch of claim 1, wherein the flight controller refuses to arm the motors while the hall sensor reports the latch open.',
].join('\n');
const disclosure =
  'Technical field: battery mounts of unmanned aerial vehicles. Background: swapping the battery of an inspection drone needs a tool. Solution: a spring-loaded pawl engages a notch in the battery housing; a release lever frees it with one hand.';
const drafting = { title: 'Quick-release drone battery latch', disclosure, claims };
const solution =
  'Wrap each egg in a soft layer of sponge or bubble wrap, held by a paper sleeve, so it survives a fall of one metre.';
const feasibility = { text: solution, title: 'Impact-absorbing egg sleeve' };
/** Long enough to go in two pieces of the AI engine (2,000 characters each). */
const toTranslate = Array.from(
  { length: 5 },
  (_, index) =>
    `Section ${index + 1}. ${'The release lever frees the pawl with one hand, and the hall sensor reports the latch. '.repeat(5).trimEnd()}`,
).join('\n\n');
const translation = { text: toTranslate, title: 'Battery latch', target: 'en' };

const token = 'drafting-entry-points-token-0123456789';
const secret = `whsec_${Buffer.from('drafting-entry-points-secret-32by').toString('base64')}`;

const config = {
  schedules: [
    { name: 'latch-spec', cron: '0 6 * * 1', workflow: 'specification-drafting', input: drafting },
    { name: 'egg-feasibility', cron: '0 6 * * 2', workflow: 'feasibility-analysis', input: feasibility },
    { name: 'latch-translation', cron: '0 6 * * 3', workflow: 'translation', input: translation },
  ],
  webhooks: {
    drafts: {
      workflow: 'specification-drafting',
      input: {
        title: { $from: '/invention/title' },
        disclosure: { $from: '/invention/description' },
        claims: { $from: '/invention/claims' },
      },
      label: { $from: '/invention/docket' },
    },
    ideas: {
      workflow: 'feasibility-analysis',
      input: { text: { $from: '/idea' }, title: { $from: '/name' } },
    },
    documents: {
      workflow: 'translation',
      input: { text: { $from: '/body' }, title: { $from: '/title' }, target: { $from: '/language' } },
    },
  },
};

type Workflow = 'specification-drafting' | 'feasibility-analysis' | 'translation';
const workflowNames: Workflow[] = ['specification-drafting', 'feasibility-analysis', 'translation'];

/** The sections of a report in order (its `## ` headings). */
const sectionsOf = (markdown: string) =>
  markdown
    .split('\n')
    .filter((line) => line.startsWith('## '))
    .map((line) => line.slice(3));

describe('specification drafting, feasibility analysis and translation through every entry point (built-in sandbox)', () => {
  let dir: string;
  let env: NodeJS.ProcessEnv;
  let url: string;
  const started: { via: keyof typeof sourceOfEntry; workflow: Workflow; id: string }[] = [];
  const opflow = (...args: string[]) => runOpflow(args, { env, cwd: dir });
  let entry: EntryPoints;
  const api: EntryPoints['api'] = (...args) => entry.api(...args);
  /** A report file through the job API (GET /jobs/{id}/report/{file}). */
  const reportFile = async (id: string, file: string): Promise<Buffer> => {
    const response = await fetch(`${url}/jobs/${id}/report/${file}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(response.status, `${id} ${file}`).toBe(200);
    return Buffer.from(await response.arrayBuffer());
  };

  /**
   * The report's checklist for its reader: what comes first, and the file it links really is one.
   * Reads through the job API, so the report is what a caller of `opflow serve` gets.
   */
  const checkReport = async (id: string, workflow: Workflow, via: string) => {
    const markdown = (await reportFile(id, 'report.md')).toString('utf8');
    const result = JSON.parse((await reportFile(id, 'result.json')).toString('utf8'));
    const what = `${via} ${workflow} ${id}`;
    const lines = markdown.split('\n');
    // The sandbox is marked above the title, as in every report.
    const title = lines.findIndex((line) => line.startsWith('# '));
    expect(lines.slice(0, title + 3).join('\n'), what).toContain('**Sandbox data: not real publications.**');
    const sections = sectionsOf(markdown);
    if (workflow === 'specification-drafting') {
      expect(lines[title], what).toMatch(/^# Specification: /);
      // The specification document comes first, linked (a schedule's run then says what changed
      // since its previous run); then every claim with its dependency.
      expect(sections[0], what).toBe('Specification document');
      expect(sections.filter((name) => name !== 'Changes since the previous run').slice(0, 2), what).toEqual([
        'Specification document',
        'Claims as drafted',
      ]);
      const docx = result.attachments[0].fileName as string;
      expect(docx, what).toMatch(/^specification-\w+\.docx$/);
      expect(markdown, what).toContain(`](attachments/${docx})`);
      expect(markdown, what).toMatch(/\| 1 \| independent \| /);
      expect(markdown, what).toMatch(/\| 2 \| 1 \| /);
      const zip = await JSZip.loadAsync(await reportFile(id, `attachments/${docx}`));
      const xml = await zip.file('word/document.xml')!.async('string');
      // The drafted document holds the title and the claims as sent.
      expect(xml, what).toContain(result.input.title);
      const claim1 = /^1\. (.*?) comprising/.exec(result.input.claims as string)![1]!;
      expect(xml, what).toContain(claim1);
    } else if (workflow === 'feasibility-analysis') {
      expect(lines[title], what).toMatch(/^# Feasibility analysis: /);
      expect(sections[0], what).toBe('Assessment');
      expect(sections.indexOf('Assessment'), what).toBeLessThan(sections.indexOf('Solution assessed'));
      const pdf = result.attachments[0].fileName as string;
      expect(markdown, what).toContain(`](attachments/${pdf})`);
      expect((await reportFile(id, `attachments/${pdf}`)).subarray(0, 5).toString(), what).toBe('%PDF-');
      // The solution is shown as it was sent.
      expect(markdown, what).toContain(result.input.text);
    } else {
      expect(lines[title], what).toMatch(/^# Translation \((detected|[a-z]{2}) → en\): /);
      expect(sections[0], what).toBe('Translation');
      expect(sections.indexOf('Translation'), what).toBeLessThan(sections.indexOf('Source text'));
      // The translation is whole: one paragraph for each of the source's, from both pieces.
      expect(Object.keys(result.steps), what).toEqual(['piece-1', 'piece-2']);
      expect((result.answer as string).split('\n\n').length, what).toBe(
        (result.input.text as string).split('\n\n').length,
      );
    }
  };

  beforeAll(async () => {
    entry = await startEntryPoints({ prefix: 'opflow-e2e-drafting-entry-', config, token, secret });
    ({ dir, env, url } = entry);
  }, 120_000);

  afterAll(() => {
    killRunningOpflows();
    rmSync(dir, { recursive: true, force: true });
  });

  it('the job API (POST /jobs) takes each; a bad input is refused naming the field', async () => {
    for (const [workflow, input] of [
      ['specification-drafting', drafting],
      ['feasibility-analysis', feasibility],
      ['translation', translation],
    ] as const) {
      const answer = await api('POST', '/jobs', { workflow, input });
      expect(answer.status, JSON.stringify(answer.body)).toBe(201);
      started.push({ via: 'api', workflow, id: answer.body.job.id });
    }
    const unnumbered = await api('POST', '/jobs', {
      workflow: 'specification-drafting',
      input: { ...drafting, claims: 'A battery latch.' },
    });
    expect(unnumbered.status).toBe(400);
    expect(unnumbered.body.error.message).toContain('claims: number the claims, starting with "1."');
    const hiro = await api('POST', '/jobs', {
      workflow: 'translation',
      input: { text: 'Ein Akku.', target: 'fr' },
    });
    expect(hiro.status).toBe(400);
    expect(hiro.body.error.message).toContain('source: the hiro engine needs the source language');
  }, 60_000);

  it('signed webhook deliveries become jobs through their mappings', async () => {
    const deliveries: [string, Workflow, unknown][] = [
      [
        'drafts',
        'specification-drafting',
        { invention: { docket: 'DRN-2026-014', title: drafting.title, description: disclosure, claims } },
      ],
      ['ideas', 'feasibility-analysis', { idea: solution, name: 'Egg sleeve' }],
      ['documents', 'translation', { body: toTranslate, title: 'Latch (webhook)', language: 'en' }],
    ];
    for (const [index, [source, workflow, payload]] of deliveries.entries()) {
      const answer = await entry.deliver(source, `msg_drafting_${index}`, payload);
      expect(answer.status, JSON.stringify(answer.body)).toBe(202);
      started.push({ via: 'webhook', workflow, id: answer.body.jobId });
    }
  }, 60_000);

  it('MCP lists the three with their input schemas, and submit_job starts them', async () => {
    await entry.withMcp(async (client) => {
      const listed = (await client.callTool({ name: 'list_workflows', arguments: {} })) as CallToolResult;
      const { workflows } = listed.structuredContent as {
        workflows: { name: string; inputSchema: { required?: string[] } }[];
      };
      const required = Object.fromEntries(
        workflows.map((workflow) => [workflow.name, workflow.inputSchema.required ?? []]),
      );
      expect(required['specification-drafting']).toEqual(
        expect.arrayContaining(['disclosure', 'claims', 'title']),
      );
      expect(required['feasibility-analysis']).toEqual(['text']);
      expect(required.translation).toEqual(['text']);
      for (const [workflow, input] of [
        ['specification-drafting', drafting],
        ['feasibility-analysis', feasibility],
        ['translation', translation],
      ] as const) {
        const answer = await entry.submitJob(client, workflow, input);
        expect(answer.isError, answer.text).toBe(false);
        started.push({ via: 'mcp', workflow, id: answer.jobId });
      }
    });
  }, 60_000);

  it('opflow schedules trigger starts each schedule’s job, which opflow serve runs', async () => {
    const listed = await opflow('schedules', '--json');
    expect(listed.code, listed.stderr).toBe(0);
    for (const { name } of config.schedules) expect(listed.stdout).toContain(name);
    for (const { name, workflow } of config.schedules) {
      const run = await opflow('schedules', 'trigger', name, '--json');
      expect(run.code, run.stderr).toBe(0);
      started.push({ via: 'schedule', workflow: workflow as Workflow, id: JSON.parse(run.stdout).jobId });
    }
    // Four CLI processes: each starts in seconds, more on a loaded machine.
  }, 150_000);

  it('every job so started ends SUCCEEDED, by its source, its report leading with what its reader needs', async () => {
    const { done, pending } = await entry.settle(started, 150_000);
    expect(pending).toEqual([]);
    expect(
      done.map((job) => `${job.workflow} ${job.status} ${job.lastError?.message ?? ''}`.trim()).sort(),
    ).toEqual(started.map((job) => `${job.workflow} SUCCEEDED`).sort());
    expect(started.map((job) => job.workflow).sort()).toEqual(
      workflowNames.flatMap((name) => [name, name, name, name]).sort(),
    );
    for (const { via, id, workflow } of started) {
      const job = done.find((item) => item.id === id)!;
      expect(job.source, `${via} ${workflow}`).toBe(sourceOfEntry[via]);
      await checkReport(id, workflow, via);
    }
    const fromWebhook = done.find(
      (job) => job.workflow === 'specification-drafting' && job.source === 'webhook',
    );
    expect(fromWebhook?.label).toBe('DRN-2026-014');
  }, 180_000);

  it('opflow ingest takes a manifest naming each line’s workflow, and a folder of disclosures', async () => {
    const manifest = join(dir, 'drafting.jsonl');
    writeFileSync(
      manifest,
      [
        { id: 'latch-spec', workflow: 'specification-drafting', ...drafting },
        { id: 'egg', workflow: 'feasibility-analysis', ...feasibility },
        { id: 'latch-en', workflow: 'translation', ...translation },
        { id: 'no-claims', workflow: 'specification-drafting', title: 'Latch', disclosure },
      ]
        .map((line) => JSON.stringify(line))
        .join('\n'),
    );
    const fromManifest = await opflow('ingest', manifest, '--workflow', 'feasibility-analysis', '--json');
    const manifestAnswer = JSON.parse(fromManifest.stdout);
    expect(manifestAnswer.problems).toMatchObject([{ position: 'line 4', id: 'no-claims' }]);
    expect(manifestAnswer.problems[0].reason).toContain('claims: the claims are required');
    const manifestRows = readFileSync(
      join(dir, 'out', 'batches', manifestAnswer.batch.id, 'results.jsonl'),
      'utf8',
    )
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { id: string; status: string; job_id: string; workflow?: string });
    expect(manifestAnswer.batch.totals, JSON.stringify(manifestRows)).toMatchObject({
      succeeded: 3,
      failed: 0,
    });
    expect(manifestRows.map((row) => [row.id, row.status]).sort()).toEqual([
      ['egg', 'SUCCEEDED'],
      ['latch-en', 'SUCCEEDED'],
      ['latch-spec', 'SUCCEEDED'],
    ]);
    const workflowOf: Record<string, Workflow> = {
      egg: 'feasibility-analysis',
      'latch-en': 'translation',
      'latch-spec': 'specification-drafting',
    };
    for (const row of manifestRows) await checkReport(row.job_id, workflowOf[row.id]!, 'ingest manifest');

    // A folder of Markdown disclosure forms: each form's Claims section is its claims; the docket id
    // labels the job; a form without claims is named, the rest still run.
    mkdirSync(join(dir, 'forms'), { recursive: true });
    writeFileSync(
      join(dir, 'forms', 'latch.md'),
      `# Quick-release drone battery latch\n\nDocket: DRN-2026-021\nInventors: Jane Roe\n\n${disclosure}\n\n## Claims\n${claims}\n`,
    );
    writeFileSync(
      join(dir, 'forms', 'hinge.md'),
      `# Folding helmet hinge\n\nDocket: DRN-2026-022\n\nSix rigid shell segments joined by textile hinges fold flat.\n\n## Claims\n1. A helmet comprising six rigid shell segments; and textile hinges joining them.\n2. The helmet of claim 1, wherein a magnetic buckle locks the segments open.\n`,
    );
    writeFileSync(join(dir, 'forms', 'idea.md'), '# A loose idea\n\nA helmet that folds, somehow.\n');
    const fromFolder = await opflow(
      'ingest',
      join(dir, 'forms'),
      '--workflow',
      'specification-drafting',
      '--json',
    );
    const folderAnswer = JSON.parse(fromFolder.stdout);
    expect(folderAnswer.batch.totals, fromFolder.stderr).toMatchObject({ succeeded: 2, failed: 0 });
    expect(folderAnswer.problems).toMatchObject([{ id: 'idea.md' }]);
    expect(folderAnswer.problems[0].reason).toContain('claims');
    const folderRows = readFileSync(
      join(dir, 'out', 'batches', folderAnswer.batch.id, 'results.jsonl'),
      'utf8',
    )
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { id: string; status: string; job_id: string });
    expect(folderRows.map((row) => [row.id, row.status]).sort()).toEqual([
      ['hinge.md', 'SUCCEEDED'],
      ['latch.md', 'SUCCEEDED'],
    ]);
    for (const row of folderRows) {
      await checkReport(row.job_id, 'specification-drafting', 'ingest folder');
      const { body } = await api('GET', `/jobs/${row.job_id}`);
      expect(body.job.label).toMatch(/^DRN-2026-02[12] · /);
      const result = JSON.parse((await reportFile(row.job_id, 'result.json')).toString('utf8'));
      expect(JSON.stringify(result.input)).not.toContain('Jane Roe');
    }
  }, 240_000);
});
