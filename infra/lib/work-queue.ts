/**
 * The work queue the step worker consumes, and its dead-letter queue. Messages carry only
 * `{jobId, version}`; the job table is the source of truth, so losing a message costs a sweep, not a job.
 */
import { type Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import { Queue, QueueEncryption, type QueueProps } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';

/** Settings of {@link WorkQueue}. */
export interface WorkQueueProps {
  /** Physical name of the work queue; the dead-letter queue gets `-dlq` appended. */
  readonly queueName: string;
  /** Must be at least six times the worker's timeout (see `visibilityTimeoutSeconds`). */
  readonly visibilityTimeout: Duration;
  /** Receives before a message moves to the dead-letter queue. */
  readonly maxReceiveCount: number;
  readonly retentionPeriod: Duration;
  readonly dlqRetentionPeriod: Duration;
  /** The stage's customer-managed key; SSE-SQS when undefined. */
  readonly encryptionKey?: IKey | undefined;
}

/**
 * A queue's encryption: the stage's customer-managed key when it has one (the Queue's grants then
 * include the key), else SSE-SQS.
 */
export function queueEncryption(
  key: IKey | undefined,
): Pick<QueueProps, 'encryption' | 'encryptionMasterKey'> {
  return key
    ? { encryption: QueueEncryption.KMS, encryptionMasterKey: key }
    : { encryption: QueueEncryption.SQS_MANAGED };
}

/** An encrypted (SSE-SQS or the stage's key), SSL-only work queue with a dead-letter queue. */
export class WorkQueue extends Construct {
  readonly queue: Queue;
  readonly deadLetterQueue: Queue;

  constructor(scope: Construct, id: string, props: WorkQueueProps) {
    super(scope, id);
    this.deadLetterQueue = new Queue(this, 'DeadLetterQueue', {
      queueName: `${props.queueName}-dlq`,
      ...queueEncryption(props.encryptionKey),
      enforceSSL: true,
      retentionPeriod: props.dlqRetentionPeriod,
      // Queues hold only pointers to jobs; the table keeps the state, so they never need retaining.
      removalPolicy: RemovalPolicy.DESTROY,
    });
    acknowledgeDeadLetterQueue(this.deadLetterQueue);

    this.queue = new Queue(this, 'Queue', {
      queueName: props.queueName,
      ...queueEncryption(props.encryptionKey),
      enforceSSL: true,
      visibilityTimeout: props.visibilityTimeout,
      retentionPeriod: props.retentionPeriod,
      deadLetterQueue: { queue: this.deadLetterQueue, maxReceiveCount: props.maxReceiveCount },
      removalPolicy: RemovalPolicy.DESTROY,
    });
  }
}

/** cdk-nag's Serverless pack asks every queue for a redrive policy: a dead-letter queue is the end of one. */
export function acknowledgeDeadLetterQueue(queue: Queue): void {
  Validations.of(queue).acknowledge({
    id: 'Serverless-SQSRedrivePolicy',
    reason:
      'This is a dead-letter queue (the end of a redrive), watched by an alarm; it has none of its own.',
  });
}
