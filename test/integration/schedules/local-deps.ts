/** The engine's dependencies on a real local backend (SQLite) with a given clock, for tests that create jobs without running them. */
import type { LocalBackend } from '../../../shared/backends/local';
import type { EngineDeps } from '../../../shared/engine/deps';
import { writeJobReport } from '../../../shared/reports/write-job-report';
import { workflows } from '../../../shared/workflows';

export function localEngineDeps(local: LocalBackend, clock: EngineDeps['clock']): EngineDeps {
  return {
    store: local.store,
    queue: local.queue,
    reports: local.reports,
    keys: { getKey: async () => undefined, refresh: async () => undefined },
    rateLimiter: local.rateLimiter,
    clock,
    random: () => 0.5,
    client: {} as EngineDeps['client'],
    workflows,
    writeReport: writeJobReport,
  };
}
