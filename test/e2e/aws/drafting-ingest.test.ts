// Specification drafting, feasibility analysis and translation ingested on aws: one manifest naming
// each line's workflow, uploaded under inbox/ (the bucket's notification invokes the bundled ingest
// function), its jobs run by the bundled step workers against the sandbox, each report kept in S3 and
// read back through the API's links, and checked against its guide's checklist: the drafted .docx or
// the assessment PDF linked as the first section and really that file, the translation whole before
// the source text. A line the workflow refuses is named in failed.jsonl; the
// rest run. (ip-workflows.test.ts covers the three through POST /jobs.)

import JSZip from 'jszip';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listAll } from '../../../shared/runtime/job-queries';
import { workflows } from '../../../shared/workflows';
import { type InboxUploads, inboxUploads } from '../../support/inbox-uploads';
import { AwsWorld } from './harness/aws-world';
import { reportOf } from './ip-reports';

const exampleOf = (name: string) => workflows.get(name)!.example!;
const sections = (markdown: string) =>
  markdown
    .split('\n')
    .filter((line) => line.startsWith('## '))
    .map((line) => line.slice(3));

describe('drafting, feasibility and translation ingested on aws (S3 inbox → ingest function → step workers)', () => {
  let world: AwsWorld;
  let inbox: InboxUploads;

  beforeAll(async () => {
    world = await AwsWorld.start({ workers: 2, inbox: true });
    inbox = inboxUploads(world);
  }, 300_000);
  afterAll(async () => {
    await world?.stop();
  });

  it('runs each line’s workflow to SUCCEEDED, its report in S3 leading with what its reader needs', async () => {
    const lines = [
      { id: 'spec', workflow: 'specification-drafting', ...exampleOf('specification-drafting') },
      { id: 'egg', workflow: 'feasibility-analysis', ...exampleOf('feasibility-analysis') },
      { id: 'latch-en', workflow: 'translation', ...exampleOf('translation') },
      { id: 'no-claims', workflow: 'specification-drafting', title: 'Latch', disclosure: 'A latch.' },
    ];
    await inbox.upload(
      'inbox/feasibility-analysis/drafting/drafting.jsonl',
      `${lines.map((line) => JSON.stringify(line)).join('\n')}\n`,
    );
    const batch = await inbox.settleBatch('drafting');
    expect(batch).toMatchObject({ status: 'FINISHED', items: 3, settled: { succeeded: 3, failed: 0 } });
    const failed = Buffer.from(
      (await world.reports.get('batches/drafting/failed.jsonl'))?.body ?? new Uint8Array(),
    )
      .toString('utf8')
      .trim();
    expect(failed).toContain('"no-claims"');
    expect(failed).toContain('claims: the claims are required');

    const jobs = await listAll(world.store, { batchId: 'drafting' });
    expect(jobs.map((job) => `${job.workflow} ${job.status}`).sort()).toEqual([
      'feasibility-analysis SUCCEEDED',
      'specification-drafting SUCCEEDED',
      'translation SUCCEEDED',
    ]);
    for (const job of jobs) {
      const { markdown, result } = await reportOf(world, job.id);
      const what = `${job.workflow} ${job.id}`;
      // The aws world's upstream is a sandbox reached with a key, as a real platform is: nothing
      // tells opflow it is one, so the report is not marked (the local tests check the mark).
      const first = sections(markdown)[0];
      if (job.workflow === 'translation') {
        expect(first, what).toBe('Translation');
        expect(sections(markdown).indexOf('Translation')).toBeLessThan(
          sections(markdown).indexOf('Source text'),
        );
        expect((result.answer as string).split('\n\n').length).toBe(
          (result.input.text as string).split('\n\n').length,
        );
        continue;
      }
      expect(first, what).toBe(
        job.workflow === 'feasibility-analysis' ? 'Assessment' : 'Specification document',
      );
      const file = result.attachments[0].fileName as string;
      expect(markdown, what).toContain(`](attachments/${file})`);
      const links = (await world.api('GET', `/jobs/${job.id}/report`)).body.files as {
        name: string;
        url: string;
      }[];
      const link = links.find((candidate) => candidate.name === `attachments/${file}`);
      expect(link, `${what}: ${links.map((candidate) => candidate.name).join(', ')}`).toBeDefined();
      const bytes = Buffer.from(await (await request(link!.url)).body.arrayBuffer());
      if (job.workflow === 'feasibility-analysis') expect(bytes.subarray(0, 5).toString()).toBe('%PDF-');
      else {
        const xml = await (await JSZip.loadAsync(bytes)).file('word/document.xml')!.async('string');
        expect(xml).toContain(result.input.title);
        expect(markdown).toMatch(/\| 2 \| 1 \| /);
      }
    }
  }, 600_000);
});
