// `npm run cost:idle` on a synthesized stage: every alarm, secret, dashboard, timer and SQS event
// source of the template is a line of the idle bill, priced at the list prices the script states,
// and the totals add up; metric-math alarms count each metric they read.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  DEFAULT_IDLE_ASSUMPTIONS,
  HOURS_PER_MONTH,
  idleCost,
  invocationsPerMonth,
  jobCost,
  NOVELTY_CHECK,
  PRICES,
  readTemplate,
  type Template,
} from '../../../scripts/cost-idle';
import { synthStage } from '../support/synth-stage';

let template: Template;
beforeAll(() => {
  template = synthStage({ stage: 'dev' }, { bundle: false }).template.toJSON() as Template;
}, 180_000);

const resourcesOf = (type: string) =>
  Object.entries(template.Resources).filter(([, resource]) => resource.Type === type);

describe('the idle cost of a stage', () => {
  it('prices every alarm metric, secret and dashboard of the template as fixed charges', () => {
    const idle = idleCost(template);
    const alarms = resourcesOf('AWS::CloudWatch::Alarm');
    const alarmLine = idle.lines.find((line) => line.item.startsWith('CloudWatch alarms'));
    expect(alarmLine?.item).toBe(`CloudWatch alarms (${alarms.length})`);
    // The failed-job rate and table throttles alarms are metric math: more metrics than alarms.
    expect(alarmLine?.quantity).toBeGreaterThan(alarms.length);
    expect(alarmLine?.monthly).toBeCloseTo((alarmLine?.quantity ?? 0) * PRICES.alarmMetricMonth, 4);
    const secrets = resourcesOf('AWS::SecretsManager::Secret').length;
    expect(secrets).toBeGreaterThan(0);
    expect(idle.lines.find((line) => line.item === 'Secrets Manager secrets')?.monthly).toBeCloseTo(
      secrets * PRICES.secretMonth,
      4,
    );
    expect(idle.dashboard).toBe(PRICES.dashboardMonth);
  });

  it("prices the sweeper's minute timer at the sweeper's memory, and each SQS event source's polling", () => {
    const idle = idleCost(template);
    const sweeper = resourcesOf('AWS::Lambda::Function').find(
      ([, fn]) => fn.Properties?.['FunctionName'] === 'opflow-dev-sweeper',
    )?.[1];
    const memoryGb = Number(sweeper?.Properties?.['MemorySize']) / 1024;
    const invocations = idle.lines.find((line) => line.item.startsWith('opflow-dev-sweeper: invocations'));
    expect(invocations?.quantity).toBe(HOURS_PER_MONTH * 60);
    const expected =
      (HOURS_PER_MONTH * 60 * PRICES.lambdaRequestMillion) / 1e6 +
      HOURS_PER_MONTH * 60 * (DEFAULT_IDLE_ASSUMPTIONS.sweepMs / 1000) * memoryGb * PRICES.lambdaArmGbSecond;
    expect(invocations?.monthly).toBeCloseTo(expected, 4);
    const polling = idle.lines.filter((line) => line.item.startsWith('SQS polling'));
    // The SQS event sources only: Lambda reads a DynamoDB stream (the events and callback functions') at no charge.
    const queueIds = new Set(resourcesOf('AWS::SQS::Queue').map(([id]) => id));
    const sqsMappings = resourcesOf('AWS::Lambda::EventSourceMapping').filter(([, mapping]) =>
      queueIds.has(
        String(
          (mapping.Properties?.['EventSourceArn'] as { 'Fn::GetAtt'?: string[] } | undefined)?.[
            'Fn::GetAtt'
          ]?.[0],
        ),
      ),
    );
    expect(sqsMappings.length).toBeGreaterThanOrEqual(1);
    expect(polling).toHaveLength(sqsMappings.length);
    for (const line of polling) {
      expect(line.monthly).toBeCloseTo(
        (DEFAULT_IDLE_ASSUMPTIONS.emptyReceivesPerMinute * HOURS_PER_MONTH * 60 * PRICES.sqsRequestMillion) /
          1e6,
        4,
      );
    }
    // The goal: compute at idle at most $0.50 a month (the ingest function has no event source).
    expect(idle.compute).toBeLessThanOrEqual(0.5);
    // A slower idle sweep costs more: the assumption is used, not a constant.
    const slower = idleCost(template, { ...DEFAULT_IDLE_ASSUMPTIONS, sweepMs: 2_000 });
    expect(slower.compute).toBeGreaterThan(idle.compute);
  });

  it('adds up: compute and fixed make the total; without the dashboard is the total less the dashboard', () => {
    const idle = idleCost(template);
    const sum = (kind: string) =>
      idle.lines.filter((line) => line.kind === kind).reduce((total, line) => total + line.monthly, 0);
    expect(idle.compute).toBeCloseTo(sum('compute'), 3);
    expect(idle.fixed).toBeCloseTo(sum('fixed'), 3);
    expect(idle.total).toBeCloseTo(idle.compute + idle.fixed, 3);
    expect(idle.totalWithoutDashboard).toBeCloseTo(idle.total - idle.dashboard, 3);
    // The goal: the whole stage at most $3 a month with the optional dashboard off.
    expect(idle.totalWithoutDashboard).toBeLessThanOrEqual(3);
  });

  it('drops the dashboard, its output and its $3 when the stage turns it off; the alarms stay', () => {
    const settings = { stages: { dev: { cloudWatchDashboard: false } } };
    const { template: without } = synthStage(
      { stage: 'dev', opflowStack: JSON.stringify(settings) },
      { bundle: false },
    );
    without.resourceCountIs('AWS::CloudWatch::Dashboard', 0);
    expect(Object.keys(without.findOutputs('DashboardName'))).toEqual([]);
    without.resourceCountIs('AWS::CloudWatch::Alarm', resourcesOf('AWS::CloudWatch::Alarm').length);
    const idle = idleCost(without.toJSON() as Template);
    expect(idle.dashboard).toBe(0);
    expect(idle.total).toBeCloseTo(idleCost(template).totalWithoutDashboard, 3);
    expect(idle.total).toBeLessThanOrEqual(3);
  }, 180_000);

  it("gives a novelty check's marginal cost from the bench's figures and the worker's memory", () => {
    const job = jobCost(template);
    const writes = job.lines.find((line) => line.item === 'DynamoDB writes');
    expect(writes?.dollars).toBeCloseTo((NOVELTY_CHECK.writeUnits * PRICES.dynamoWriteMillion) / 1e6, 9);
    expect(job.total).toBeCloseTo(
      job.lines.reduce((total, line) => total + line.dollars, 0),
      12,
    );
    const slower = jobCost(template, { ...NOVELTY_CHECK, stepMs: 3_000 });
    expect(slower.total).toBeGreaterThan(job.total);
  });
});

describe('the pieces', () => {
  it('counts the metrics of a metric-math alarm, high resolution apart', () => {
    const hand: Template = {
      Resources: {
        Plain: { Type: 'AWS::CloudWatch::Alarm', Properties: { Period: 300 } },
        Fast: { Type: 'AWS::CloudWatch::Alarm', Properties: { Period: 10 } },
        Math: {
          Type: 'AWS::CloudWatch::Alarm',
          Properties: {
            Metrics: [
              { Id: 'a', MetricStat: { Period: 300 } },
              { Id: 'b', MetricStat: { Period: 300 } },
              { Id: 'e', Expression: 'a / b' },
            ],
          },
        },
      },
    };
    const line = idleCost(hand).lines.find((l) => l.item.startsWith('CloudWatch alarms'));
    expect(line?.quantity).toBe(3);
    expect(line?.monthly).toBeCloseTo(3 * PRICES.alarmMetricMonth + PRICES.highResolutionAlarmMetricMonth, 4);
  });

  it('reads rate expressions, and leaves cron to the caller', () => {
    expect(invocationsPerMonth('rate(1 minute)')).toBe(43_800);
    expect(invocationsPerMonth('rate(5 minutes)')).toBe(8_760);
    expect(invocationsPerMonth('rate(1 day)')).toBeCloseTo(30.4167, 3);
    expect(invocationsPerMonth('cron(0 6 ? * MON *)')).toBeUndefined();
  });

  it('refuses a file that is not a template, naming it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'opflow-cost-'));
    const notJson = join(dir, 'a.json');
    writeFileSync(notJson, 'nope');
    expect(() => readTemplate(notJson)).toThrow(`${notJson}: not a JSON template`);
    const notTemplate = join(dir, 'b.json');
    writeFileSync(notTemplate, JSON.stringify({ Outputs: {} }));
    expect(() => readTemplate(notTemplate)).toThrow(`${notTemplate}: not a CloudFormation template`);
  });
});
