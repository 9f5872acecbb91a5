/**
 * The change log behind `GET /events` on AWS (docs/concepts/live-events.md): the job table's stream
 * (NEW_AND_OLD_IMAGES, turned on by JobStorage) read by the `events` function, which writes each new
 * version of a job as a change item (`EVT#…` partitions of the same table, with a TTL). The event
 * source mapping's filter hands it job items only (`JOB#…`/`JOB`): its own writes, the rate buckets
 * and every other item never invoke it. It runs only when the table is written: no idle loop.
 */
import { Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import type { Table } from 'aws-cdk-lib/aws-dynamodb';
import { Effect, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { FilterCriteria, FilterRule, StartingPosition } from 'aws-cdk-lib/aws-lambda';
import { DynamoEventSource, SqsDlq } from 'aws-cdk-lib/aws-lambda-event-sources';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Queue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { FunctionTracing } from './function-tracing';
import { PipelineFunction } from './pipeline-function';
import { acknowledgeDeadLetterQueue, queueEncryption } from './work-queue';

/** The stream records the events function is invoked with: a job item written (not removed). */
export const JOB_CHANGE_FILTER = {
  eventName: FilterRule.or('INSERT', 'MODIFY'),
  dynamodb: { Keys: { PK: { S: FilterRule.beginsWith('JOB#') }, SK: { S: FilterRule.isEqual('JOB') } } },
};

/** Settings of {@link LiveEvents}. */
export interface LiveEventsProps {
  readonly resourcePrefix: string;
  /** The job table, with its stream on. */
  readonly table: Table;
  readonly environment: Record<string, string>;
  readonly logRetention: RetentionDays;
  readonly removalPolicy: 'retain' | 'destroy';
  readonly tracing?: FunctionTracing | undefined;
}

export class LiveEvents extends Construct {
  readonly events: PipelineFunction;
  /** Stream batches that failed every retry (their changes are not in the log). */
  readonly deadLetterQueue: Queue;

  constructor(scope: Construct, id: string, props: LiveEventsProps) {
    super(scope, id);
    this.deadLetterQueue = new Queue(this, 'DeadLetterQueue', {
      queueName: `${props.resourcePrefix}-events-dlq`,
      // The stage's key where it has one, as every other queue (the DLQ target grants the function
      // the key's use with its send).
      ...queueEncryption(props.table.encryptionKey),
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
      removalPolicy: RemovalPolicy.DESTROY,
    });
    acknowledgeDeadLetterQueue(this.deadLetterQueue);
    Validations.of(this.deadLetterQueue).acknowledge({
      id: 'AwsSolutions-SQS3',
      reason:
        "This queue is the stream event source's on-failure destination (a record of failed batches), itself a dead-letter queue.",
    });

    this.events = new PipelineFunction(this, 'Events', {
      name: 'events',
      functionName: `${props.resourcePrefix}-events`,
      description: "opflow: writes each job change of the table's stream into the change log of GET /events",
      timeout: Duration.seconds(30),
      memorySize: 256,
      environment: props.environment,
      logRetention: props.logRetention,
      removalPolicy: props.removalPolicy,
      tracing: props.tracing,
    });
    this.events.function.addEventSource(
      new DynamoEventSource(props.table, {
        startingPosition: StartingPosition.LATEST,
        batchSize: 100,
        // No batching window: a change is logged as soon as the stream has it.
        bisectBatchOnError: true,
        retryAttempts: 10,
        maxRecordAge: Duration.hours(1),
        onFailure: new SqsDlq(this.deadLetterQueue),
        filters: [FilterCriteria.filter(JOB_CHANGE_FILTER)],
      }),
    );
    // Writes change items only: the partition keys it may write all begin with EVT#.
    this.events.role.addToPrincipalPolicy(
      new PolicyStatement({
        effect: Effect.ALLOW,
        actions: ['dynamodb:BatchWriteItem'],
        resources: [props.table.tableArn],
        conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['EVT#*'] } },
      }),
    );
    Validations.of(this.events.role.node.findChild('DefaultPolicy')).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        'dynamodb:ListStreams (added by the stream event source) has no resource-level permissions; the stream ' +
        "reads themselves name the job table's stream.",
    });
  }
}
