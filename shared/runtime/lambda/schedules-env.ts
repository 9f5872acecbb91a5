/**
 * The schedules a harness gives the functions as OPFLOW_SCHEDULES (a deployed stack reads them from
 * its config item): in a file of its own, so the functions that read them (api, webhooks,
 * schedules) do not carry each other's routes.
 */
import { opflowConfigSchema, type Schedule } from '../../config/opflow-config';
import { errorMessage } from '../../errors/error-message';
import { formatIssues } from '../../errors/zod-issues';

type Env = Readonly<Record<string, string | undefined>>;

/** The schedules of OPFLOW_SCHEDULES (a JSON list, as in opflow.config.json); none when unset. */
export function schedulesFromEnv(env: Env): Schedule[] {
  const raw = env.OPFLOW_SCHEDULES?.trim();
  if (!raw) return [];
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (error) {
    throw new Error(`OPFLOW_SCHEDULES is not JSON: ${errorMessage(error)}`);
  }
  const parsed = opflowConfigSchema.safeParse({ schedules: value });
  if (!parsed.success) throw new Error(`OPFLOW_SCHEDULES: ${formatIssues(parsed.error)}`);
  return parsed.data.schedules;
}
