/**
 * The job the code before typed step handles (e646880) left parked at its feature selection
 * (test/fixtures/pre-handles/README.md), and what resuming it with today's code must give: shared
 * by the SQLite run (test/e2e/workflows/persisted-jobs.test.ts) and the DynamoDB Local run
 * (test/e2e/aws/persisted-jobs.test.ts).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { expect } from 'vitest';
import type { Job } from '../../shared/engine';

export const preHandlesFixture = join(__dirname, '../fixtures/pre-handles/novelty-check-at-features');

/** The job record as e646880's SQLite store returned it, and the clock then. */
export const parked = JSON.parse(readFileSync(join(preHandlesFixture, 'parked.json'), 'utf8')) as {
  clockNow: number;
  job: Job;
};

/** The job's item as e646880's DynamoDbJobStore wrote it (GetItem's `Item`, attribute values typed). */
export const parkedItem = (
  JSON.parse(readFileSync(join(preHandlesFixture, 'dynamodb-item.json'), 'utf8')) as {
    Item: Record<string, AttributeValue>;
  }
).Item;

/** The step outputs the earlier code kept, by report-store key (`reports/<id>/steps/<name>.json`). */
export function keptStepOutputs(): { key: string; body: Buffer }[] {
  const dir = join(preHandlesFixture, 'out', parked.job.id, 'steps');
  return readdirSync(dir)
    .sort()
    .map((name) => ({ key: `reports/${parked.job.id}/steps/${name}`, body: readFileSync(join(dir, name)) }));
}

/** The job as the earlier code left it: names, not handles. */
export function expectParkedByName(job: Job): void {
  expect(job).toMatchObject({
    status: 'AWAITING_INPUT',
    step: 'features',
    pending: { step: 'features', nextStep: 'confirm-features' },
    context: { taskId: expect.any(String) },
  });
}

/**
 * The calls after the answer, from the confirmation of the features on: the upstream task the
 * earlier code created, no new submit.
 */
export const callsAfterAnswer = ['ai35-5', 'ai35-6', 'ai35-7', 'ai35-8', 'ai35-10', 'ai35-11', 'download'];

export interface ResumedReport {
  markdown: string;
  result: {
    steps: Record<string, unknown>;
    attachments: unknown[];
    selections: Record<string, string[]>;
    usage: { calls: number };
  };
}

/** The finished job's report: the kept outputs read back by name, the chosen feature searched, usage carried on. */
export function expectResumedReport({ markdown, result }: ResumedReport): void {
  expect(result.selections).toEqual({ features: ['f2'] });
  // The outputs the earlier code kept are read back by name, beside the new ones.
  expect(Object.keys(result.steps)).toEqual(
    expect.arrayContaining([
      'submit',
      'summary',
      'confirm-summary',
      'features',
      'confirm-features',
      'agent-result',
    ]),
  );
  // confirm-features sent the chosen feature of the kept features output: the search compared only it.
  const kept = JSON.parse(
    readFileSync(join(preHandlesFixture, 'out', parked.job.id, 'steps', 'features.json'), 'utf8'),
  ) as { data: { feature_text: string }[] };
  const chosen = kept.data[1]!.feature_text;
  type Found = { features: { tech_feature: string }[] };
  const found = (result.steps['agent-result'] as { final_result: Found[] }).final_result;
  expect(found.length).toBeGreaterThan(0);
  expect(new Set(found.flatMap((doc) => doc.features.map((f) => f.tech_feature)))).toEqual(new Set([chosen]));
  expect(result.attachments).toHaveLength(1);
  expect(markdown).toContain('# Novelty check: A folding bicycle frame');
  // The calls before the selection were paid once, by the earlier code: the usage goes on from there.
  expect(result.usage.calls).toBeGreaterThan(parked.job.usage.calls);
}
