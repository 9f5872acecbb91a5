/**
 * The sandbox's state file over real HTTP: a sandbox started again on the same file continues the
 * work callers hold ids for (every workflow, links, chats, quota counts), never reissues an id,
 * writes only when something changed and before it answers, and refuses or moves aside files it
 * must not use (corrupt, another version, another seed, held by a live sandbox).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { extractText } from 'unpdf';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { findOperation } from '../../../shared/openplatform/catalogue';
import {
  describeStateReport,
  PlatformCode,
  type SandboxOptions,
  StateFileInUseError,
  startSandbox,
} from '../../../shared/sandbox';
import { dataFrames, START_TIME, startTestSandbox, type TestSandbox } from './sandbox-harness';

const STEP_MS = 10_000;
const IDEA =
  'A telephone with image recognition. It includes a camera linked to the telephone. ' +
  'A command controls the camera. Text is extracted from the captured image.';

let dir: string;
let stateFile: string;
let clock: { now: number };
let harness: TestSandbox | undefined;
const blockers: Server[] = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'opflow-sandbox-state-'));
  stateFile = join(dir, 'state', 'sandbox-state.json');
  clock = { now: START_TIME };
});
afterEach(async () => {
  await harness?.close();
  harness = undefined;
  for (const blocker of blockers.splice(0)) await new Promise((resolve) => blocker.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

/** A sandbox on the state file, following the shared clock. */
async function start(options: SandboxOptions = {}): Promise<TestSandbox> {
  harness = await startTestSandbox(
    { stateFile, defaultTaskDuration: { meanMs: STEP_MS, spreadMs: 0 }, ...options },
    clock,
  );
  return harness;
}

/** Close the running sandbox (as a kill would: nothing is written at close) and start another on the file. */
async function restart(options: SandboxOptions = {}): Promise<TestSandbox> {
  await harness?.close();
  harness = undefined;
  return start(options);
}

const savedState = () => JSON.parse(readFileSync(stateFile, 'utf8'));

describe('sandbox state file', () => {
  it('lets a restarted sandbox continue every kind of work started before', async () => {
    let h = await start();
    expect(h.sandbox.state).toEqual({ file: stateFile, outcome: 'new', records: 0 });

    // Novelty: the summary confirmed.
    const novelty = (await h.ok('ai35-1', { input: IDEA, lang: 'en' })).task_id;
    h.advance(STEP_MS);
    const summary = (await h.ok('ai35-2', { task_id: novelty })).tech_solution;
    await h.ok('ai35-3', { task_id: novelty });
    // Disclosure: generation started.
    const disclosure = (
      await h.ok('ai32-2', { language: 'en', mechanism: 'Optics', tech_solution: 'A lens. A mount.' })
    ).job_id;
    // Find-solution: two of the recommendations chosen.
    const findSolution = (await h.ok('ai33-1', { lang: 'en', solution_issues: 'Cheaper lithium cells' }))
      .task_id;
    // Materials: the mind map finished, an implementation plan started for one node.
    const materials = (await h.ok('ai73-1', { input: 'Transparent zinc oxide sunscreen', lang: 'en' }))
      .task_id;
    // Pre-research: created, waiting for its directory.
    const preResearch = await h.ok('ai34-1', {
      technical_issues: 'Solid-state batteries',
      auto_directory: false,
    });
    // Encyclopedia: a chat to stream the answer of later.
    const chat = await h.ok('ai68-1', {
      query: 'How do statins work?',
      deep_search: false,
      long_think: false,
      search_website: false,
    });
    h.advance(STEP_MS);
    const { recommend } = await h.ok('ai33-2', { task_id: findSolution });
    await h.ok('ai33-3', { task_id: findSolution, lang: 'en', recommend: recommend.slice(0, 2) });
    const materialsOffer = await h.ok('ai73-2', { task_id: materials });
    await h.ok('ai73-3', { task_id: materials, recommend: materialsOffer.recommend.slice(0, 1) });
    h.advance(STEP_MS);
    const { board_id } = await h.ok('ai73-4', { task_id: materials });
    const mindBefore = (await h.ok('ai73-5', { task_id: materials })).solution;
    const node_id = mindBefore.cells.find((cell: { shape: string }) => cell.shape === 'solution-node').data
      .node_id;
    await h.ok('ai73-8', { task_id: materials, board_id, node_id });

    // Down for a while: work keeps running by the clock.
    h = await restart();
    expect(h.sandbox.state).toEqual({ file: stateFile, outcome: 'restored', records: 6 });
    h.advance(STEP_MS);

    // Novelty goes on to its report; the confirmation was kept (the same body again is harmless,
    // another is refused).
    await h.ok('ai35-3', { task_id: novelty });
    const again = await h.call('ai35-3', { task_id: novelty, tech_solution: 'something else' });
    expect(again.json.error_msg).toContain('already confirmed');
    expect((await h.ok('ai35-2', { task_id: novelty })).tech_solution).toBe(summary);
    const features = await h.ok('ai35-4', { task_id: novelty });
    expect(features.status).toBe(2);
    await h.ok('ai35-5', { task_id: novelty, tech_features: features.data });
    h = await restart();
    h.advance(STEP_MS);
    const elements = await h.ok('ai35-6', { task_id: novelty });
    await h.ok('ai35-7', { task_id: novelty, elements: elements.elements });
    h.advance(STEP_MS);
    const result = await h.ok('ai35-8', { task_id: novelty });
    expect(result.task_status).toBe('success');
    await h.ok('ai35-10', { task_id: novelty, title: 'Telephone report' });
    h = await restart();
    h.advance(STEP_MS);
    const report = await h.ok('ai35-11', { task_id: novelty });
    const pdf = await h.get(report.report_url);
    expect(pdf.status).toBe(200);
    expect((await extractText(new Uint8Array(pdf.body), { mergePages: true })).text).toContain(
      'Telephone report',
    );
    // The same results as before the restart.
    expect((await h.ok('ai35-8', { task_id: novelty })).final_result).toEqual(result.final_result);

    // Disclosure: the document.
    const done = await h.ok('ai32-3', { job_id: disclosure });
    expect(done.job_status).toBe(2);
    const docx = await h.get(done.download_url);
    expect(docx.status).toBe(200);
    expect(docx.body.subarray(0, 2).toString('latin1')).toBe('PK');

    // Find-solution: directions (from the kept choice), then the solution.
    const directions = await h.ok('ai33-4', { task_id: findSolution });
    expect(directions.status).toBe('SUCCEED');
    expect(directions.directions[0].verification).toContain(recommend[0]);
    await h.ok('ai33-5', { task_id: findSolution, lang: 'en' });
    h.advance(STEP_MS);
    expect((await h.ok('ai33-6', { task_id: findSolution })).status).toBe('SUCCEED');

    // Materials: the same mind map, board and nodes; the implementation plan started before is done.
    expect((await h.ok('ai73-5', { task_id: materials })).solution).toEqual(mindBefore);
    const plan = await h.ok('ai73-9', { task_id: materials, board_id, node_id });
    expect(plan.status).toBe('SUCCEED');
    expect(plan.markdown_message).toContain('# Implementation plan');

    // Pre-research: the directory it offered before the restart is accepted now.
    await h.ok('ai34-2', {
      report_id: preResearch.report_id,
      technical_issues: 'Solid-state batteries',
      analysis_directory: preResearch.analysis_directory,
    });
    h.advance(3 * STEP_MS);
    const preReport = await h.ok('ai34-3', { report_id: preResearch.report_id });
    expect(preReport.report_status).toBe('SUCCEED');
    expect((await h.get(preReport.report_url)).status).toBe(200);

    // The chat streams its answer.
    const stream = await h.call('ai68-2', { chat_id: chat.chat_id, chat_item_id: chat.chat_item_id });
    expect(stream.status).toBe(200);
    expect(dataFrames(stream.text).at(-1)).toBe('[DONE]');
  });

  it('keeps a task whose create answer was lost, so a caller that learns its id can go on', async () => {
    let h = await start({ faults: [{ kind: 'reset', when: 'after', operation: 'ai35-1', times: 1 }] });
    await expect(h.call('ai35-1', { input: IDEA, lang: 'en' })).rejects.toThrow();
    const taskId = h.sandbox.ledger.entries({ operationId: 'ai35-1' })[0]?.resourceId;
    expect(taskId).toMatch(/^[0-9a-f]{32}$/);
    h = await restart();
    expect(await h.ok('ai35-2', { task_id: taskId })).toEqual({ status: 1 });
  });

  it('serves links handed out before a restart at the same address, and expires them by the clock', async () => {
    let h = await start({ linkTtlMs: 60_000 });
    const { report_id } = await h.ok('ai34-1', { technical_issues: 'Solid-state batteries' });
    h.advance(STEP_MS);
    const { report_url: download_url } = await h.ok('ai34-3', { report_id });
    const before = await h.get(download_url);
    expect(before.body.toString('utf8')).toContain('Solid-state batteries');
    const port = h.sandbox.port;

    h = await restart();
    expect(h.sandbox.port).toBe(port);
    const after = await h.get(download_url);
    expect(after.status).toBe(200);
    expect(after.body.equals(before.body)).toBe(true);
    h.advance(60_000);
    expect((await h.get(download_url)).status).toBe(403);
  });

  it('listens elsewhere when its earlier port is taken, where the old link tokens still work', async () => {
    let h = await start();
    const { job_id } = await h.ok('ai32-2', {
      language: 'en',
      mechanism: 'Optics',
      tech_solution: 'A lens.',
    });
    h.advance(STEP_MS);
    const { download_url } = await h.ok('ai32-3', { job_id });
    const port = h.sandbox.port;
    await h.close();
    harness = undefined;
    const blocker = createServer();
    blockers.push(blocker);
    await new Promise<void>((resolve) => blocker.listen(port, '127.0.0.1', resolve));

    h = await start();
    expect(h.sandbox.port).not.toBe(port);
    const moved = await h.get(`${h.sandbox.url}${new URL(download_url).pathname}`);
    expect(moved.status).toBe(200);
    expect(savedState().port).toBe(h.sandbox.port);
  });

  it('never hands out an id again after a restart, though ids follow the seed', async () => {
    const create = async (h: TestSandbox) =>
      (await h.ok('ai35-1', { input: IDEA, lang: 'en' })).task_id as string;
    let h = await start({ seed: 7 });
    const before = [await create(h), await create(h), await create(h)];
    h = await restart({ seed: 7 });
    const after = [await create(h), await create(h), await create(h)];
    expect(new Set([...before, ...after]).size).toBe(6);
    for (const taskId of before) expect((await h.ok('ai35-2', { task_id: taskId })).status).toBe(1);

    // The same seed without the file starts the sequence over: the file is what prevents reuse.
    const fresh = await startSandbox({ seed: 7, port: 0 });
    try {
      const answer = await fetch(`${fresh.url}${findOperation('ai35-1')?.path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${fresh.apiKeys[0]}`, 'content-type': 'application/json' },
        body: JSON.stringify({ input: IDEA, lang: 'en' }),
      }).then((response) => response.json() as Promise<{ data: { task_id: string } }>);
      expect(answer.data.task_id).toBe(before[0]);
    } finally {
      await fresh.close();
    }
  });

  it('keeps the call counts of keys with a quota', async () => {
    const keys = [{ key: 'quota-key', quota: 3 }];
    let h = await start({ keys });
    const count = (h: TestSandbox) =>
      h.call('p001', { query_text: 'TACD:(lamp)' }, { key: 'quota-key' }).then((answer) => answer.json);
    expect((await count(h)).status).toBe(true);
    expect((await count(h)).status).toBe(true);
    h = await restart({ keys });
    expect((await count(h)).status).toBe(true);
    expect(await count(h)).toMatchObject({ status: false, error_code: PlatformCode.quotaExhausted });
    expect(JSON.stringify(savedState())).not.toContain('quota-key');
  });

  it('writes the file before answering, and only when something durable changed', async () => {
    const h = await start();
    const { task_id } = await h.ok('ai35-1', { input: IDEA, lang: 'en' });
    // The answer came after the write: the file already holds the task.
    expect(Object.keys(savedState().registries.novelty)).toEqual([task_id]);
    const written = readFileSync(stateFile, 'utf8');
    h.advance(STEP_MS / 2);
    for (let poll = 0; poll < 3; poll++) await h.ok('ai35-2', { task_id });
    await h.ok('p001', { query_text: 'TACD:(lamp)' });
    expect(readFileSync(stateFile, 'utf8')).toBe(written);
    h.advance(STEP_MS);
    await h.ok('ai35-3', { task_id });
    expect(savedState().registries.novelty[task_id].confirmedSummary).toContain('telephone');
  });

  it('moves a corrupt file aside, says why, and starts empty instead of using it', async () => {
    const cases: { content: (valid: string) => string; problem: RegExp }[] = [
      { content: (valid) => valid.slice(0, valid.length / 2), problem: /it is not JSON/ },
      { content: () => '{"hello": "world"}', problem: /not a sandbox state file/ },
      {
        content: (valid) => valid.replace('"version":1', '"version":2'),
        problem: /version 2, and this sandbox reads version 1 only/,
      },
      {
        content: (valid) => valid.replace(/"durationMs":\d+/, '"durationMs":"soon"'),
        problem: /novelty\.[0-9a-f]{32}\.summaryStage\.durationMs: expected number/,
      },
    ];
    for (const { content, problem } of cases) {
      rmSync(dir, { recursive: true, force: true });
      let h = await start({ seed: 3 });
      const { task_id } = await h.ok('ai35-1', { input: IDEA, lang: 'en' });
      await h.close();
      harness = undefined;
      const bad = content(readFileSync(stateFile, 'utf8'));
      writeFileSync(stateFile, bad);

      h = await start({ seed: 3 });
      const report = h.sandbox.state;
      expect(report?.outcome).toBe('moved-aside');
      expect(report?.problem).toMatch(problem);
      expect(readFileSync(report?.movedTo ?? '', 'utf8')).toBe(bad);
      expect(describeStateReport(report!)).toContain(`moved it to ${report?.movedTo} and started empty`);
      expect((await h.call('ai35-2', { task_id })).status).toBe(404);
      // Nor is the id handed out again, though the seed is the same.
      expect((await h.ok('ai35-1', { input: IDEA, lang: 'en' })).task_id).not.toBe(task_id);
      // The file is this sandbox's now.
      expect(savedState()).toMatchObject({ format: 'opflow-sandbox-state', version: 1 });
      await h.close();
      harness = undefined;
    }
  });

  it('starts from the committed file when a killed write left a truncated temporary file', async () => {
    let h = await start();
    const { task_id } = await h.ok('ai35-1', { input: IDEA, lang: 'en' });
    const committed = readFileSync(stateFile, 'utf8');
    await h.close();
    harness = undefined;
    writeFileSync(`${stateFile}.tmp`, committed.slice(0, 40));

    h = await start();
    expect(h.sandbox.state?.outcome).toBe('restored');
    expect((await h.ok('ai35-2', { task_id })).status).toBe(1);
    expect(existsSync(`${stateFile}.tmp`)).toBe(false);
  });

  it('refuses a file another live sandbox holds, and one written with another seed', async () => {
    const first = await start();
    await expect(startSandbox({ stateFile, port: 0 })).rejects.toThrow(StateFileInUseError);
    await expect(startSandbox({ stateFile, port: 0 })).rejects.toThrow(`in use by process ${process.pid}`);
    await first.close();
    harness = undefined;

    await expect(startSandbox({ stateFile, port: 0, seed: 2 })).rejects.toThrow(
      /written by a sandbox with seed 1, not 2: start with seed 1, or use another file/,
    );
    // Neither refusal took the file.
    const again = await start();
    expect(again.sandbox.state?.outcome).toBe('restored');
  });
});
