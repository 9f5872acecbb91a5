/**
 * Where opflow keeps state on AWS: the single DynamoDB job table (keys and indexes exactly as in
 * docs/concepts/job-table.md) and the S3 report bucket, with a separate bucket for the report bucket's access logs.
 */
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import {
  AttributeType,
  BillingMode,
  ProjectionType,
  StreamViewType,
  Table,
  TableEncryption,
} from 'aws-cdk-lib/aws-dynamodb';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import {
  BlockPublicAccess,
  Bucket,
  BucketEncryption,
  ObjectOwnership,
  StorageClass,
} from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';

/** Names of the job table's key attributes and indexes (docs/concepts/job-table.md). */
export const JOB_TABLE = {
  partitionKey: 'PK',
  sortKey: 'SK',
  ttlAttribute: 'expiresAt',
  indexes: {
    byStatus: { partitionKey: 'GSI1PK', sortKey: 'GSI1SK', projection: ProjectionType.ALL },
    due: { partitionKey: 'GSI2PK', sortKey: 'GSI2SK', projection: ProjectionType.KEYS_ONLY },
    byBatch: { partitionKey: 'GSI3PK', sortKey: 'GSI3SK', projection: ProjectionType.ALL },
    /** Replaces byStatus: only status changes write to it; keys and `tenant` only (docs/concepts/job-table.md). */
    byStatusShard: {
      partitionKey: 'GSI4PK',
      sortKey: 'GSI4SK',
      projection: ProjectionType.INCLUDE,
      nonKeyAttributes: ['tenant'],
    },
    /** Replaces byBatch (jobs of a batch) and byStatus (the batch list): keys, `tenant` and `status` only. */
    byBatchKeys: {
      partitionKey: 'GSI5PK',
      sortKey: 'GSI5SK',
      projection: ProjectionType.INCLUDE,
      nonKeyAttributes: ['tenant', 'status'],
    },
  },
} as const;

/** Where every object of a job lives (`reports/<jobId>/...`); batch outputs and inbox uploads are elsewhere. */
export const REPORT_PREFIX = 'reports/';

/** Settings of {@link JobStorage}. */
export interface JobStorageProps {
  readonly tableName: string;
  /** `retain` keeps table and buckets on stack deletion and turns on the table's deletion protection. */
  readonly removalPolicy: 'retain' | 'destroy';
  /** Days after which objects under `reports/` expire; `false`: never. */
  readonly reportExpiryDays: number | false;
  /** Days before current report objects move to Standard-IA; none when undefined. */
  readonly reportTransitionDays?: number | undefined;
  readonly noncurrentVersionDays: number;
  readonly incompleteUploadDays: number;
  readonly accessLogDays: number;
  /** The stage's customer-managed key for the table and the report bucket; AWS-owned keys when undefined. */
  readonly encryptionKey?: IKey | undefined;
}

/** The job table, the report bucket and its access log bucket. */
export class JobStorage extends Construct {
  readonly table: Table;
  readonly reportBucket: Bucket;
  readonly accessLogBucket: Bucket;

  constructor(scope: Construct, id: string, props: JobStorageProps) {
    super(scope, id);
    const retain = props.removalPolicy === 'retain';
    const removalPolicy = retain ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY;

    this.table = new Table(this, 'JobTable', {
      tableName: props.tableName,
      partitionKey: { name: JOB_TABLE.partitionKey, type: AttributeType.STRING },
      sortKey: { name: JOB_TABLE.sortKey, type: AttributeType.STRING },
      billingMode: BillingMode.PAY_PER_REQUEST,
      timeToLiveAttribute: JOB_TABLE.ttlAttribute,
      // Read by the events function: the change log of GET /events (live-events.ts).
      stream: StreamViewType.NEW_AND_OLD_IMAGES,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      // Without a key of the stage's: the AWS-owned key, with no per-request KMS cost or KMS throttling.
      ...(props.encryptionKey
        ? { encryption: TableEncryption.CUSTOMER_MANAGED, encryptionKey: props.encryptionKey }
        : { encryption: TableEncryption.DEFAULT }),
      deletionProtection: retain,
      removalPolicy,
    });
    for (const [indexName, index] of Object.entries(JOB_TABLE.indexes)) {
      this.table.addGlobalSecondaryIndex({
        indexName,
        partitionKey: { name: index.partitionKey, type: AttributeType.STRING },
        sortKey: { name: index.sortKey, type: AttributeType.STRING },
        projectionType: index.projection,
        ...('nonKeyAttributes' in index ? { nonKeyAttributes: [...index.nonKeyAttributes] } : {}),
      });
    }

    // The access log bucket has no access log of its own: that would need a third bucket, and so on.
    this.accessLogBucket = new Bucket(this, 'AccessLogBucket', {
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      // S3 server access logging can only deliver to a bucket encrypted with SSE-S3.
      encryption: BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      minimumTLSVersion: 1.2,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      lifecycleRules: [
        { id: 'expire-access-logs', expiration: Duration.days(props.accessLogDays) },
        {
          id: 'abort-incomplete-uploads',
          abortIncompleteMultipartUploadAfter: Duration.days(props.incompleteUploadDays),
        },
      ],
      removalPolicy,
      autoDeleteObjects: !retain,
    });

    this.reportBucket = new Bucket(this, 'ReportBucket', {
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      // With the stage's key, an S3 Bucket Key: S3 asks KMS for a data key per bucket and period, not per object.
      ...(props.encryptionKey
        ? { encryption: BucketEncryption.KMS, encryptionKey: props.encryptionKey, bucketKeyEnabled: true }
        : { encryption: BucketEncryption.S3_MANAGED }),
      enforceSSL: true,
      minimumTLSVersion: 1.2,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      versioned: true,
      serverAccessLogsBucket: this.accessLogBucket,
      serverAccessLogsPrefix: 'report-bucket/',
      lifecycleRules: [
        ...(props.reportExpiryDays === false
          ? []
          : [
              {
                // A job's objects go with its record (the table's TTL), unless the stage says otherwise.
                id: 'expire-reports',
                prefix: REPORT_PREFIX,
                expiration: Duration.days(props.reportExpiryDays),
              },
            ]),
        ...(props.reportTransitionDays === undefined
          ? []
          : [
              {
                id: 'reports-to-infrequent-access',
                // Objects under 128 KB stay in Standard (the bucket's default minimum transition size).
                transitions: [
                  {
                    storageClass: StorageClass.INFREQUENT_ACCESS,
                    transitionAfter: Duration.days(props.reportTransitionDays),
                  },
                ],
              },
            ]),
        {
          id: 'expire-noncurrent-versions',
          noncurrentVersionExpiration: Duration.days(props.noncurrentVersionDays),
          expiredObjectDeleteMarker: true,
        },
        {
          id: 'abort-incomplete-uploads',
          abortIncompleteMultipartUploadAfter: Duration.days(props.incompleteUploadDays),
        },
      ],
      removalPolicy,
      autoDeleteObjects: !retain,
    });
  }
}
