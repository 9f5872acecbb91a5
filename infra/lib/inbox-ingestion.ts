/**
 * Bulk ingestion on AWS: uploads under `inbox/` in the report bucket are announced (an S3 event
 * notification) on an ingest queue, whose consumer is the `ingest` function; the function hands a
 * batch that would outlast it over to a continuation message on the same queue. The function may
 * read and write the job table, read the bucket and write the batch outputs, send work and
 * continuation messages: nothing else.
 */
import { Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { RecursiveLoop } from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { type Bucket, EventType } from 'aws-cdk-lib/aws-s3';
import { SqsDestination } from 'aws-cdk-lib/aws-s3-notifications';
import { type IQueue, Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { FunctionTracing } from './function-tracing';
import { PipelineFunction } from './pipeline-function';
import { acknowledgeDeadLetterQueue } from './work-queue';

/** Concurrent ingest invocations at most (2 is the lowest an SQS event source accepts). */
export const INGEST_MAX_CONCURRENCY = 2;

/** Uploads under this prefix start an ingestion. */
export const INBOX_PREFIX = 'inbox/';

/** Settings of {@link InboxIngestion}. */
export interface InboxIngestionProps {
  readonly resourcePrefix: string;
  readonly bucket: Bucket;
  readonly table: ITable;
  readonly workQueue: IQueue;
  /** The environment every opflow function gets (the ingest queue's URL is added). */
  readonly environment: Record<string, string>;
  readonly logRetention: RetentionDays;
  readonly removalPolicy: 'retain' | 'destroy';
  /** How the function is traced (the stage's `tracing` setting); default off. */
  readonly tracing?: FunctionTracing | undefined;
  /** Default 900 s: a slice reads until a minute before, then hands over. */
  readonly timeout?: Duration;
  /** Default 1024 MB (PDF text extraction). */
  readonly memorySize?: number;
}

export class InboxIngestion extends Construct {
  readonly queue: Queue;
  readonly deadLetterQueue: Queue;
  readonly ingest: PipelineFunction;

  constructor(scope: Construct, id: string, props: InboxIngestionProps) {
    super(scope, id);
    const timeout = props.timeout ?? Duration.seconds(900);
    // SSE-SQS even with the stage's customer-managed key: S3's grant on that key would name the
    // bucket, itself encrypted with the key, a circular dependency CloudFormation refuses. These
    // queues hold only the object keys of uploads.
    this.deadLetterQueue = new Queue(this, 'DeadLetterQueue', {
      queueName: `${props.resourcePrefix}-ingest-dlq`,
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
      removalPolicy: RemovalPolicy.DESTROY,
    });
    acknowledgeDeadLetterQueue(this.deadLetterQueue);
    this.queue = new Queue(this, 'Queue', {
      queueName: `${props.resourcePrefix}-ingest`,
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      // Six times the function's timeout, as Lambda asks of an SQS event source.
      visibilityTimeout: Duration.seconds(6 * timeout.toSeconds()),
      retentionPeriod: Duration.days(4),
      deadLetterQueue: { queue: this.deadLetterQueue, maxReceiveCount: 5 },
      removalPolicy: RemovalPolicy.DESTROY,
    });
    props.bucket.addEventNotification(EventType.OBJECT_CREATED, new SqsDestination(this.queue), {
      prefix: INBOX_PREFIX,
    });

    this.ingest = new PipelineFunction(this, 'Ingest', {
      name: 'ingest',
      functionName: `${props.resourcePrefix}-ingest`,
      description: 'opflow: ingests manifests and documents uploaded under inbox/, as batches',
      timeout,
      memorySize: props.memorySize ?? 1024,
      environment: { ...props.environment, OPFLOW_INGEST_QUEUE_URL: this.queue.queueUrl },
      logRetention: props.logRetention,
      removalPolicy: props.removalPolicy,
      tracing: props.tracing,
      // A large batch continues through messages to this function's own queue: a chain Lambda's
      // default (Terminate) would stop after 16. The function's own continuation budget stops a runaway.
      recursiveLoop: RecursiveLoop.ALLOW,
    });
    // One message at a time: each is a slice of one batch's work, as long as the function allows.
    this.ingest.addSqsEventSource(
      new SqsEventSource(this.queue, {
        batchSize: 1,
        reportBatchItemFailures: true,
        // Each batch has one driver at a time (a lease), so an upload of 1,000 documents needs few
        // instances: capped, it cannot take an account's whole Lambda concurrency (10 on new accounts).
        maxConcurrency: INGEST_MAX_CONCURRENCY,
      }),
    );
    props.table.grantReadWriteData(this.ingest.role);
    props.bucket.grantRead(this.ingest.role);
    props.bucket.grantPut(this.ingest.role);
    props.workQueue.grantSendMessages(this.ingest.role);
    this.queue.grantSendMessages(this.ingest.role);

    this.acknowledgeFindings(props);
  }

  private acknowledgeFindings(props: InboxIngestionProps): void {
    const stack = Stack.of(this);
    const tableId = stack.getLogicalId(props.table.node.defaultChild as never);
    const bucketId = stack.getLogicalId(props.bucket.node.defaultChild as never);
    const policy = this.ingest.role.node.findChild('DefaultPolicy');
    for (const finding of [
      {
        id: `AwsSolutions-IAM5[Resource::<${tableId}.Arn>/index/*]`,
        reason:
          'Queries the job table\'s own indexes (byBatchKeys for the batch list); "index/*" names the indexes of this one table.',
      },
      {
        id: `AwsSolutions-IAM5[Resource::<${bucketId}.Arn>/*]`,
        reason:
          'Reads uploads under inbox/ (any name a user gives) and writes batch outputs (batches/<batchId>/...) and large item inputs; keys are per batch and upload.',
      },
      ...['s3:GetBucket*', 's3:GetObject*', 's3:List*', 's3:Abort*'].map((action) => ({
        id: `AwsSolutions-IAM5[Action::${action}]`,
        reason: `${action} comes from grantRead/grantPut on the report bucket only.`,
      })),
    ])
      Validations.of(policy).acknowledge(finding);
    // The S3 notification custom resource CDK adds once per stack.
    const handler = stack.node.tryFindChild('BucketNotificationsHandler050a0587b7544547bf325f094a3db834');
    if (handler) {
      Validations.of(handler).acknowledge({
        id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
        reason:
          "CDK's own handler that configures the bucket's event notifications at deploy time (not opflow code).",
      });
    }
  }
}
