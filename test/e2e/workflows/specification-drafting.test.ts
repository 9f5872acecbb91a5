import JSZip from 'jszip';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callSequence, lastSeq, offered, startWorld, type World } from './world';

const disclosure = [
  'Technical field: battery mounts of unmanned aerial vehicles.',
  'Background: swapping the battery of an inspection drone needs a tool. The drawback is that a loose battery is not detected before take-off.',
  'Solution: a spring-loaded pawl engages a notch in the battery housing; a release lever frees it with one hand.',
  'Effect: the battery is swapped in seconds, which reduces the turnaround, and the drone refuses to arm with an open latch.',
].join('\n');
const claims = [
  '1. A battery latch for a drone, comprising: a spring-loaded pawl engaging a notch of the battery housing; a release lever disengaging the pawl; and a hall sensor detecting the position of the pawl.',
  '2. The battery latch of claim 1, wherein the flight controller refuses to arm the motors while the hall sensor reports the latch open.',
  '3. The battery latch of claim 1 or 2, wherein the release lever is operable with one hand.',
  '4. A method of swapping a drone battery, comprising: pressing the release lever; withdrawing the battery; inserting a charged battery until the pawl engages.',
].join('\n');
const input = { disclosure, claims, title: 'Quick-release drone battery latch' };

describe('specification-drafting against the sandbox', () => {
  let world: World;
  beforeAll(async () => {
    world = await startWorld();
  });
  afterAll(() => world.close());

  it('auto: every feature kept; the report leads with the specification document, then the claims as drafted', async () => {
    const before = lastSeq(world);
    const job = await world.run('specification-drafting', input);
    expect(job.status, JSON.stringify(job.lastError)).toBe('SUCCEEDED');
    expect(callSequence(world, before)).toEqual([
      'ai37-1',
      'ai37-2',
      'ai37-3',
      'ai37-4',
      'ai37-5',
      'download',
    ]);

    const { markdown, result } = await world.report(job.id);
    const order = [
      '## Specification document',
      '## Claims as drafted',
      '## Problem, solution and effects',
      '## Embodiments',
      '## Terms',
      '## Submitted',
    ];
    const at = order.map((title) => markdown.indexOf(`\n${title}\n`));
    expect(at.every((index) => index > 0)).toBe(true);
    expect([...at].sort((a, b) => a - b)).toEqual(at);
    expect(result.attachments).toHaveLength(1);
    expect(result.attachments[0]!.fileName).toMatch(/^specification-\w+\.docx$/);
    expect(markdown).toMatch(/\[specification-\w+\.docx\]\(attachments\//);
    // Claims 1 and 4 are independent; 2 depends on 1, 3 on 1 and 2.
    expect(markdown).toMatch(/\| 1 \| independent \| .*spring-loaded pawl/);
    expect(markdown).toMatch(/\| 2 \| 1 \| /);
    expect(markdown).toMatch(/\| 3 \| 1, 2 \| /);
    expect(markdown).toMatch(/\| 4 \| independent \| /);
    expect(markdown).toMatch(/4 claims \(2 independent\); 2 embodiments/);
    expect(markdown).not.toContain('left out');
    expect(result.summary).toMatch(
      /^Specification drafted: 4 claims \(2 independent\), 2 embodiments, Process|Machine/,
    );

    // The document is a real .docx holding the claims as sent.
    const bytes = await world.attachment(job.id, result.attachments[0]!.fileName);
    const zip = await JSZip.loadAsync(bytes!);
    const xml = await zip.file('word/document.xml')!.async('string');
    expect(xml).toContain('Quick-release drone battery latch');
    expect(xml).toContain('Claims');
    expect(xml).toContain('hall sensor detecting the position of the pawl');
  }, 120_000);

  it('manual: waits with the claim features; a feature left out is sent deleted and struck through in the report', async () => {
    const waiting = await world.run('specification-drafting', input, { mode: 'manual' });
    expect(waiting.status).toBe('AWAITING_INPUT');
    expect(waiting.step).toBe('features');
    const ids = (waiting.pending?.options ?? []).map((option) => option.id);
    expect(ids).toContain('c1f1');
    expect(ids).toContain('c2f1');
    expect(offered(waiting).some((line) => /^c1f2: claim 1: .*pawl/.test(line))).toBe(true);
    const done = await world.answer(
      waiting.id,
      ids.filter((id) => id !== 'c1f4'),
    );
    expect(done.status, JSON.stringify(done.lastError)).toBe('SUCCEEDED');
    const { markdown, result } = await world.report(done.id);
    expect(markdown).toMatch(/~~.*hall sensor.*~~ \(left out\)/);
    expect(markdown).toContain('1 feature was left out at the selection (claims 1)');
    expect(result.summary).toContain('1 feature left out');
    // The drafted claim 1 is without the feature left out (sent with feature_deleted: 1).
    const bytes = await world.attachment(done.id, result.attachments[0]!.fileName);
    const xml = await (await JSZip.loadAsync(bytes!)).file('word/document.xml')!.async('string');
    const claim1 = /<w:t[^>]*>(1\. A battery latch[^<]*)<\/w:t>/.exec(xml)?.[1];
    expect(claim1).toContain('a release lever disengaging the pawl');
    expect(claim1).not.toContain('hall sensor');
  }, 120_000);

  it('fails with the upstream status when the initialisation fails, and when the drafting fails', async () => {
    const first = await world.run('specification-drafting', {
      ...input,
      disclosure: `${disclosure} [sandbox:fail]`,
    });
    expect(first.status).toBe('FAILED');
    expect(first.lastError?.message).toContain('the specification initialisation failed upstream (status 3)');
    const later = await world.run('specification-drafting', {
      ...input,
      disclosure: `${disclosure} [sandbox:fail:ai37-5]`,
    });
    expect(later.status).toBe('FAILED');
    expect(later.lastError?.message).toContain('the specification drafting failed upstream (status 3)');
  }, 120_000);

  it('refuses a bad input before any call, naming the field', async () => {
    const { workflows } = await import('../../../shared/workflows');
    const schema = workflows.get('specification-drafting')!.input;
    const cases: [unknown, string][] = [
      [{ disclosure: 'x', title: 'T' }, 'claims: the claims are required'],
      [{ disclosure: 'x', claims: '1. A device.' }, "title: the invention's title is required"],
      [{ disclosure: 'x', title: 'T', claims: 'A device.' }, 'claims: number the claims'],
      [
        { disclosure: 'x', title: 'T', claims: '1. A device.', drawings: ['ftp://x/y.png'] },
        'drawings: each drawing',
      ],
      [{ disclosure: 'x', title: 'T', claims: '1. A device.', category: 'Gadget' }, 'category: one of'],
    ];
    for (const [value, message] of cases) {
      const parsed = schema.safeParse(value);
      expect(parsed.success).toBe(false);
      expect(JSON.stringify(parsed.error?.issues)).toContain(message);
    }
  });
});
