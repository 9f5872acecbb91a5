/**
 * vitest globalSetup: before any suite runs, rebuild the CLI (dist/cli) when a source file changed
 * since its last build, so the end-to-end tests that run the real bin/opflow.js test the code as it
 * is now, and no test process pays for a rebuild on its own.
 */
import { ensureCliBuilt } from '../../scripts/build-cli.mjs';

export default async function setup(): Promise<void> {
  const { reason } = await ensureCliBuilt();
  if (reason) process.stdout.write(`opflow CLI rebuilt before the tests (${reason})\n`);
}
