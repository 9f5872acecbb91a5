/**
 * vitest globalSetup: a folder for the run in which the aws e2e files share the dev stage's rules,
 * synthesized by the first file that asks (`devStackRules`, test/e2e/aws/harness/template-rules.ts),
 * its path handed to the test processes in `OPFLOW_TEST_STACK_RULES`; removed when the run ends, so
 * the next run synthesizes from the sources as they are then. A run of unit tests never synthesizes.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The variable that holds the run's folder (read by test/e2e/aws/harness/template-rules.ts). */
export const STACK_RULES_HOME_ENV = 'OPFLOW_TEST_STACK_RULES';

export default async function setup(): Promise<() => Promise<void>> {
  const home = await mkdtemp(join(tmpdir(), 'opflow-stack-rules-'));
  process.env[STACK_RULES_HOME_ENV] = home;
  return async () => {
    delete process.env[STACK_RULES_HOME_ENV];
    await rm(home, { recursive: true, force: true });
  };
}
