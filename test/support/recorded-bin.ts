/**
 * The world of the e2e tests that run the real bin against an upstream of their own that records
 * every request (a sandbox behind it): a fresh folder with its own job database and report folder,
 * the recorder with its own key, `opflow` to run the bin there against it, and `sandbox` to run it
 * on the same folder and database without a key (the built-in sandbox). Call `startRecordedBin` in
 * `beforeAll` and `close` in `afterAll`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { childEnv, killRunningOpflows, type OpflowResult, runOpflow } from '../e2e/local/opflow-process';
import { type RecordingUpstream, startRecordingUpstream } from '../e2e/reports/recording-upstream';

export interface RecordedBin {
  /** The test's folder: the bin's working directory, with `jobs.db` and the reports under `out/`. */
  dir: string;
  upstream: RecordingUpstream;
  /** The bin's environment against the recorder (its key and base URL). */
  env: NodeJS.ProcessEnv;
  /** The same environment without a key: the built-in sandbox, on the same database and reports. */
  sandboxEnv: NodeJS.ProcessEnv;
  /** Runs `bin/opflow.js` with `args` in `dir`, against the recorder. */
  opflow(...args: string[]): Promise<OpflowResult>;
  /** Runs `bin/opflow.js` with `args` in `dir` on the built-in sandbox. */
  sandbox(...args: string[]): Promise<OpflowResult>;
  /** A path under the report folder (`out/`). */
  out(...parts: string[]): string;
  /** The requests whose path starts with `prefix` (query strings included in `path`). */
  requestsTo(prefix: string): RecordingUpstream['requests'];
  close(): Promise<void>;
}

/** Starts the recorder (keyed `apiKey`, its sandbox at `speed`) and a folder for the bin. */
export async function startRecordedBin(prefix: string, apiKey: string, speed = 400): Promise<RecordedBin> {
  const dir = mkdtempSync(join(tmpdir(), `opflow-e2e-${prefix}-`));
  const upstream = await startRecordingUpstream(apiKey, speed);
  const common = {
    OPFLOW_SANDBOX_SPEED: String(speed),
    OPFLOW_DB: join(dir, 'jobs.db'),
    OPFLOW_OUT: join(dir, 'out'),
  };
  const env = childEnv({ ...common, OPFLOW_API_KEY: upstream.apiKey, OPFLOW_BASE_URL: upstream.url });
  const sandboxEnv = childEnv(common);
  return {
    dir,
    upstream,
    env,
    sandboxEnv,
    opflow: (...args) => runOpflow(args, { env, cwd: dir }),
    sandbox: (...args) => runOpflow(args, { env: sandboxEnv, cwd: dir }),
    out: (...parts) => join(dir, 'out', ...parts),
    requestsTo: (path) => upstream.requests.filter((request) => request.path.startsWith(path)),
    close: async () => {
      killRunningOpflows();
      await upstream.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
