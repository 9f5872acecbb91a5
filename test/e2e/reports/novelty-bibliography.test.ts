/**
 * The novelty check's references with their bibliographic data (p011), legal status (p041) and
 * family (p014), through the real bin against
 * a sandbox on its own port: the listing says what the call costs and that it may fail; by default
 * one p011 call names every reference and the report's table shows what it answered (publication
 * number with a link, title, assignee, dates); a key without the Patent Basic Data group makes the
 * calls fail (403), and the job still succeeds with a report that says the data is missing and why;
 * `bibliography: false` and `legalData: false` make no call and say so.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLocalDatabase } from '../../../shared/backends/local/database';
import { SqliteJobHistory } from '../../../shared/backends/local/sqlite-job-history';
import { allOperations } from '../../../shared/openplatform';
import { scaledTaskDurations } from '../../../shared/runtime/local/sandbox-launch';
import { type Sandbox, startSandbox } from '../../../shared/sandbox';
import { workflows } from '../../../shared/workflows';

const workflowExamples = Object.fromEntries(
  [...workflows].map(([name, workflow]) => [name, workflow.example]),
);

import { childEnv, killRunningOpflows, runOpflow } from '../local/opflow-process';

const speed = 300;
const FULL_KEY = 'sk-opflow-bibliography-full-0000';
const NO_BIBLIO_KEY = 'sk-opflow-bibliography-none-000';
const groups = [...new Set(allOperations().map((row) => row.group))];

interface Bibliography {
  pn: string;
  patent_id: string;
  bibliographic_data: {
    invention_title: { lang: string; text: string }[];
    parties: { assignees: { name: string }[] };
    application_reference: { date: number };
    publication_reference: { date: number };
  };
}
interface Result {
  usage: { calls: number; failedCalls: number };
  steps: { [step: string]: unknown };
}

const day = (date: number) => {
  const text = String(date);
  return `${text.slice(0, 4)}-${text.slice(4, 6)}-${text.slice(6)}`;
};

describe('novelty-check: the references’ bibliographic data (p011)', () => {
  let sandbox: Sandbox;
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'opflow-e2e-biblio-'));
    sandbox = await startSandbox({
      port: 0,
      keys: [
        { key: FULL_KEY },
        { key: NO_BIBLIO_KEY, groups: groups.filter((group) => group !== 'Patent Basic Data') },
      ],
      taskDurations: scaledTaskDurations(speed),
      defaultTaskDuration: { meanMs: 10_000 / speed, spreadMs: 5_000 / speed },
    });
  });
  afterAll(async () => {
    killRunningOpflows();
    await sandbox?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** One `opflow run novelty-check` with its own database and input; the job, result.json and report.md. */
  async function run(name: string, key: string, input: object) {
    const env = childEnv({
      OPFLOW_BASE_URL: sandbox.url,
      OPFLOW_API_KEY: key,
      OPFLOW_SANDBOX_SPEED: String(speed),
      OPFLOW_DB: join(dir, `${name}.db`),
      OPFLOW_OUT: join(dir, name),
    });
    const file = join(dir, `${name}.json`);
    writeFileSync(file, JSON.stringify(input));
    const before = sandbox.ledger.entries().length;
    const done = await runOpflow(['run', 'novelty-check', file, '--json'], {
      env,
      cwd: dir,
    });
    expect(done.code, done.stderr).toBe(0);
    const [job] = (JSON.parse(done.stdout) as { jobs: { id: string; status: string }[] }).jobs;
    const folder = join(dir, name, job!.id);
    return {
      job: job!,
      result: JSON.parse(readFileSync(join(folder, 'result.json'), 'utf8')) as Result,
      markdown: readFileSync(join(folder, 'report.md'), 'utf8'),
      calls: sandbox.ledger.entries().slice(before),
    };
  }

  it('lists the call, what it costs and that its failure does not fail the job', async () => {
    const env = childEnv({ OPFLOW_DB: join(dir, 'listing.db') });
    const listed = await runOpflow(['workflows', 'novelty-check', '--json'], { env, cwd: dir });
    expect(listed.code, listed.stderr).toBe(0);
    const doc = JSON.parse(listed.stdout) as {
      fields: { name: string; type: string; default?: unknown }[];
      steps: { name: string; ref?: string; optional?: boolean; note?: string }[];
    };
    expect(doc.fields.find((field) => field.name === 'bibliography')).toMatchObject({
      type: 'boolean',
      default: true,
    });
    const step = doc.steps.find((candidate) => candidate.name === 'bibliography');
    expect(step).toMatchObject({ ref: 'p011', optional: true });
    expect(step?.note).toMatch(/one call for all references; left out with "bibliography": false/);
    const text = await runOpflow(['workflows', 'novelty-check'], { env, cwd: dir });
    expect(text.stdout).toMatch(
      /bibliographic data of the references {2}\(p011, p011BasicPatentDataSimpleBibliography\)\n {6}optional: one call/,
    );
  }, 60_000);

  it('shows each reference’s publication number, title, assignee and dates, from one p011 call', async () => {
    const { job, result, markdown, calls } = await run('full', FULL_KEY, workflowExamples['novelty-check']!);
    expect(job.status).toBe('SUCCEEDED');
    const p011 = calls.filter((call) => call.operationId === 'p011BasicPatentDataSimpleBibliography');
    expect(p011).toHaveLength(1);
    expect(p011[0]).toMatchObject({ httpStatus: 200, errorCode: 0 });

    const found = (result.steps['agent-result'] as { final_result: { patent_id: string }[] }).final_result;
    const records = result.steps['bibliography'] as Bibliography[];
    expect(records.map((record) => record.pn).sort()).toEqual(found.map((doc) => doc.patent_id).sort());
    found.forEach((doc, index) => {
      const record = records.find((candidate) => candidate.pn === doc.patent_id)!;
      const data = record.bibliographic_data;
      const row = markdown.split('\n').find((line) => line.startsWith(`| D${index + 1} | [`));
      expect(row, `D${index + 1}`).toContain(
        `| D${index + 1} | [${record.pn}](https://worldwide.espacenet.com/patent/search?q=pn%3D${record.pn}) | ${
          data.invention_title[0]!.text
        } | ${data.parties.assignees[0]!.name} | ${day(data.publication_reference.date)} | ${day(
          data.application_reference.date,
        )} |`,
      );
      expect(markdown).toContain(`### D${index + 1} · ${record.pn} · ${data.invention_title[0]!.text}`);
    });
    expect(markdown).not.toMatch(/Bibliographic data (is missing|was not)/);

    // Legal status and family: one call each for all references, in the table and each detail.
    for (const operation of ['p041BasicPatentDataSimpleLegalStatus', 'p014BasicPatentDataPatentFamily'])
      expect(calls.filter((call) => call.operationId === operation)).toHaveLength(1);
    const statuses = result.steps['legal-status'] as { pn: string; simple_legal_status: string[] }[];
    const families = result.steps['family'] as {
      pn: string;
      patent_family: { simple_family: { country: string }[] };
    }[];
    expect(statuses.map((status) => status.pn).sort()).toEqual(found.map((doc) => doc.patent_id).sort());
    found.forEach((doc, index) => {
      const status = statuses.find((candidate) => candidate.pn === doc.patent_id)!.simple_legal_status[0]!;
      const members = families.find((candidate) => candidate.pn === doc.patent_id)!.patent_family
        .simple_family;
      const countries = [...new Set(members.map((member) => member.country))].join(', ');
      const row = markdown.split('\n').find((line) => line.startsWith(`| D${index + 1} | [`));
      expect(row, `D${index + 1}`).toContain(`| ${status} | ${members.length} members: ${countries} |`);
      expect(markdown).toMatch(new RegExp(`legal status ${status} · family of ${members.length} members`));
    });
    expect(markdown).not.toMatch(/(Legal status|Family data) (is missing|was not)/);
  }, 180_000);

  it('finishes the job when p011 fails, and the report says the data is missing and why', async () => {
    const { job, result, markdown, calls } = await run('refused', NO_BIBLIO_KEY, {
      ...workflowExamples['novelty-check']!,
    });
    expect(job.status).toBe('SUCCEEDED');
    const p011 = calls.filter((call) => call.operationId === 'p011BasicPatentDataSimpleBibliography');
    // A 403 is not retried: one call, counted as failed.
    expect(p011.map((call) => call.httpStatus)).toEqual([403]);
    // The legal-status and family calls are of the same group: one refused call each, the job goes on.
    for (const operation of ['p041BasicPatentDataSimpleLegalStatus', 'p014BasicPatentDataPatentFamily'])
      expect(calls.filter((call) => call.operationId === operation).map((call) => call.httpStatus)).toEqual([
        403,
      ]);
    expect(result.usage.failedCalls).toBe(3);
    expect(result.steps['bibliography']).toBeUndefined();
    expect(result.steps['legal-status']).toBeUndefined();
    expect(markdown).toMatch(
      /\*\*Legal status is missing:\*\* the legal-status \(p041\) call failed: .*HTTP 403/,
    );
    expect(markdown).toMatch(/\*\*Family data is missing:\*\* the patent-family \(p014\) call failed: /);
    const note = markdown.split('\n').find((line) => line.startsWith('**Bibliographic data is missing:**'));
    expect(note).toMatch(/^\*\*Bibliographic data is missing:\*\* the bibliographic call \(p011\) failed: /);
    // Why, as the platform said it, with the status and code a support request needs.
    expect(note).toContain("no permission: the key may not call group 'Patent Basic Data' (p011)");
    expect(note).toMatch(/HTTP 403, code 67200004/);
    expect(note).toMatch(
      /So the table shows the platform’s patent ids, .*; the rest of the check is complete\.$/,
    );
    expect(note).not.toContain(NO_BIBLIO_KEY);
    // The rest of the report is whole: the conclusion, the matrix, every reference by its id.
    expect(markdown).toContain('## Conclusion');
    const found = (result.steps['agent-result'] as { final_result: { patent_id: string }[] }).final_result;
    found.forEach((doc, index) => {
      expect(markdown).toContain(`| D${index + 1} | [${doc.patent_id}](https://worldwide.espacenet.com/`);
    });
    expect(calls.map((call) => call.operationId)).toContain('ai35-11ReportGet');
  }, 180_000);

  it('makes no p041 or p014 call with "legalData": false when p011 fails, and the history says why', async () => {
    const { job, markdown, calls } = await run('refused-no-legal', NO_BIBLIO_KEY, {
      ...workflowExamples['novelty-check']!,
      bibliography: true,
      legalData: false,
    });
    expect(job.status).toBe('SUCCEEDED');
    const operations = calls.map((call) => call.operationId);
    expect(calls.filter((call) => call.operationId === 'p011BasicPatentDataSimpleBibliography')).toHaveLength(
      1,
    );
    expect(operations).not.toContain('p041BasicPatentDataSimpleLegalStatus');
    expect(operations).not.toContain('p014BasicPatentDataPatentFamily');
    expect(operations).toContain('ai35-11ReportGet');
    expect(markdown).toContain('Legal status was not asked for (`legalData: false`).');
    const db = openLocalDatabase(join(dir, 'refused-no-legal.db'));
    try {
      const events = await new SqliteJobHistory(db).list(job.id);
      const skipped = events.flatMap((event) => event.skipped ?? []);
      expect(skipped).toEqual([
        { step: 'bibliography', reason: expect.stringMatching(/HTTP 403/) },
        { step: 'legal-status', reason: '"legalData" is false' },
        { step: 'family', reason: '"legalData" is false' },
      ]);
    } finally {
      db.close();
    }
  }, 180_000);

  it('makes no p011 call with "bibliography": false, and says so', async () => {
    const { job, markdown, calls } = await run('off', FULL_KEY, {
      ...workflowExamples['novelty-check']!,
      bibliography: false,
    });
    expect(job.status).toBe('SUCCEEDED');
    expect(calls.map((call) => call.operationId)).not.toContain('p011BasicPatentDataSimpleBibliography');
    expect(markdown).toContain('Bibliographic data was not asked for (`bibliography: false`)');
  }, 180_000);

  it('makes no p041 or p014 call with "legalData": false, and says so', async () => {
    const { job, markdown, calls } = await run('no-legal', FULL_KEY, {
      ...workflowExamples['novelty-check']!,
      legalData: false,
    });
    expect(job.status).toBe('SUCCEEDED');
    const operations = calls.map((call) => call.operationId);
    expect(operations).toContain('p011BasicPatentDataSimpleBibliography');
    expect(operations).not.toContain('p041BasicPatentDataSimpleLegalStatus');
    expect(operations).not.toContain('p014BasicPatentDataPatentFamily');
    expect(markdown).toContain('Legal status was not asked for (`legalData: false`).');
  }, 180_000);
});
