// A streamed answer shown as it arrives, on the local runtime wired for real (SQLite file, the
// built-in sandbox streaming a frame every 40 ms): this process is told every piece at once, the
// feed's change log carries the text so far at most every 250 ms while the job runs, and the job's
// committed result is the whole answer; no partial answer is a version of the job.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SqliteChangeLog } from '../../../shared/backends/local/sqlite-change-log';
import type { Change } from '../../../shared/engine/change-feed';
import { submitJob } from '../../../shared/engine/job-commands';
import type { AnswerText } from '../../../shared/engine/partial-answer';
import { loadLocalConfig } from '../../../shared/runtime/local/config';
import { createLocalPipeline, type LocalPipeline } from '../../../shared/runtime/local/pipeline';
import { workflows } from '../../../shared/workflows';

describe('a streamed answer on the local runtime', () => {
  let dir: string;
  let pipeline: LocalPipeline | undefined;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'opflow-streamed-'));
  });
  afterEach(async () => {
    await pipeline?.close();
    pipeline = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  it('is told piece by piece, published throttled while the job runs, and committed whole', async () => {
    pipeline = await createLocalPipeline({
      config: loadLocalConfig({ dbPath: join(dir, 'state', 'opflow.db'), outDir: join(dir, 'out') }, {}),
      workflows,
      env: {},
      announce: () => {},
      sandbox: { streamChunkDelayMs: 40 },
    });
    const p = pipeline;
    // A feed was opened (as opflow serve does): the answer's parts go into its change log.
    const log = new SqliteChangeLog(p.local.db);
    const pieces: AnswerText[] = [];
    p.onAnswerText((piece) => pieces.push(piece));
    const { job } = await submitJob(p.deps, {
      workflow: 'llm-chat',
      input: { text: 'Summarise the failure modes of solid-state battery separators.', model: 'ai50' },
    });
    p.start();
    const [done] = await p.waitForJobs([job.id]);
    expect(done?.status).toBe('SUCCEEDED');

    const output = JSON.parse(readFileSync(join(dir, 'out', job.id, 'steps', 'answer-ai50.json'), 'utf8'));
    const whole = pieces.map((piece) => piece.text).join('');
    expect(whole).toBe(output.text);
    expect(pieces.length).toBeGreaterThan(10);
    // Each piece says where it goes.
    let offset = 0;
    for (const piece of pieces) {
      expect(piece).toMatchObject({ jobId: job.id, step: 'answer-ai50', offset });
      offset += piece.text.length;
    }

    const changes: Change[] = await log.after(0, 10_000);
    const parts = changes.filter((change) => change.kind === 'answer');
    const jobChanges = changes.filter((change) => change.kind === 'job' && change.id === job.id);
    // Throttled: fewer publications than pieces, at least 250 ms apart (but the last, when the
    // stream ended), and the parts join into the answer.
    expect(parts.length).toBeGreaterThanOrEqual(3);
    expect(parts.length).toBeLessThan(pieces.length);
    for (let n = 1; n < parts.length - 1; n++)
      expect(parts[n]!.at - parts[n - 1]!.at).toBeGreaterThanOrEqual(250);
    expect(parts.map((change) => change.answer?.text).join('')).toBe(output.text);
    // Published while the job ran: before its last commit, and no job version came from them.
    const finished = jobChanges.find((change) => change.status === 'SUCCEEDED')!;
    expect(parts.every((change) => change.seq < finished.seq)).toBe(true);
    expect(parts.every((change) => change.status !== 'SUCCEEDED')).toBe(true);
    expect(new Set(jobChanges.map((change) => change.version)).size).toBe(jobChanges.length);
    expect(done!.version).toBe(Math.max(...jobChanges.map((change) => change.version)));
    expect((await (await p.partialAnswers()).read(job.id))?.text).toBe(output.text);
  }, 60_000);
});
