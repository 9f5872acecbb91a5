/**
 * Reports expire with the job records: by default a job's objects (`reports/<jobId>/...`) expire a
 * day after the record's retention (the TTL the engine sets), and a stage may choose another expiry,
 * none, or a move to Standard-IA that leaves the 30 days Standard-IA bills for.
 */
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_REPORT_EXPIRY_DAYS,
  JOB_RETENTION_DAYS,
  loadStageConfig,
  parseStackSettings,
} from '../../../infra/config';
import { finishedRetentionMs } from '../../../shared/engine/advance';
import { synthStage } from '../support/synth-stage';

type Rule = Record<string, unknown>;

/** The lifecycle rules of the report bucket of the stage the settings describe. */
function reportBucketRules(retention: Record<string, unknown> | undefined): Rule[] {
  const opflowStack = JSON.stringify({ stages: { qa: retention ? { retention } : {} } });
  const { stack, template } = synthStage({ stage: 'qa', opflowStack }, { bundle: false });
  const id = stack.getLogicalId(stack.storage.reportBucket.node.defaultChild as never);
  const bucket = template.findResources('AWS::S3::Bucket')[id];
  if (!bucket) throw new Error(`no report bucket ${id} in the template`);
  return (bucket['Properties']['LifecycleConfiguration'] as { Rules: Rule[] }).Rules;
}

describe('report expiry', () => {
  it("is by default the job record's retention plus the default one-day deadline", () => {
    expect(JOB_RETENTION_DAYS * 24 * 3_600_000).toBe(finishedRetentionMs);
    expect(DEFAULT_REPORT_EXPIRY_DAYS).toBe(JOB_RETENTION_DAYS + 1);
    for (const stage of ['dev', 'prod'])
      expect(loadStageConfig(stage).retention.reportExpiryDays).toBe(DEFAULT_REPORT_EXPIRY_DAYS);
    const rules = reportBucketRules(undefined);
    expect(rules.filter((rule) => 'ExpirationInDays' in rule)).toEqual([
      { Id: 'expire-reports', Prefix: 'reports/', ExpirationInDays: 31, Status: 'Enabled' },
    ]);
    // Nothing moves to Standard-IA: it would bill 30 days for objects kept a few more.
    expect(rules.filter((rule) => 'Transitions' in rule)).toEqual([]);
  }, 120_000);

  it('follows the stage: a longer expiry with a move to Standard-IA, or none at all', () => {
    const longer = reportBucketRules({ reportExpiryDays: 400, reportTransitionDays: 90 });
    expect(longer).toEqual(
      expect.arrayContaining([
        { Id: 'expire-reports', Prefix: 'reports/', ExpirationInDays: 400, Status: 'Enabled' },
        {
          Id: 'reports-to-infrequent-access',
          Transitions: [{ StorageClass: 'STANDARD_IA', TransitionInDays: 90 }],
          Status: 'Enabled',
        },
      ]),
    );
    const kept = reportBucketRules({ reportExpiryDays: false });
    expect(kept.filter((rule) => 'ExpirationInDays' in rule)).toEqual([]);
    // Old versions still go: keeping reports is not keeping every overwritten copy.
    expect(kept.some((rule) => 'NoncurrentVersionExpiration' in rule)).toBe(true);
  }, 120_000);

  it('refuses a move to Standard-IA that the expiry would cut short, naming the field', () => {
    expect(() =>
      parseStackSettings(
        { stages: { qa: { retention: { reportTransitionDays: 30 } } } },
        'opflow.stack.json',
      ),
    ).toThrow(
      'opflow.stack.json: stages.qa.retention.reportTransitionDays: must be at most 1 (retention.reportExpiryDays 31 minus the 30 days Standard-IA bills at least), or left out',
    );
    expect(() =>
      parseStackSettings({ stages: { qa: { retention: { reportExpiryDays: 0 } } } }, 'opflow.stack.json'),
    ).toThrow(/stages\.qa\.retention\.reportExpiryDays: /);
    expect(
      parseStackSettings(
        { stages: { qa: { retention: { reportExpiryDays: false, reportTransitionDays: 30 } } } },
        'opflow.stack.json',
      ).stages['qa'],
    ).toBeDefined();
  });
});
