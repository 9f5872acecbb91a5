import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JobRequestError } from '../../../shared/engine';
import { callSequence, lastSeq, offered, startWorld, type World } from './world';

const input = {
  text: [
    'Quick-release drone battery latch.',
    'A spring-loaded pawl engages a notch in the battery housing.',
    'A release lever disengages the pawl with one hand.',
    'A hall sensor reports to the flight controller when the latch is closed.',
    'The flight controller refuses to arm the motors while the latch is open.',
  ].join('\n'),
  title: 'Drone battery latch',
  markets: ['US', 'EP', 'CN'],
};

type Compared = { claim_num: number; claim_type: string; tech_feature: string; type: string };
type Found = {
  patent_id: string;
  risk_level: string;
  features: Compared[];
  claim_equivalent_info: { claim_num: number; infringement: boolean }[];
};

describe('fto against the sandbox', () => {
  let world: World;
  beforeAll(async () => {
    world = await startWorld();
  });
  afterAll(() => world.close());

  it('auto: features and the riskiest patents preselected; the report leads with the recommendation, risk per market, legal status and a claim chart per independent claim', async () => {
    const before = lastSeq(world);
    const started = world.clock.now();
    const job = await world.run('fto', input);
    expect(job.status, JSON.stringify(job.lastError)).toBe('SUCCEEDED');
    expect(callSequence(world, before)).toEqual([
      'ai66-1',
      'ai66-2',
      'ai66-3',
      'ai66-4',
      'ai66-5',
      'p041',
      'p014',
      'ai66-6',
      'ai66-7',
      'download',
    ]);
    // minutes of search passed on the clock, not in real time
    expect(world.clock.now() - started).toBeGreaterThan(4 * 60_000);

    const { markdown, html, result } = await world.report(job.id);
    const found = (result.steps['agent-result'] as { final_result: Found[] }).final_result;
    expect(found.length).toBeGreaterThan(2);
    // only patents of the markets asked for
    for (const patent of found) expect(['US', 'EP', 'CN']).toContain(patent.patent_id.slice(0, 2));

    // what the reader needs first, in order
    const order = [
      '## Recommendation',
      '## Risk by market',
      '## Patents',
      '## Claim charts',
      '## Features compared',
    ];
    const at = order.map((heading) => markdown.indexOf(heading));
    expect(at.every((index) => index > 0)).toBe(true);
    expect([...at].sort((a, b) => a - b)).toEqual(at);
    expect(markdown).toContain('# FTO search: Drone battery latch');
    expect(markdown).toMatch(
      /Searched: markets US, EP, CN; patents active or pending; any application date;/,
    );

    // each patent: its legal status (p041), its risk, its family (p014)
    const statuses = result.steps['legal-status'] as { pn: string; simple_legal_status: string[] }[];
    for (const patent of found) {
      const status = statuses.find((row) => row.pn === patent.patent_id)?.simple_legal_status[0];
      expect(['Active', 'Pending']).toContain(status);
      const row = markdown
        .split('\n')
        .find((line) => line.includes(`[${patent.patent_id}](https://worldwide.espacenet.com/`));
      expect(row, patent.patent_id).toBeDefined();
      expect(row).toContain(`| ${patent.patent_id.slice(0, 2)} | ${status} | ${patent.risk_level} |`);
    }

    // a chart per independent claim, each element a row, with the claim's verdict
    for (const patent of found) {
      const independent = [
        ...new Set(
          patent.features.filter((row) => row.claim_type === 'independent').map((row) => row.claim_num),
        ),
      ];
      expect(independent.length).toBeGreaterThan(0);
      for (const claim of independent) {
        const reads = patent.claim_equivalent_info.find((item) => item.claim_num === claim)?.infringement;
        expect(markdown).toContain(
          `#### Claim ${claim} (independent): ${reads ? 'reads on the product' : 'does not read'}`,
        );
      }
      for (const row of patent.features.filter((item) => item.claim_type === 'independent'))
        expect(markdown).toContain(`| ${row.tech_feature} |`);
    }

    // the risk per market follows from the patents' offices and families
    const high = found.filter((patent) => patent.risk_level === 'High').map((patent) => patent.patent_id);
    if (high.length > 0) expect(markdown).toMatch(/\*\*Do not launch in [A-Z, ]+ before a licence/);
    expect(markdown).toMatch(/\| (US|EP|CN) \| (High|Medium|Low|none found) \|/);

    // the platform's report took the (at most five) riskiest patents
    const chosen = result.selections['agent-result'] ?? [];
    expect(chosen.length).toBeGreaterThan(0);
    expect(chosen.length).toBeLessThanOrEqual(5);
    expect(result.attachments).toEqual([
      { fileName: expect.stringMatching(/\.pdf$/), contentType: 'application/pdf' },
    ]);
    const pdf = await world.attachment(job.id, result.attachments[0]!.fileName);
    expect(Buffer.from(pdf!).subarray(0, 5).toString()).toBe('%PDF-');
    expect(result.summary).toMatch(/^\d+ patents: \d+ high, \d+ medium, \d+ low risk/);
    expect(html).toContain('<table>');
  }, 180_000);

  it('manual: waits with the features, then with the patents for the report (1 to 5), refusing what was not offered', async () => {
    const waiting = await world.run('fto', input, { mode: 'manual' });
    expect(waiting.status).toBe('AWAITING_INPUT');
    expect(waiting.step).toBe('features');
    expect(offered(waiting)[0]).toMatch(/^f1: Quick-release drone battery latch/);
    await expect(world.answer(waiting.id, ['f1', 'f42'])).rejects.toThrow(
      /not among the options offered: f42/,
    );

    const patents = await world.answer(waiting.id, ['f1', 'f2', 'f3']);
    expect(patents.status).toBe('AWAITING_INPUT');
    expect(patents.step).toBe('agent-result');
    expect(patents.pending?.prompt).toMatch(
      /Which patents should the platform's FTO report analyse \(1 to 5\)/,
    );
    const ids = (patents.pending?.options ?? []).map((option) => option.id);
    expect(ids.length).toBeGreaterThan(1);
    await expect(world.answer(patents.id, [])).rejects.toThrow(JobRequestError);
    if (ids.length > 5) await expect(world.answer(patents.id, ids)).rejects.toThrow(JobRequestError);

    const done = await world.answer(patents.id, [ids[1]!]);
    expect(done.status, JSON.stringify(done.lastError)).toBe('SUCCEEDED');
    const { markdown, result } = await world.report(done.id);
    expect(result.selections.features).toEqual(['f1', 'f2', 'f3']);
    expect(markdown).toMatch(/\| f4 \| .+ \| no \|/);
    expect(markdown).toMatch(/The platform’s report analyses P\d+ [A-Z]{2}\w+ \(it takes 1 to 5 patents\)/);
    // the search compared only the chosen features: claims have at most two elements beyond the subject
    const found = (result.steps['agent-result'] as { final_result: Found[] }).final_result;
    for (const patent of found) {
      const perClaim = new Map<number, number>();
      for (const row of patent.features) perClaim.set(row.claim_num, (perClaim.get(row.claim_num) ?? 0) + 1);
      for (const count of perClaim.values()) expect(count).toBeLessThanOrEqual(2);
    }
  }, 180_000);

  it('without legal data asked for, makes neither call and says so', async () => {
    const before = lastSeq(world);
    const job = await world.run('fto', { ...input, legalData: false });
    expect(job.status).toBe('SUCCEEDED');
    expect(callSequence(world, before)).not.toContain('p041');
    expect(callSequence(world, before)).not.toContain('p014');
    const { markdown } = await world.report(job.id);
    expect(markdown).toContain('Legal status was not asked for (`legalData: false`).');
  }, 180_000);

  it('a failed search fails the job with the platform’s status', async () => {
    const job = await world.run('fto', { ...input, text: `${input.text} [sandbox:fail:ai66-5]` });
    expect(job.status).toBe('FAILED');
    expect(job.lastError?.message).toMatch(/the FTO search failed upstream \(task_status "failed"\)/);
  }, 180_000);
});

describe('fto when the legal status call fails', () => {
  let world: World;
  beforeAll(async () => {
    world = await startWorld({ faults: [{ kind: 'http-5xx', httpStatus: 503, operation: 'p041' }] });
  });
  afterAll(() => world.close());

  it('still reports, stating the gap and why', async () => {
    const job = await world.run('fto', input);
    expect(job.status, JSON.stringify(job.lastError)).toBe('SUCCEEDED');
    const { markdown } = await world.report(job.id);
    expect(markdown).toMatch(/\*\*Legal status is missing:\*\* the legal-status \(p041\) call failed: /);
    expect(markdown).toContain('## Claim charts');
  }, 180_000);
});

describe('fto when the search finds nothing and the patents named for comparison', () => {
  let world: World;
  const nothing = { ...input, text: `${input.text} [sandbox:no-results]` };
  const named = ['CN118289111A', 'US11234567B2'];
  beforeAll(async () => {
    world = await startWorld();
  });
  afterAll(() => world.close());

  it('all fail: the job ends at the search with a report that says nothing was compared and why, and no report is paid for', async () => {
    world.sandbox.faults.set([{ kind: 'http-5xx', httpStatus: 502, operation: 'ai66-8' }]);
    const before = lastSeq(world);
    const job = await world.run('fto', { ...nothing, comparePatents: named });
    world.sandbox.faults.clear();
    expect(job.status, JSON.stringify(job.lastError)).toBe('SUCCEEDED');
    // ai66-8 is asked (and refused) while the search runs; nothing after ai66-5 is called.
    expect(callSequence(world, before)).toEqual(['ai66-1', 'ai66-2', 'ai66-3', 'ai66-4', 'ai66-5']);
    expect(
      world.sandbox.ledger.count({ operationId: 'ai66-8FeatureComparison', outcome: 'fault' }),
    ).toBeGreaterThan(1);
    expect(
      world.sandbox.ledger
        .entries()
        .filter((entry) => entry.seq > before && entry.operationId.startsWith('ai66-6')),
    ).toEqual([]);

    const { markdown, result } = await world.report(job.id);
    expect(result.summary).toBe(
      'nothing compared: no patent found in the markets searched, and the 2 named could not be compared',
    );
    const recommendation = markdown.slice(
      markdown.indexOf('## Recommendation'),
      markdown.indexOf('## Risk by market'),
    );
    expect(recommendation).toContain(
      '**Nothing was compared: the search found no patent in force or pending in the markets searched, and none of the 2 patents named for comparison (CN118289111A, US11234567B2) could be compared, so their risk is not known.',
    );
    expect(recommendation).not.toMatch(/no obstacle/);
    expect(markdown).toMatch(
      /\*\*Not compared:\*\* CN118289111A \(the comparison, ai66-8, failed: the platform answered HTTP 502 \(correlation id [\w-]+\)\); US11234567B2 \(.*HTTP 502.*\)\.\n/,
    );
    expect(markdown).not.toContain('The rest of the search is complete');
    expect(markdown).toContain(
      'The platform’s report was not asked for: it takes 1 to 5 patents, and the search found none and none of the 2 named for comparison could be compared',
    );
  }, 180_000);

  it('one compared: the platform’s report is made of the named patent alone', async () => {
    const before = lastSeq(world);
    const job = await world.run('fto', { ...nothing, comparePatents: named.slice(0, 1) });
    expect(job.status, JSON.stringify(job.lastError)).toBe('SUCCEEDED');
    expect(callSequence(world, before)).toEqual([
      'ai66-1',
      'ai66-2',
      'ai66-3',
      'ai66-4',
      'ai66-8',
      'ai66-5',
      'p041',
      'p014',
      'ai66-6',
      'ai66-7',
      'download',
    ]);
    const { markdown } = await world.report(job.id);
    expect(markdown).toMatch(/### P1 · CN118289111A/);
    expect(markdown).toContain('The platform’s report analyses P1 CN118289111A');
  }, 180_000);
});
