// Runs the port contract suite against the local backend: SQLite (a real file), files.
import { mkdtempSync, rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  FileReportStore,
  openLocalDatabase,
  SqliteJobStore,
  SqliteRateLimiter,
  SqliteWorkQueue,
} from '../../shared/backends/local';
import {
  describeJobStoreContract,
  describeRateLimiterContract,
  describeReportStoreContract,
  describeSharedRateLimiterContract,
  describeWorkQueueContract,
} from './ports.contract';

function temporaryFolder(): { dir: string; dispose: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'opflow-contract-'));
  return { dir, dispose: () => rmSync(dir, { recursive: true, force: true }) };
}

describeJobStoreContract('SqliteJobStore', async () => {
  const folder = temporaryFolder();
  const db = openLocalDatabase(join(folder.dir, 'opflow.db'));
  return {
    subject: new SqliteJobStore(db),
    dispose: () => {
      db.close();
      folder.dispose();
    },
  };
});

describeWorkQueueContract('SqliteWorkQueue', async () => {
  const folder = temporaryFolder();
  const db = openLocalDatabase(join(folder.dir, 'opflow.db'));
  const clock = { now: () => 1_750_000_000_000 };
  const queue = new SqliteWorkQueue(db, { clock });
  return {
    subject: {
      queue,
      drain: async () => {
        const claimed = queue.claim(clock.now(), 1_000, 30_000);
        for (const { receipt } of claimed) queue.ack(receipt);
        return claimed.map(({ message }) => message);
      },
    },
    dispose: () => {
      db.close();
      folder.dispose();
    },
  };
});

describeReportStoreContract('FileReportStore', async () => {
  const folder = temporaryFolder();
  return {
    subject: {
      reports: new FileReportStore({ outDir: join(folder.dir, 'out') }),
      readLink: async (link) => new Uint8Array(await readFile(link)),
    },
    dispose: folder.dispose,
  };
});

describeRateLimiterContract('SqliteRateLimiter', async ({ ratePerSecond, burst }) => {
  const folder = temporaryFolder();
  const db = openLocalDatabase(join(folder.dir, 'opflow.db'));
  return {
    subject: new SqliteRateLimiter(db, { ratePerSecond, burst }),
    dispose: () => {
      db.close();
      folder.dispose();
    },
  };
});

// Two connections to one file, as two opflow processes have.
describeSharedRateLimiterContract('SqliteRateLimiter', async ({ ratePerSecond, burst }) => {
  const folder = temporaryFolder();
  const path = join(folder.dir, 'opflow.db');
  const databases = [openLocalDatabase(path), openLocalDatabase(path)] as const;
  return {
    subject: [
      new SqliteRateLimiter(databases[0], { ratePerSecond, burst }),
      new SqliteRateLimiter(databases[1], { ratePerSecond, burst }),
    ] as const,
    dispose: () => {
      for (const db of databases) db.close();
      folder.dispose();
    },
  };
});
