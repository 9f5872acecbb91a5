// The PartialAnswerStore contract on the local database: the text so far in `partial_answers`, the
// parts in the change log that `opflow serve`'s feed reads (here through a second connection, as
// another process would).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openLocalDatabase } from '../../shared/backends/local/database';
import { SqliteChangeLog } from '../../shared/backends/local/sqlite-change-log';
import { SqlitePartialAnswers } from '../../shared/backends/local/sqlite-partial-answers';
import { answer, describePartialAnswerContract } from './partial-answers.contract';

const folders: string[] = [];
afterAll(() => {
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

function openPair() {
  const folder = mkdtempSync(join(tmpdir(), 'opflow-partial-'));
  folders.push(folder);
  const writer = openLocalDatabase(join(folder, 'opflow.db'));
  const reader = openLocalDatabase(join(folder, 'opflow.db'));
  return { writer, reader };
}

describePartialAnswerContract('SqlitePartialAnswers', async () => {
  const { writer, reader } = openPair();
  const log = new SqliteChangeLog(reader);
  return {
    store: new SqlitePartialAnswers(writer),
    changes: () => log.after(0, 100),
    now: Date.now,
  };
});

describe('SqlitePartialAnswers before any feed', () => {
  it('keeps the text so far without making the change log, and logs parts once a feed made it', async () => {
    const { writer, reader } = openPair();
    const store = new SqlitePartialAnswers(writer);
    await store.publish(answer({ jobId: 'J1', text: 'early', offset: 0 }));
    const tables = () =>
      reader.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'job_changes'").all();
    expect(tables()).toEqual([]);
    expect((await store.read('J1'))?.text).toBe('early');
    const log = new SqliteChangeLog(reader);
    await store.publish(answer({ jobId: 'J1', text: 'early and late', offset: 5 }));
    expect((await log.after(0, 10)).map((change) => change.answer)).toEqual([
      { step: 'ai50', offset: 5, text: ' and late' },
    ]);
  });

  it('adds the answer columns to a change log an older opflow made', async () => {
    const { writer, reader } = openPair();
    reader.exec(`CREATE TABLE job_changes (
      seq INTEGER PRIMARY KEY AUTOINCREMENT, kind TEXT NOT NULL, id TEXT NOT NULL, tenant TEXT NOT NULL,
      batch_id TEXT, workflow TEXT, status TEXT NOT NULL, step TEXT, version INTEGER NOT NULL,
      previous_status TEXT, previous_step TEXT, at INTEGER NOT NULL) STRICT`);
    const store = new SqlitePartialAnswers(writer);
    await store.publish(answer({ jobId: 'J2', workflow: 'encyclopedia-qa', step: 'answer', text: 'PD-L1' }));
    const log = new SqliteChangeLog(reader);
    expect((await log.after(0, 10)).map((change) => [change.kind, change.answer?.text])).toEqual([
      ['answer', 'PD-L1'],
    ]);
  });
});
