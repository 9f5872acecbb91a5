import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JobRequestError } from '../../../shared/engine';
import { noveltyCheck } from '../../../shared/workflows';
import { callSequence, lastSeq, offered, startWorld, type World } from './world';

const file = join(__dirname, '../../../examples/disclosures/self-cleaning-solar-panel-coating.md');
const input = noveltyCheck.fromText!(readFileSync(file, 'utf8'), file) as { text: string; title: string };

describe('novelty-check against the sandbox', () => {
  let world: World;
  beforeAll(async () => {
    world = await startWorld();
  });
  afterAll(() => world.close());

  it('auto: takes the preselected features and reports summary, features, elements, references and the PDF', async () => {
    const started = world.clock.now();
    const before = lastSeq(world);
    const job = await world.run('novelty-check', input);
    expect(job.status, JSON.stringify(job.lastError)).toBe('SUCCEEDED');
    // ai35-9 is not a step; polled operations appear once; p011, p041 and p014 are the references'
    // bibliographic data, legal status and family
    expect(callSequence(world, before)).toEqual([
      'ai35-1',
      'ai35-2',
      'ai35-3',
      'ai35-4',
      'ai35-5',
      'ai35-6',
      'ai35-7',
      'ai35-8',
      'p011',
      'p041',
      'p014',
      'ai35-10',
      'ai35-11',
      'download',
    ]);
    const elapsedMs = world.clock.now() - started;

    const { markdown, html, result } = await world.report(job.id);
    const features = (result.steps.features as { data: unknown[] }).data;
    expect(features.length).toBeGreaterThan(2);
    expect(result.selections.features).toEqual(features.map((_, index) => `f${index + 1}`));

    expect(markdown).toContain(`# Novelty check: ${input.title}`);
    expect(markdown).toContain('## The invention');
    expect(markdown).toContain('Photovoltaic plants in deserts lose');
    expect(markdown).toContain('## Search elements');
    expect(markdown).toMatch(/\| f1 \| topic_search \| /);

    // the matrix, categories and conclusion, worked out here from the sandbox's deterministic answer
    type Compared = { tech_feature: string; score: number; type: string; claim_num: number };
    type Found = { patent_id: string; comparative_literature_type: string; features: Compared[] };
    const texts = (features as { feature_text: string }[]).map((feature) => feature.feature_text);
    const found = (result.steps['agent-result'] as { final_result: Found[]; task_cost: number }).final_result;
    expect(found.length).toBeGreaterThan(2);
    const idOf = (text: string) => `f${texts.indexOf(text) + 1}`;
    const mark = { public: '●', obvious: '◐', unpublic: '○' } as Record<string, string>;
    expect(markdown).toContain(
      `| Id | Feature | ${found.map((doc, i) => `D${i + 1} (${doc.comparative_literature_type})`).join(' | ')} |`,
    );
    texts.forEach((text, row) => {
      const cells = found.map((doc) => {
        const cell = doc.features.find((f) => f.tech_feature === text)!;
        return `${mark[cell.type]} ${cell.score}`;
      });
      expect(markdown).toContain(`| f${row + 1} | ${text.replace(/\|/g, '\\|')} | ${cells.join(' | ')} |`);
    });
    const disclosed = found.map((doc) =>
      doc.features.filter((f) => f.type === 'public').map((f) => idOf(f.tech_feature)),
    );
    found.forEach((doc, i) => {
      const claims = doc.features.filter((f) => f.type !== 'unpublic').map((f) => f.claim_num);
      expect(markdown).toMatch(
        new RegExp(
          `\\| D${i + 1} \\| \\[${doc.patent_id}\\]\\(https://worldwide\\.espacenet\\.com/[^)]+\\) \\|.*\\| ${doc.comparative_literature_type} \\| [^|]*\\|`,
        ),
      );
      if (claims.length === 0) return;
      const line = markdown.split('\n').find((l) => l.startsWith(`| D${i + 1} | [`))!;
      expect(line).toContain(`| ${doc.comparative_literature_type} |`);
      expect(line.split(' | ')[9]).toMatch(new RegExp(`^${claims[0]}\\b`));
    });
    const most = Math.max(...disclosed.map((ids) => ids.length));
    const closest = disclosed.findIndex((ids) => ids.length === most);
    const ids = texts.map((_, i) => `f${i + 1}`);
    const single = ids.filter((id) => disclosed[closest]!.includes(id));
    const notFound = ids.filter((id) =>
      found.every((doc) => doc.features.every((f) => idOf(f.tech_feature) !== id || f.type === 'unpublic')),
    );
    expect(markdown).toContain(
      `- Anticipated by a single document (D${closest + 1}, ${found[closest]!.patent_id}): ${single.join(', ') || 'none'}`,
    );
    expect(markdown).toContain(`- Not found: ${notFound.join(', ') || 'none'}`);
    expect(markdown).toContain('- Searched: any publication date (no limit set); language English (en);');
    expect(markdown.indexOf('## Conclusion')).toBeLessThan(markdown.indexOf('## Features × references'));
    expect(result.summary).toMatch(
      new RegExp(`^${features.length} features \\(${features.length} selected\\), \\d+ references, closest `),
    );

    // the platform's task_cost: in result.json, the job's status and the report
    const taskCost = (result.steps['agent-result'] as { task_cost: number }).task_cost;
    expect(taskCost).toBeGreaterThan(0);
    // minutes of upstream work, skipped: the clock passed at least the agent search's own duration
    // (task_cost, in seconds to a tenth)
    expect(taskCost).toBeGreaterThan(60);
    expect(elapsedMs).toBeGreaterThanOrEqual(taskCost * 1_000 - 100);
    expect(result.usage.taskCost).toBe(taskCost);
    expect((await world.pipeline.deps.store.get(job.id))?.usage.taskCost).toBe(taskCost);
    expect(markdown).toMatch(
      new RegExp(
        `## Cost\\n\\n\\| Calls \\| Billed units \\| Platform task_cost \\|[^\\n]*\\n[^\\n]*\\n\\| ${result.usage.calls} \\| ${result.usage.billedUnits} \\| ${taskCost} s`,
      ),
    );

    // the report document is opflow's own copy
    expect(result.attachments).toEqual([
      { fileName: expect.stringMatching(/\.pdf$/), contentType: 'application/pdf' },
    ]);
    const pdf = await world.attachment(job.id, result.attachments[0]!.fileName);
    expect(Buffer.from(pdf!).subarray(0, 5).toString()).toBe('%PDF-');
    expect(markdown).toContain(`(attachments/${result.attachments[0]!.fileName})`);
    expect(html).toContain('<table>');
  }, 180_000);

  it('manual: waits with the features offered, refuses an invalid answer, and continues with a valid subset', async () => {
    const waiting = await world.run('novelty-check', input, { mode: 'manual' });
    expect(waiting.status).toBe('AWAITING_INPUT');
    expect(waiting.step).toBe('features');
    expect(waiting.pending?.prompt).toBe('Which technical features should the novelty search compare?');
    const options = offered(waiting);
    expect(options.length).toBeGreaterThan(2);
    expect(options[0]).toMatch(/^f1: /);

    await expect(world.answer(waiting.id, ['f1', 'f99'])).rejects.toThrow(
      /not among the options offered: f99/,
    );
    await expect(world.answer(waiting.id, [])).rejects.toThrow(JobRequestError);
    expect((await world.pipeline.deps.store.get(waiting.id))?.status).toBe('AWAITING_INPUT');

    const done = await world.answer(waiting.id, ['f1', 'f3']);
    expect(done.status, JSON.stringify(done.lastError)).toBe('SUCCEEDED');
    const { markdown, result } = await world.report(done.id);
    expect(result.selections.features).toEqual(['f1', 'f3']);
    expect(markdown).toMatch(/\| f1 \| F1 \| .+ \| yes \|/);
    expect(markdown).toMatch(/\| f2 \| .+ \(not selected: not searched\) \| — \|/);
    expect(markdown).toMatch(/\| f3 \| F1\.2 \| .+ \| yes \|/);
    // the upstream compared only the two chosen features
    const references = (result.steps['agent-result'] as { final_result: { features: unknown[] }[] })
      .final_result;
    expect(references.length).toBeGreaterThan(0);
    for (const reference of references) expect(reference.features).toHaveLength(2);
  }, 180_000);
});
