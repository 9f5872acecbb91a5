/**
 * The world of the tests that run the real bin against an upstream of their own that records every
 * request (a sandbox behind it): a fresh folder with its own job database and report folder, the
 * recorder with its own key, and `opflow` to run the bin there. Call `start` in `beforeAll` and
 * `close` in `afterAll`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { childEnv, killRunningOpflows, type OpflowResult, runOpflow } from '../local/opflow-process';
import { type RecordingUpstream, startRecordingUpstream } from '../reports/recording-upstream';

export interface RecordedBin {
  /** The test's folder: the bin's working directory, with `jobs.db` and the reports under `out/`. */
  dir: string;
  upstream: RecordingUpstream;
  env: NodeJS.ProcessEnv;
  /** Runs `bin/opflow.js` with `args` in `dir`, against the recorder. */
  opflow(...args: string[]): Promise<OpflowResult>;
  /** The requests whose path starts with `prefix` (query strings included in `path`). */
  requestsTo(prefix: string): RecordingUpstream['requests'];
  close(): Promise<void>;
}

/** Starts the recorder (keyed `apiKey`, its sandbox at `speed`) and a folder for the bin. */
export async function startRecordedBin(prefix: string, apiKey: string, speed = 400): Promise<RecordedBin> {
  const dir = mkdtempSync(join(tmpdir(), `opflow-e2e-${prefix}-`));
  const upstream = await startRecordingUpstream(apiKey, speed);
  const env = childEnv({
    OPFLOW_SANDBOX_SPEED: String(speed),
    OPFLOW_DB: join(dir, 'jobs.db'),
    OPFLOW_OUT: join(dir, 'out'),
    OPFLOW_API_KEY: upstream.apiKey,
    OPFLOW_BASE_URL: upstream.url,
  });
  return {
    dir,
    upstream,
    env,
    opflow: (...args) => runOpflow(args, { env, cwd: dir }),
    requestsTo: (path) => upstream.requests.filter((request) => request.path.startsWith(path)),
    close: async () => {
      killRunningOpflows();
      await upstream.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
