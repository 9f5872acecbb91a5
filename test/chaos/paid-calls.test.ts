/** The chaos suites' account of paid calls: each put to its job and step, an uncounted repeat found and explained. */
import { describe, expect, it } from 'vitest';
import type { Job } from '../../shared/engine/job-record';
import { Ledger, type LedgerEntry } from '../../shared/sandbox/ledger';
import { workflows } from '../../shared/workflows';
import { piecesOf, translationInput } from '../../shared/workflows/translation/input';
import { makeJob, T0 } from '../support/factories';
import { auditPaidCalls, explainAudit } from './paid-calls';

let seq = 0;
const call = (operationId: string, body: unknown, patch: Partial<LedgerEntry> = {}): LedgerEntry => ({
  seq: ++seq,
  time: T0 + seq * 100,
  operationId,
  method: 'POST',
  path: '/',
  httpStatus: 200,
  errorCode: 0,
  outcome: 'ok',
  billedUnits: 1,
  correlationId: `c${seq}`,
  created: true,
  workDone: true,
  body,
  ...patch,
});

const novelty = (index: number, patch: Partial<Job> = {}) =>
  makeJob({
    workflow: 'novelty-check',
    input: { inline: { text: `Variant local ${index}: a folding helmet.` } },
    ...patch,
  });

describe('auditPaidCalls', () => {
  it('puts each paid call to its job and step, by the input tag or an id the job holds', () => {
    const first = novelty(1, { context: { taskId: 'task-000001' }, intents: { submit: 1, export: 1 } });
    const tenth = novelty(10, { context: { taskId: 'task-000010' }, intents: { submit: 1 } });
    const ledger = [
      call(
        'ai35-1NoveltySearchSubmit',
        { text: 'Variant local 1: a folding helmet.' },
        { resourceId: 'task-000001' },
      ),
      call('ai35-1NoveltySearchSubmit', { text: 'Variant local 10: a folding helmet.' }),
      call('ai35-2TechSolutionGet', { task_id: 'task-000001' }, { created: false }),
      call('ai35-10NoveltySearchExport', { task_id: 'task-000001' }),
    ];
    const audit = auditPaidCalls(ledger, [first, tenth], workflows, 'local');
    expect(audit).toMatchObject({ paidCalls: 3, repeatsSeenUpstream: 0, uncounted: [], unowned: [] });
    expect(explainAudit(audit, [])).toBe('');
  });

  it('accepts a repeat the job counted, and explains one it did not with the crashes around it', () => {
    const counted = novelty(2, {
      intents: { submit: 2 },
      usage: { ...makeJob().usage, duplicateCreates: 1 },
    });
    const uncounted = novelty(3, { context: { taskId: 'task-000003' }, intents: { submit: 1, export: 1 } });
    const ledger = [
      call('ai35-1NoveltySearchSubmit', { text: 'Variant local 2: a folding helmet.' }),
      call('ai35-1NoveltySearchSubmit', { text: 'Variant local 2: a folding helmet.' }),
      call('ai35-1NoveltySearchSubmit', { text: 'Variant local 3: a folding helmet.' }),
      call('ai35-10NoveltySearchExport', { task_id: 'task-000003' }, { outcome: 'fault', fault: 'reset' }),
      call('ai35-10NoveltySearchExport', { task_id: 'task-000003' }),
    ];
    const audit = auditPaidCalls(ledger, [counted, uncounted], workflows, 'local');
    expect(audit.repeatsSeenUpstream).toBe(2);
    expect(audit.repeatsCounted).toBe(1);
    expect(
      audit.uncounted.map((account) => [account.jobId, account.output, account.done.length, account.sent]),
    ).toEqual([[uncounted.id, 'export', 2, 1]]);
    const crashAt = ledger[3]!.time + 50;
    const explained = explainAudit(audit, [{ at: crashAt, what: 'kill -9 of worker 1' }], (jobId) =>
      jobId === uncounted.id ? ['step will be retried export'] : [],
    );
    expect(explained).toContain(
      `job ${uncounted.id} (novelty-check), step output "export": the upstream did it 2 times, the job recorded 1 sends`,
    );
    expect(explained).toContain('ai35-10NoveltySearchExport fault (reset)');
    expect(explained).toContain('kill -9 of worker 1');
    expect(explained).toContain('log: step will be retried export');
  });

  it('counts a done update like a create, skips reads and calls whose work was not done, and names an unowned call', () => {
    const job = novelty(4, { context: { taskId: 'task-000004' }, intents: { 'agent-search': 1 } });
    const ledger = [
      call('ai35-7NoveltySearchAgentSearch', { task_id: 'task-000004' }, { created: false }),
      call(
        'ai35-7NoveltySearchAgentSearch',
        { task_id: 'task-000004' },
        { created: false, workDone: undefined, httpStatus: 503 },
      ),
      call('ai35-8NoveltySearchAgentResult', { task_id: 'task-000004' }, { created: false }),
      call('ai35-1NoveltySearchSubmit', { text: 'no tag here' }),
    ];
    const audit = auditPaidCalls(ledger, [job], workflows, 'local');
    expect(audit.paidCalls).toBe(2);
    expect(audit.uncounted).toEqual([]);
    expect(audit.unowned.map((entry) => entry.seq)).toEqual([ledger[3]!.seq]);
    expect(explainAudit(audit, [])).toMatch(
      /a paid call no job could be found for:\n\s+#\d+ .* ai35-1NoveltySearchSubmit ok/,
    );
  });

  it('takes a passage two translations send alike for one call of each, where the ledger saw a repeat', () => {
    // The chaos mix's translation input before each sentence carried its tag: the second piece of
    // every translation job was the same text, so two jobs paid once each for the same body.
    const input = (i: number) => ({
      text: `Variant local ${i}: ${'A folding helmet whose shell segments lock open with a magnetic buckle. '.repeat(40)}`,
      target: 'ja',
    });
    const jobs = [7, 18].map((i) =>
      makeJob({
        workflow: 'translation',
        step: 'translate-ai',
        input: { inline: input(i) },
        intents: { 'piece-1': 1, 'piece-2': 1 },
      }),
    );
    const pieces = jobs.map((job) =>
      piecesOf(translationInput.parse((job.input as { inline: unknown }).inline)),
    );
    expect(pieces[0]![1]!.text).toBe(pieces[1]![1]!.text);
    const body = (text: string) => ({ text, target_lang: 'JP' });
    const sent = [pieces[0]![0]!, pieces[1]![0]!, pieces[0]![1]!, pieces[1]![1]!].map((piece) =>
      body(piece.text),
    );
    const ledger = new Ledger();
    for (const request of sent) {
      const { seq: _, ...entry } = call('ai61AiTranslation', request, {
        bodyHash: JSON.stringify(request),
        keyFingerprint: 'k',
      });
      ledger.record(entry);
    }
    // The sandbox's body-grouped count takes the shared passage for a repeat no job counted...
    expect(ledger.duplicateCreates()).toBe(1);
    // ...where each job sent it once.
    const audit = auditPaidCalls(ledger.entries(), jobs, workflows, 'local');
    expect(audit).toMatchObject({ paidCalls: 4, repeatsSeenUpstream: 0, uncounted: [], unowned: [] });

    // A third copy of the passage is a repeat one of them did not count.
    const { seq: _, ...again } = call('ai61AiTranslation', sent[3], {
      bodyHash: JSON.stringify(sent[3]),
      keyFingerprint: 'k',
    });
    ledger.record(again);
    const repeated = auditPaidCalls(ledger.entries(), jobs, workflows, 'local');
    expect(repeated.repeatsSeenUpstream).toBe(1);
    expect(repeated.uncounted).toMatchObject([
      { jobId: `${jobs[0]!.id} + ${jobs[1]!.id}`, output: 'piece-2', sent: 2 },
    ]);
  });

  it('tells the pieces of a translation apart by their text', () => {
    const text = Array.from({ length: 40 }, (_, k) => `Segment ${k + 1} of helmet local 5 locks open.`).join(
      ' ',
    );
    const job = makeJob({
      workflow: 'translation',
      step: 'translate-ai',
      input: { inline: { text, target: 'ja' } },
      intents: { 'piece-1': 1 },
    });
    const body = { text, target_lang: 'JP' };
    const once = auditPaidCalls([call('ai61AiTranslation', body)], [job], workflows, 'local');
    expect(once.uncounted).toEqual([]);
    const twice = auditPaidCalls(
      [call('ai61AiTranslation', body), call('ai61AiTranslation', body)],
      [job],
      workflows,
      'local',
    );
    expect(twice.uncounted.map((account) => account.output)).toEqual(['piece-1']);
  });

  it('puts a design job’s image upload (p010, a multipart body of its file name) to the job, and its search by the uploaded URL', () => {
    const url = 'https://sandbox.example/image-search/local-12.png';
    const job = makeJob({
      workflow: 'design-infringement-1v1',
      step: 'comparison',
      input: {
        inline: { image: { data: 'iVBORw0KGgo=', name: 'local 12.png' }, patent: 'EU0040356240003S' },
      },
      context: { imageUrl: url, taskId: 'task-000012' },
      intents: { upload: 1, create: 1 },
    });
    const upload = call('p010ImageSearchImageUpload', { image: 'local_12.png' });
    const create = call('ai67-1AiInfringementDetection1v1Creation', {
      patent_number: 'EU0040356240003S',
      url,
    });
    const once = auditPaidCalls([upload, create], [job], workflows, 'local');
    expect(once).toMatchObject({ paidCalls: 2, uncounted: [], unowned: [] });
    const twice = auditPaidCalls([upload, { ...upload, seq: ++seq }, create], [job], workflows, 'local');
    expect(twice.uncounted.map((account) => account.output)).toEqual(['upload']);
  });
});
