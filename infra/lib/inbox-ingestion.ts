/**
 * Bulk ingestion on AWS: uploads under `inbox/` in the report bucket invoke the `ingest` function
 * asynchronously (the bucket's event notification); what it has to do lives in the job table (the
 * ingest schedule), which it, and the sweeper's minute pass, hand on by invoking it again. No queue
 * and no poller: nothing runs while nothing is uploaded. An event the function fails three times
 * (Lambda's two retries), or that waits six hours, goes to the ingest dead-letter queue, which
 * alarms. The function may read and write the job table, read the bucket and write the batch
 * outputs, send work messages, invoke itself and send to its dead-letter queue: nothing else.
 */
import { ArnFormat, Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { RecursiveLoop } from 'aws-cdk-lib/aws-lambda';
import { SqsDestination } from 'aws-cdk-lib/aws-lambda-destinations';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { type Bucket, EventType } from 'aws-cdk-lib/aws-s3';
import { LambdaDestination } from 'aws-cdk-lib/aws-s3-notifications';
import { type IQueue, Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { ingestVariables } from '../../shared/backends/aws/ingest-variables';
import type { FunctionTracing } from './function-tracing';
import { PipelineFunction } from './pipeline-function';
import { acknowledgeDeadLetterQueue } from './work-queue';

/**
 * Ingest drivers at once (a slot item each in the job table; the SQS event source's maximum
 * concurrency gave the same bound before). Invocations beyond it record their uploads and end.
 */
export const INGEST_MAX_CONCURRENCY = 2;

/** Uploads under this prefix start an ingestion. */
export const INBOX_PREFIX = 'inbox/';

/** Lambda's retries of a failed asynchronous invocation of the ingest function (its most, 2). */
export const INGEST_RETRY_ATTEMPTS = 2;

/** Settings of {@link InboxIngestion}. */
export interface InboxIngestionProps {
  readonly resourcePrefix: string;
  readonly bucket: Bucket;
  readonly table: ITable;
  readonly workQueue: IQueue;
  /** The environment every opflow function gets (the dead-letter queue's URL is added). */
  readonly environment: Record<string, string>;
  readonly logRetention: RetentionDays;
  readonly removalPolicy: 'retain' | 'destroy';
  /** How the function is traced (the stage's `tracing` setting); default off. */
  readonly tracing?: FunctionTracing | undefined;
  /** Default 900 s: a driver works until a minute before, then hands over. */
  readonly timeout?: Duration;
  /** Default 1024 MB (PDF text extraction). */
  readonly memorySize?: number;
}

export class InboxIngestion extends Construct {
  readonly deadLetterQueue: Queue;
  readonly ingest: PipelineFunction;

  constructor(scope: Construct, id: string, props: InboxIngestionProps) {
    super(scope, id);
    const timeout = props.timeout ?? Duration.seconds(900);
    // SSE-SQS even with the stage's customer-managed key: it holds only the S3 events of uploads
    // and the notices of stopped batches.
    this.deadLetterQueue = new Queue(this, 'DeadLetterQueue', {
      queueName: `${props.resourcePrefix}-ingest-dlq`,
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
      removalPolicy: RemovalPolicy.DESTROY,
    });
    acknowledgeDeadLetterQueue(this.deadLetterQueue);
    Validations.of(this.deadLetterQueue).acknowledge({
      id: 'AwsSolutions-SQS3',
      reason:
        "The ingest function's on-failure destination (Lambda's asynchronous invocation), which cdk-nag does not count as a dead-letter queue; watched by an alarm.",
    });

    const functionName = `${props.resourcePrefix}-ingest`;
    this.ingest = new PipelineFunction(this, 'Ingest', {
      name: 'ingest',
      functionName,
      description: 'opflow: ingests manifests and documents uploaded under inbox/, as batches',
      timeout,
      memorySize: props.memorySize ?? 1024,
      environment: {
        ...props.environment,
        [ingestVariables.deadLetterQueueUrl]: this.deadLetterQueue.queueUrl,
        [ingestVariables.drivers]: String(INGEST_MAX_CONCURRENCY),
      },
      logRetention: props.logRetention,
      removalPolicy: props.removalPolicy,
      tracing: props.tracing,
      // A large upload goes on through the function's own invocations: a chain Lambda's default
      // (Terminate) could stop. Each batch's budget of rounds stops a runaway.
      recursiveLoop: RecursiveLoop.ALLOW,
    });
    // Retries of a failed invocation come 1 and 2 minutes later; an event that fails them all, or
    // waits six hours (throttled), is kept in the dead-letter queue, which alarms.
    this.ingest.function.configureAsyncInvoke({
      retryAttempts: INGEST_RETRY_ATTEMPTS,
      maxEventAge: Duration.hours(6),
      onFailure: new SqsDestination(this.deadLetterQueue),
    });
    props.bucket.addEventNotification(EventType.OBJECT_CREATED, new LambdaDestination(this.ingest.function), {
      prefix: INBOX_PREFIX,
    });
    props.table.grantReadWriteData(this.ingest.role);
    props.bucket.grantRead(this.ingest.role);
    props.bucket.grantPut(this.ingest.role);
    props.workQueue.grantSendMessages(this.ingest.role);
    this.deadLetterQueue.grantSendMessages(this.ingest.role);
    // Its own hand-over: the ARN from the name, since a grant on the function itself would make the
    // function depend on its own role's policy.
    this.ingest.role.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ['lambda:InvokeFunction'],
        resources: [
          Stack.of(this).formatArn({
            service: 'lambda',
            resource: 'function',
            resourceName: functionName,
            arnFormat: ArnFormat.COLON_RESOURCE_NAME,
          }),
        ],
      }),
    );

    this.acknowledgeFindings(props);
  }

  /**
   * Lets `caller` invoke the ingest function asynchronously, and names it there
   * (OPFLOW_INGEST_FUNCTION_NAME): the sweeper (an entry of the ingest schedule is due), the step
   * worker (a job of a batch ended) and the api (it cancelled a batch's job).
   */
  invokedBy(caller: PipelineFunction): void {
    caller.function.addEnvironment(ingestVariables.functionName, this.ingest.function.functionName);
    caller.role.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ['lambda:InvokeFunction'],
        resources: [this.ingest.function.functionArn],
      }),
    );
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
