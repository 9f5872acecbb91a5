/**
 * Factories for test data: a valid job record with every optional field unset unless given.
 * Shared by the port contract suite, the engine's unit tests and the API tests.
 */
import { ulid } from 'ulid';
import { emptyUsage, type Job } from '../../shared/engine/job-record';

/** A fixed instant the factories' times are based on. */
export const T0 = 1_750_000_000_000;

/** A valid job in status QUEUED with every optional field unset unless given. */
export function makeJob(overrides: Partial<Job> = {}): Job {
  return {
    id: ulid(),
    workflow: 'novelty-check',
    workflowVersion: 1,
    tenant: 'default',
    status: 'QUEUED',
    step: 'submit',
    version: 1,
    input: { inline: { text: 'A hinge that folds twice.' } },
    context: {},
    selection: { mode: 'auto' },
    selections: {},
    attempts: 0,
    polls: 0,
    intents: {},
    nextRunAt: T0,
    deadlineAt: T0 + 3_600_000,
    usage: emptyUsage(),
    outputs: [],
    source: 'cli',
    createdAt: T0,
    updatedAt: T0,
    ...overrides,
  };
}
