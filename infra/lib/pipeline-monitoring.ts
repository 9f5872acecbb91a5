/**
 * What tells a person opflow on AWS is unwell: alarms (dead letters, a stuck queue, function errors
 * and throttles, a high failed-job rate) notifying one SNS topic, and a dashboard of the queue, the
 * functions and the pipeline's own metrics (published by Powertools in namespace `opflow`, with the
 * stage's service name as their one `service` dimension).
 */
import { Duration, Validations } from 'aws-cdk-lib';
import {
  Alarm,
  ComparisonOperator,
  Dashboard,
  GraphWidget,
  MathExpression,
  Metric,
  SingleValueWidget,
  Stats,
  TextWidget,
  TreatMissingData,
} from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { type ITopic, Topic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { StageConfig } from '../config';

/**
 * Namespace and names of the pipeline's custom metrics, as shared/runtime/lambda/observability.ts emits
 * them. Their one dimension is `service` (Powertools adds it to every metric), whose value is the
 * function's POWERTOOLS_SERVICE_NAME: the stack sets the stage's resource prefix there.
 */
export const PIPELINE_METRICS = {
  namespace: 'opflow',
  names: ['StepsRun', 'Retries', 'UpstreamCalls', 'BilledUnits', 'JobSucceeded', 'JobFailed'],
} as const;

/** A pipeline metric's name. */
export type PipelineMetricName = (typeof PIPELINE_METRICS.names)[number];

/** Window of the failed-job rate alarm. */
const FAILED_JOB_RATE_PERIOD = Duration.minutes(15);

/** Settings of {@link PipelineMonitoring}. */
export interface PipelineMonitoringProps {
  readonly resourcePrefix: string;
  readonly queue: IQueue;
  readonly deadLetterQueue: IQueue;
  /** Every other dead-letter queue, by the name shown in its alarm (e.g. `ingest`): any message alarms. */
  readonly otherDeadLetterQueues?: Readonly<Record<string, IQueue>> | undefined;
  /** The functions to watch, by the name shown in alarms and on the dashboard. */
  readonly functions: Readonly<Record<string, IFunction>>;
  /**
   * Functions whose failures another alarm already covers (a stream source's failed batches go to
   * a dead-letter queue that alarms): no errors alarm of their own. Default none.
   */
  readonly errorsCoveredElsewhere?: readonly string[] | undefined;
  /** The `service` dimension of the pipeline metrics: the functions' POWERTOOLS_SERVICE_NAME. */
  readonly metricsService: string;
  readonly alarms: StageConfig['alarms'];
  /** Whether to create the CloudWatch dashboard (default true). */
  readonly dashboard?: boolean | undefined;
  /** The job table: an alarm when DynamoDB throttles any request to it or its indexes. */
  readonly table?: ITable | undefined;
}

/** The alarm topic, the alarms and the dashboard (unless turned off). */
export class PipelineMonitoring extends Construct {
  readonly topic: ITopic;
  readonly alarms: Alarm[] = [];
  readonly dashboard: Dashboard | undefined;

  constructor(scope: Construct, id: string, props: PipelineMonitoringProps) {
    super(scope, id);
    const prefix = props.resourcePrefix;
    const pipelineMetric = (name: PipelineMetricName, period = Duration.minutes(5)) =>
      new Metric({
        namespace: PIPELINE_METRICS.namespace,
        metricName: name,
        dimensionsMap: { service: props.metricsService },
        statistic: Stats.SUM,
        period,
        label: name,
      });
    this.topic = props.alarms.snsTopicArn
      ? Topic.fromTopicArn(this, 'AlarmTopic', props.alarms.snsTopicArn)
      : this.createTopic(prefix, props.alarms.email);
    const action = new SnsAction(this.topic);
    const addAlarm = (alarm: Alarm) => {
      alarm.addAlarmAction(action);
      alarm.addOkAction(action);
      this.alarms.push(alarm);
      return alarm;
    };

    addAlarm(
      new Alarm(this, 'DeadLetterQueueDepth', {
        alarmName: `${prefix}-dead-letters`,
        alarmDescription:
          'Messages reached the dead-letter queue: a step failed maxReceiveCount times. Inspect them, fix the cause, ' +
          'then redrive them to the work queue.',
        metric: props.deadLetterQueue.metricApproximateNumberOfMessagesVisible({
          period: Duration.minutes(1),
          statistic: Stats.MAXIMUM,
        }),
        threshold: 0,
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      }),
    );
    for (const [name, queue] of Object.entries(props.otherDeadLetterQueues ?? {})) {
      addAlarm(
        new Alarm(this, `${name}DeadLetters`, {
          alarmName: `${prefix}-${name}-dead-letters`,
          alarmDescription: `Messages reached the ${name} dead-letter queue: inspect them, fix the cause, then redrive them.`,
          metric: queue.metricApproximateNumberOfMessagesVisible({
            period: Duration.minutes(5),
            statistic: Stats.MAXIMUM,
          }),
          threshold: 0,
          comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
          evaluationPeriods: 1,
          treatMissingData: TreatMissingData.NOT_BREACHING,
        }),
      );
    }
    addAlarm(
      new Alarm(this, 'OldestMessageAge', {
        alarmName: `${prefix}-queue-stuck`,
        alarmDescription: `The oldest work message waited over ${props.alarms.oldestMessageAgeSeconds} s: the worker is not keeping up or keeps failing.`,
        metric: props.queue.metricApproximateAgeOfOldestMessage({
          period: Duration.minutes(1),
          statistic: Stats.MAXIMUM,
        }),
        threshold: props.alarms.oldestMessageAgeSeconds,
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 5,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      }),
    );
    const covered = new Set(props.errorsCoveredElsewhere ?? []);
    for (const [name, fn] of Object.entries(props.functions)) {
      if (covered.has(name)) continue;
      addAlarm(
        new Alarm(this, `${name}Errors`, {
          alarmName: `${prefix}-${name}-errors`,
          alarmDescription: `The ${name} function failed invocations (uncaught errors or timeouts).`,
          metric: fn.metricErrors({ period: Duration.minutes(5), statistic: Stats.SUM }),
          threshold: 0,
          comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
          evaluationPeriods: 1,
          treatMissingData: TreatMissingData.NOT_BREACHING,
        }),
      );
    }
    // One alarm on the account's Lambda throttles, not one per function (a metric each, $0.10 a
    // month): the functions draw on one pool, the account's unreserved concurrency, so a throttle of
    // any of them means the pool ran dry for all. It also counts other stacks' functions in the
    // account, which drain the same pool; the dashboard shows which function was throttled.
    addAlarm(
      new Alarm(this, 'AccountThrottles', {
        alarmName: `${prefix}-lambda-throttles`,
        alarmDescription:
          "Lambda throttled invocations in this account and region: the account's concurrency ran out (opflow's " +
          'functions share it). The dashboard shows which function; raise the quota or lower worker.maxConcurrency.',
        metric: new Metric({
          namespace: 'AWS/Lambda',
          metricName: 'Throttles',
          statistic: Stats.SUM,
          period: Duration.minutes(5),
        }),
        threshold: 0,
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      }),
    );
    const table = props.table;
    if (table) {
      // On-demand tables throttle too (a hot partition, a sudden multiple of the previous peak):
      // every throttled request is a step retried later, so any sustained throttling is worth a look.
      // The table's own series only: each index's write throttles are a series (and $0.10 a month) of
      // their own; opflow's indexes spread their keys (shards, due buckets), and a throttled index
      // write fails the table write, which the worker retries.
      const throttleMetric = (metricName: string) =>
        new Metric({
          namespace: 'AWS/DynamoDB',
          metricName,
          dimensionsMap: { TableName: table.tableName },
          statistic: Stats.SUM,
          period: Duration.minutes(5),
        });
      addAlarm(
        new Alarm(this, 'TableThrottles', {
          alarmName: `${prefix}-table-throttles`,
          alarmDescription:
            'DynamoDB throttled reads or writes of the job table in two 5-minute windows running: a hot partition or a burst beyond on-demand capacity.',
          metric: new MathExpression({
            expression: 'FILL(reads, 0) + FILL(writes, 0)',
            usingMetrics: {
              reads: throttleMetric('ReadThrottleEvents'),
              writes: throttleMetric('WriteThrottleEvents'),
            },
            period: Duration.minutes(5),
            label: 'throttle events',
          }),
          threshold: 0,
          comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
          evaluationPeriods: 2,
          treatMissingData: TreatMissingData.NOT_BREACHING,
        }),
      );
    }
    const { failedJobRatePercent, failedJobRateMinJobs } = props.alarms;
    addAlarm(
      new Alarm(this, 'FailedJobRate', {
        alarmName: `${prefix}-failed-job-rate`,
        alarmDescription:
          `Over ${failedJobRatePercent}% of the jobs that finished in 15 minutes failed ` +
          `(counted once at least ${failedJobRateMinJobs} finished).`,
        metric: new MathExpression({
          // FILL: a window with failures and no success has no JobSucceeded data point, and arithmetic
          // on a missing point is missing, so without it a 100% failure rate would never alarm.
          expression:
            `IF(FILL(succeeded, 0) + FILL(failed, 0) >= ${failedJobRateMinJobs}, ` +
            `100 * FILL(failed, 0) / (FILL(succeeded, 0) + FILL(failed, 0)), 0)`,
          usingMetrics: {
            succeeded: pipelineMetric('JobSucceeded', FAILED_JOB_RATE_PERIOD),
            failed: pipelineMetric('JobFailed', FAILED_JOB_RATE_PERIOD),
          },
          period: FAILED_JOB_RATE_PERIOD,
          label: 'failed job %',
        }),
        threshold: failedJobRatePercent,
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      }),
    );

    this.dashboard =
      props.dashboard === false ? undefined : this.createDashboard(prefix, props, pipelineMetric);
  }

  /** The queue, the functions and the pipeline's own metrics on one page. */
  private createDashboard(
    prefix: string,
    props: PipelineMonitoringProps,
    pipelineMetric: (name: PipelineMetricName, period?: Duration) => Metric,
  ): Dashboard {
    const dashboard = new Dashboard(this, 'Dashboard', { dashboardName: prefix });
    const functions = Object.entries(props.functions);
    dashboard.addWidgets(
      new TextWidget({
        markdown:
          `# ${prefix}\nWork queue, functions and the pipeline's own metrics ` +
          `(namespace \`${PIPELINE_METRICS.namespace}\`, service \`${props.metricsService}\`).`,
        width: 24,
        height: 2,
      }),
    );
    dashboard.addWidgets(
      new GraphWidget({
        title: 'Work queue depth',
        left: [
          props.queue.metricApproximateNumberOfMessagesVisible({
            label: 'visible',
            statistic: Stats.MAXIMUM,
          }),
          props.queue.metricApproximateNumberOfMessagesNotVisible({
            label: 'in flight',
            statistic: Stats.MAXIMUM,
          }),
          props.queue.metricApproximateNumberOfMessagesDelayed({
            label: 'delayed',
            statistic: Stats.MAXIMUM,
          }),
          props.deadLetterQueue.metricApproximateNumberOfMessagesVisible({
            label: 'dead letters',
            statistic: Stats.MAXIMUM,
          }),
        ],
        width: 12,
      }),
      new GraphWidget({
        title: 'Age of oldest work message (s)',
        left: [props.queue.metricApproximateAgeOfOldestMessage({ label: 'age', statistic: Stats.MAXIMUM })],
        width: 12,
      }),
    );
    dashboard.addWidgets(
      new GraphWidget({
        title: 'Invocations',
        left: functions.map(([name, fn]) => fn.metricInvocations({ label: name, statistic: Stats.SUM })),
        width: 8,
      }),
      new GraphWidget({
        title: 'Errors and throttles',
        left: functions.flatMap(([name, fn]) => [
          fn.metricErrors({ label: `${name} errors`, statistic: Stats.SUM }),
          fn.metricThrottles({ label: `${name} throttles`, statistic: Stats.SUM }),
        ]),
        width: 8,
      }),
      new GraphWidget({
        title: 'Duration p95 (ms)',
        left: functions.map(([name, fn]) => fn.metricDuration({ label: name, statistic: Stats.p(95) })),
        width: 8,
      }),
    );
    dashboard.addWidgets(
      new GraphWidget({
        title: 'Pipeline: steps, retries, upstream calls',
        left: (['StepsRun', 'Retries', 'UpstreamCalls'] as const).map((name) => pipelineMetric(name)),
        width: 8,
      }),
      new GraphWidget({
        title: 'Jobs finished',
        left: (['JobSucceeded', 'JobFailed'] as const).map((name) => pipelineMetric(name)),
        width: 8,
      }),
      new SingleValueWidget({
        title: 'Billed units (x-openapi-amount)',
        metrics: [pipelineMetric('BilledUnits', Duration.days(1))],
        setPeriodToTimeRange: true,
        width: 8,
      }),
    );
    return dashboard;
  }

  private createTopic(prefix: string, email: string | undefined): Topic {
    const topic = new Topic(this, 'AlarmTopic', {
      topicName: `${prefix}-alarms`,
      displayName: `opflow alarms (${prefix})`,
      enforceSSL: true,
    });
    if (email) {
      const subscription = new EmailSubscription(email);
      topic.addSubscription(subscription);
      const created = topic.node.tryFindChild(email);
      if (created)
        Validations.of(created).acknowledge({
          id: 'Serverless-SNSRedrivePolicy',
          reason:
            'An email subscription: SNS retries delivery to email itself, and a lost alarm mail is covered by the ' +
            'alarm state in CloudWatch (and its OK action); a dead-letter queue would need an alarm of its own.',
        });
    }
    return topic;
  }
}
