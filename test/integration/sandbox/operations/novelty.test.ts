/**
 * Novelty search (ai35-1..12) against the sandbox: the whole sequence with a skipped clock, the
 * out-of-order answers, the failure triggers, deterministic content and the PDF report.
 */
import { extractText } from 'unpdf';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PlatformCode } from '../../../../shared/sandbox';
import { startTestSandbox, type TestSandbox } from '../sandbox-harness';

const INPUT =
  'A telephone with image recognition. It includes a camera linked to the telephone. ' +
  'A command controls the camera. Text is extracted from the captured image. The text is shown on the telephone display.';
const STEP_MS = 10_000;

let harness: TestSandbox;
beforeEach(async () => {
  harness = await startTestSandbox({ defaultTaskDuration: { meanMs: STEP_MS, spreadMs: 0 } });
});
afterEach(() => harness.close());

const expectOutOfOrder = async (ref: string, body: unknown, mention: string) => {
  const answer = await harness.call(ref, body);
  expect(answer.status).toBe(200);
  expect(answer.json).toMatchObject({ status: false, error_code: PlatformCode.invalidParameter });
  expect(answer.json.error_msg).toContain('out of order');
  expect(answer.json.error_msg).toContain(mention);
};

describe('novelty search', () => {
  it('summarises a structured disclosure into whole sentences: headings and list marks left out, decimals kept', async () => {
    const disclosure = [
      '# Dust shield in a solar coating',
      '',
      '## Problem',
      '',
      'Desert plants lose 0.5 % of their output per day. Cleaning with water',
      'is expensive.',
      '',
      'What is new',
      '1. Electrodes inside the coating.',
      '- A three-phase signal moves the dust.',
    ].join('\n');
    const { task_id } = await harness.ok('ai35-1', { input: disclosure, lang: 'en' });
    harness.advance(STEP_MS);
    const summary = await harness.ok('ai35-2', { task_id });
    expect(summary.tech_solution).toBe(
      'Dust shield in a solar coating. Desert plants lose 0.5 % of their output per day. Cleaning with water is expensive. ' +
        'Electrodes inside the coating. A three-phase signal moves the dust.',
    );
  });

  it('runs ai35-1 → ai35-11 end to end, each step waiting for the last', async () => {
    const { task_id } = await harness.ok('ai35-1', { input: INPUT, lang: 'en' });

    expect(await harness.ok('ai35-2', { task_id })).toEqual({ status: 1 });
    await expectOutOfOrder('ai35-3', { task_id }, 'ai35-2');
    harness.advance(STEP_MS);
    const summary = await harness.ok('ai35-2', { task_id });
    expect(summary.status).toBe(2);
    expect(summary.tech_solution).toContain('camera linked to the telephone');

    await expectOutOfOrder('ai35-4', { task_id }, 'ai35-3');
    await harness.ok('ai35-3', { task_id });
    await harness.ok('ai35-3', { task_id }); // the same confirmation again is harmless
    await expectOutOfOrder('ai35-3', { task_id, tech_solution: 'something else' }, 'already confirmed');

    expect((await harness.ok('ai35-4', { task_id })).status).toBe(1);
    harness.advance(STEP_MS);
    const features = await harness.ok('ai35-4', { task_id });
    expect(features.status).toBe(2);
    expect(features.data.map((f: { feature_num: string }) => f.feature_num)).toEqual([
      'F1',
      'F1.1',
      'F1.2',
      'F1.3',
      'F1.4',
    ]);
    expect(features.data[0]).toMatchObject({
      feature_text: 'A telephone with image recognition',
      feature_weight: 'topic',
      selected: true,
    });

    const notOffered = await harness.call('ai35-5', {
      task_id,
      tech_features: [{ feature_num: 'F9', selected: true }],
    });
    expect(notOffered.json.error_code).toBe(PlatformCode.invalidParameter);
    expect(notOffered.json.error_msg).toContain('tech_features[0].feature_num');
    const confirmed = features.data.map((f: { feature_num: string }) => ({
      ...f,
      selected: f.feature_num !== 'F1.4',
    }));
    await harness.ok('ai35-5', { task_id, tech_features: confirmed });

    await expectOutOfOrder('ai35-7', { task_id, elements: {} }, 'ai35-6');
    harness.advance(STEP_MS);
    const elements = await harness.ok('ai35-6', { task_id });
    expect(elements.status).toBe(2);
    expect(elements.elements.list).toHaveLength(4);
    expect(elements.elements.list[0].feature_type).toBe('topic_search');

    await expectOutOfOrder('ai35-8', { task_id }, 'ai35-7');
    await harness.ok('ai35-7', { task_id, elements: elements.elements });
    const running = await harness.ok('ai35-8', { task_id });
    expect(running).toMatchObject({ task_status: 'running', final_result: [] });
    await expectOutOfOrder('ai35-10', { task_id, title: 'x' }, 'still running');
    harness.advance(STEP_MS);
    const result = await harness.ok('ai35-8', { task_id });
    expect(result.task_status).toBe('success');
    expect(result.final_result.length).toBeGreaterThanOrEqual(5);
    const first = result.final_result[0];
    expect(first.most_similar).toBe(true);
    expect(first.features.map((f: { tech_feature: string }) => f.tech_feature)).toEqual(
      confirmed
        .filter((f: { selected: boolean }) => f.selected)
        .map((f: { feature_text: string }) => f.feature_text),
    );

    const tooMany = result.final_result.map((doc: object) => ({ ...doc, selected: true }));
    tooMany.push({ patent_id: 'US1A', selected: true, user_added: true });
    const refused = await harness.call('ai35-9', { task_id, final_result: tooMany });
    expect(refused.json.error_msg).toContain('at most 5');
    const unknownDoc = await harness.call('ai35-9', {
      task_id,
      final_result: [{ patent_id: 'XX000', selected: true }],
    });
    expect(unknownDoc.json.error_msg).toContain('final_result[0].patent_id');
    await harness.ok('ai35-9', { task_id, final_result: result.final_result.slice(0, 2) });

    await expectOutOfOrder('ai35-11', { task_id }, 'ai35-10');
    await harness.ok('ai35-10', { task_id, title: 'Telephone novelty report' });
    expect(await harness.ok('ai35-11', { task_id })).toEqual({ task_id, status: 1 });
    harness.advance(STEP_MS);
    const report = await harness.ok('ai35-11', { task_id });
    expect(report.status).toBe(2);
    const pdf = await harness.get(report.report_url);
    expect(pdf.status).toBe(200);
    expect(pdf.headers['content-type']).toBe('application/pdf');
    expect(pdf.body.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    const { text } = await extractText(new Uint8Array(pdf.body), { mergePages: true });
    expect(text).toContain('Telephone novelty report');
    expect(text).toContain(first.patent_id);
  });

  it('derives the same content from the same input, and other content from another', async () => {
    const run = async (input: string) => {
      const { task_id } = await harness.ok('ai35-1', { input, lang: 'en' });
      harness.advance(STEP_MS);
      await harness.ok('ai35-3', { task_id });
      harness.advance(STEP_MS);
      await harness.ok('ai35-5', { task_id });
      harness.advance(STEP_MS);
      const { elements } = await harness.ok('ai35-6', { task_id });
      await harness.ok('ai35-7', { task_id, elements });
      harness.advance(STEP_MS);
      const { final_result } = await harness.ok('ai35-8', { task_id });
      return { task_id, final_result };
    };
    const a = await run(INPUT);
    const b = await run(INPUT);
    const c = await run('A bicycle with a folding frame. The hinge locks with a cam.');
    expect(a.task_id).not.toBe(b.task_id);
    expect(b.final_result).toEqual(a.final_result);
    expect(c.final_result.map((d: { patent_id: string }) => d.patent_id)).not.toEqual(
      a.final_result.map((d: { patent_id: string }) => d.patent_id),
    );
  });

  it('fails the summary on [sandbox:fail], and no later step can run', async () => {
    const { task_id } = await harness.ok('ai35-1', { input: `${INPUT} [sandbox:fail]`, lang: 'en' });
    expect((await harness.ok('ai35-2', { task_id })).status).toBe(1);
    harness.advance(STEP_MS);
    expect(await harness.ok('ai35-2', { task_id })).toEqual({ status: 3 });
    await expectOutOfOrder('ai35-3', { task_id }, 'FAILED');
  });

  it('fails the agent search on [sandbox:fail:ai35-8] and the export on [sandbox:fail:ai35-11]', async () => {
    const { task_id } = await harness.ok('ai35-1', { input: `${INPUT} [sandbox:fail:ai35-8]`, lang: 'en' });
    for (const ref of ['ai35-3', 'ai35-5']) {
      harness.advance(STEP_MS);
      await harness.ok(ref, { task_id });
    }
    harness.advance(STEP_MS);
    const { elements } = await harness.ok('ai35-6', { task_id });
    await harness.ok('ai35-7', { task_id, elements });
    expect((await harness.ok('ai35-8', { task_id })).task_status).toBe('running');
    harness.advance(STEP_MS);
    expect((await harness.ok('ai35-8', { task_id })).task_status).toBe('failed');

    const second = (await harness.ok('ai35-1', { input: `${INPUT} [sandbox:fail:ai35-11]`, lang: 'en' }))
      .task_id;
    for (const ref of ['ai35-3', 'ai35-5']) {
      harness.advance(STEP_MS);
      await harness.ok(ref, { task_id: second });
    }
    harness.advance(STEP_MS);
    await harness.ok('ai35-7', {
      task_id: second,
      elements: (await harness.ok('ai35-6', { task_id: second })).elements,
    });
    harness.advance(STEP_MS);
    await harness.ok('ai35-10', { task_id: second, title: 'r' });
    harness.advance(STEP_MS);
    expect(await harness.ok('ai35-11', { task_id: second })).toEqual({ task_id: second, status: 3 });
  });

  it('answers 404 for an unknown task id', async () => {
    for (const ref of ['ai35-2', 'ai35-4', 'ai35-8', 'ai35-11']) {
      const answer = await harness.call(ref, { task_id: 'no-such-task' });
      expect(answer.status).toBe(404);
      expect(answer.json).toMatchObject({ status: false, error_code: PlatformCode.notFound });
      expect(answer.json.error_msg).toContain('no-such-task');
    }
  });

  it('compares a given patent with given features (ai35-12)', async () => {
    const data = await harness.ok('ai35-12', {
      request: { pn: 'CN115000000A' },
      tech_features: [{ feature_text: 'a camera linked to the telephone', selected: true }],
    });
    expect(data.final_res[0].patent_id).toBe('CN115000000A');
    expect(data.final_res[0].features[0].tech_feature).toBe('a camera linked to the telephone');
    expect(data.threshold).toBe(60);
  });
});

describe('task durations', () => {
  it('keeps a task RUNNING for mean ± spread (seeded, per task), then done', async () => {
    await harness.close();
    harness = await startTestSandbox({ taskDurations: { 'ai35-1': { meanMs: 5_000, spreadMs: 1_000 } } });
    const ids: string[] = [];
    for (let i = 0; i < 6; i++)
      ids.push((await harness.ok('ai35-1', { input: `Lamp ${i}.`, lang: 'en' })).task_id);
    const doneAt = new Map<string, number>();
    for (let elapsed = 0; elapsed <= 6_000; elapsed += 250) {
      for (const task_id of ids) {
        if (!doneAt.has(task_id) && (await harness.ok('ai35-2', { task_id })).status === 2)
          doneAt.set(task_id, elapsed);
      }
      harness.advance(250);
    }
    const times = ids.map((id) => doneAt.get(id));
    for (const time of times) {
      expect(time).toBeGreaterThanOrEqual(4_000);
      expect(time).toBeLessThanOrEqual(6_000);
    }
    expect(new Set(times).size).toBeGreaterThan(1);
  });

  it('takes minutes for the agent search by default', async () => {
    await harness.close();
    harness = await startTestSandbox();
    const { task_id } = await harness.ok('ai35-1', { input: INPUT, lang: 'en' });
    for (const ref of ['ai35-3', 'ai35-5']) {
      harness.advance(60_000);
      await harness.ok(ref, { task_id });
    }
    harness.advance(60_000);
    await harness.ok('ai35-7', { task_id, elements: (await harness.ok('ai35-6', { task_id })).elements });
    harness.advance(170_000);
    expect((await harness.ok('ai35-8', { task_id })).task_status).toBe('running');
    harness.advance(260_000);
    expect((await harness.ok('ai35-8', { task_id })).task_status).toBe('success');
  });
});
