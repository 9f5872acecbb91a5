/**
 * The opflow stack: job table, report bucket, work queue, secrets, the three functions (step worker,
 * api, sweeper) with only the permissions each needs, the HTTP API, the sweeper's schedule, alarms and
 * a dashboard. Everything variable comes from the validated stage config.
 */
import { CfnElement, CfnOutput, Duration, Stack, type StackProps, Tags, Validations } from 'aws-cdk-lib';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import { type CfnFunction, RecursiveLoop } from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { HttpMethods } from 'aws-cdk-lib/aws-s3';
import type { Construct } from 'constructs';
import { callbackOutboxPartition } from '../../shared/backends/aws/dynamodb-callback-outbox';
import { ingestDuePartition } from '../../shared/backends/aws/dynamodb-ingest-schedule';
import { type OpflowConfig, parseOpflowConfig } from '../../shared/config/opflow-config';
import { sharesVariable } from '../../shared/engine/admission/fair-share';
import { API_AUTH_VARIABLE, type ApiAuth } from '../../shared/runtime/lambda/api-auth';
import { physicalPrefix, type StageConfig, visibilityTimeoutSeconds } from '../config';
import { Automation } from './automation';
import { grantDataKeyToFunctions, stageDataKey } from './data-key';
import { InboxIngestion } from './inbox-ingestion';
import { JobApi } from './job-api';
import { type JOB_TABLE, JobStorage } from './job-storage';
import { LiveEvents } from './live-events';
import { PipelineFunction } from './pipeline-function';
import { PIPELINE_METRICS, PipelineMonitoring } from './pipeline-monitoring';
import { Reviewers } from './reviewers';
import { TenantSecrets } from './tenant-secrets';
import { WorkQueue } from './work-queue';

/** The only objects the api function may write: job inputs too large to keep in the job item. */
export const API_INPUT_OBJECT_PATTERN = 'reports/*/input.json';

/** Every object of a job lives under `reports/<jobId>/`; the api function presigns links to these only. */
export const REPORT_OBJECT_PATTERN = 'reports/*';
/** The outputs of a batch (summary.csv, results.jsonl, failed.jsonl, index.html), written on first read. */
export const BATCH_OUTPUT_PATTERN = 'batches/*';
/** Where the api presigns the dashboard's manifest uploads (`POST /batch-uploads`): the ingest inbox. */
export const INBOX_UPLOAD_PATTERN = 'inbox/*';

/** What the api function needs of `api.auth` (OPFLOW_API_AUTH): the mode and the operator grant, not the issuer. */
export function apiAuthOf(auth: StageConfig['api']['auth']): ApiAuth {
  return auth.mode === 'jwt'
    ? { mode: 'jwt', ...(auth.operators ? { operators: auth.operators } : {}) }
    : auth;
}

/** Settings of {@link OpflowStack}. */
export interface OpflowStackProps extends StackProps {
  readonly config: StageConfig;
  /** Webhook mappings and schedules (opflow.config.json); none when absent. */
  readonly automation?: OpflowConfig | undefined;
  /** The file the automation came from, as the deployer named it (for errors). */
  readonly automationFile?: string | undefined;
}

/** The whole of opflow on AWS for one stage. */
export class OpflowStack extends Stack {
  readonly config: StageConfig;
  /** The stage's customer-managed key (`kms.enabled`), or undefined. */
  readonly dataKey: IKey | undefined;
  readonly storage: JobStorage;
  readonly workQueue: WorkQueue;
  readonly secrets: TenantSecrets;
  readonly worker: PipelineFunction;
  readonly api: PipelineFunction;
  readonly sweeper: PipelineFunction;
  readonly jobApi: JobApi;
  readonly monitoring: PipelineMonitoring;
  readonly inbox: InboxIngestion;
  readonly automation: Automation;
  /** The reviewers' secrets, pass and page; undefined without a reviewers rule. */
  readonly reviewers: Reviewers | undefined;
  readonly liveEvents: LiveEvents;

  constructor(scope: Construct, id: string, props: OpflowStackProps) {
    super(scope, id, props);
    // Access logs are delivered under a bucket policy, not the legacy LogDeliveryWrite ACL (which
    // BUCKET_OWNER_ENFORCED forbids). Set here too, so the stack does not depend on cdk.json's flags.
    this.node.setContext('@aws-cdk/aws-s3:serverAccessLogsUseBucketPolicy', true);
    const config = props.config;
    this.config = config;
    // Every physical name starts with it (stage and generation), so stacks in one account never collide.
    const prefix = physicalPrefix(config.names);
    const logRetention = config.retention.logDays as RetentionDays;
    Tags.of(this).add('app', 'opflow');
    Tags.of(this).add('stage', config.stage);

    this.dataKey = stageDataKey(this, 'DataKey', {
      kms: config.kms,
      prefix,
      removalPolicy: config.removalPolicy,
    });
    this.storage = new JobStorage(this, 'Storage', {
      encryptionKey: this.dataKey,
      tableName: `${prefix}-jobs`,
      removalPolicy: config.removalPolicy,
      reportExpiryDays: config.retention.reportExpiryDays,
      reportTransitionDays: config.retention.reportTransitionDays,
      noncurrentVersionDays: config.retention.noncurrentVersionDays,
      incompleteUploadDays: config.retention.incompleteUploadDays,
      accessLogDays: config.retention.accessLogDays,
    });
    this.workQueue = new WorkQueue(this, 'Work', {
      encryptionKey: this.dataKey,
      queueName: `${prefix}-work`,
      visibilityTimeout: Duration.seconds(visibilityTimeoutSeconds(config.worker)),
      maxReceiveCount: config.queue.maxReceiveCount,
      retentionPeriod: Duration.days(config.queue.retentionDays),
      dlqRetentionPeriod: Duration.days(config.queue.dlqRetentionDays),
    });
    this.secrets = new TenantSecrets(this, 'Secrets', {
      apiKeySecretPrefix: `${prefix}/api-key/`,
      tenants: config.tenants,
      removalPolicy: config.removalPolicy,
    });

    // Every function gets the same environment (names are not permissions; IAM below is what differs),
    // so the runtime's one config loader (loadAwsConfig) works in all three; the signing secrets'
    // prefixes are added by Automation to the functions that read them.
    // The service name is the stage's prefix: it is the `service` dimension of every pipeline metric,
    // so two stages in one account never add up in one alarm.
    const environment: Record<string, string> = {
      OPFLOW_TABLE_NAME: this.storage.table.tableName,
      OPFLOW_QUEUE_URL: this.workQueue.queue.queueUrl,
      OPFLOW_BUCKET_NAME: this.storage.reportBucket.bucketName,
      OPFLOW_API_KEY_SECRET_PREFIX: this.secrets.apiKeySecretPrefix,
      OPFLOW_BASE_URL: config.openPlatform.baseUrl,
      OPFLOW_QPS: String(config.openPlatform.qps),
      POWERTOOLS_SERVICE_NAME: prefix,
      POWERTOOLS_METRICS_NAMESPACE: PIPELINE_METRICS.namespace,
      POWERTOOLS_LOG_LEVEL: config.logLevel,
    };
    const functionDefaults = {
      environment,
      logRetention,
      removalPolicy: config.removalPolicy,
      tracing: config.tracing,
    };

    this.worker = new PipelineFunction(this, 'StepWorker', {
      ...functionDefaults,
      name: 'worker',
      functionName: `${prefix}-step-worker`,
      description: 'opflow: runs one step of a job per work message',
      timeout: Duration.seconds(config.worker.timeoutSeconds),
      memorySize: config.worker.memoryMb,
      // Each step sends the job's next step to the queue that triggers this function: one chain of
      // 17 to 22 invocations per novelty check, which Lambda's default (Terminate) cuts at 16.
      recursiveLoop: RecursiveLoop.ALLOW,
    });
    this.worker.addSqsEventSource(
      new SqsEventSource(this.workQueue.queue, {
        batchSize: config.worker.batchSize,
        maxBatchingWindow: Duration.seconds(config.worker.maxBatchingWindowSeconds),
        reportBatchItemFailures: true,
        // The event source's own cap: reserved concurrency would make SQS throttle messages into the DLQ.
        maxConcurrency: config.worker.maxConcurrency,
      }),
    );
    // Fair shares of a key's calls: the step worker admits calls (acquire-token.ts), and the api
    // takes new jobs' first tokens (first-message.ts); both charge them in the key's bucket item, so
    // both are told the weights (the api below). Absent, every tenant weighs 1, as locally.
    if (config.openPlatform.shares !== undefined)
      this.worker.function.addEnvironment(sharesVariable, config.openPlatform.shares);
    this.storage.table.grantReadWriteData(this.worker.role);
    // grantRead includes s3:ListBucket, which the worker needs: without it S3 answers a missing step
    // output with 403 instead of 404, and S3ReportStore.get would throw instead of returning nothing.
    this.storage.reportBucket.grantRead(this.worker.role);
    this.storage.reportBucket.grantPut(this.worker.role);
    this.secrets.grantReadApiKeys(this.worker.role);
    this.workQueue.queue.grantSendMessages(this.worker.role);

    this.api = new PipelineFunction(this, 'Api', {
      ...functionDefaults,
      name: 'api',
      functionName: `${prefix}-api`,
      description: 'opflow: the job HTTP API',
      timeout: Duration.seconds(config.api.timeoutSeconds),
      memorySize: config.api.memoryMb,
    });
    // Who is an operator among JWT callers: the function refuses a token bound to no tenant otherwise.
    this.api.function.addEnvironment(API_AUTH_VARIABLE, JSON.stringify(apiAuthOf(config.api.auth)));
    if (config.openPlatform.shares !== undefined)
      this.api.function.addEnvironment(sharesVariable, config.openPlatform.shares);
    this.storage.table.grantReadWriteData(this.api.role);
    this.workQueue.queue.grantSendMessages(this.api.role);
    // Presigned report links are signed with the api role, so it must be able to GetObject (nothing
    // else: it never reads or lists objects itself). It writes one kind of object: a job input over
    // the inline limit, which submitJob stores as reports/<jobId>/input.json.
    this.api.role.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ['s3:GetObject'],
        resources: [this.storage.reportBucket.arnForObjects(REPORT_OBJECT_PATTERN)],
      }),
    );
    this.api.role.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ['s3:PutObject'],
        resources: [this.storage.reportBucket.arnForObjects(API_INPUT_OBJECT_PATTERN)],
      }),
    );
    // GET /batches/{id}/outputs/{file}: reads a batch's outputs, writing them first when missing
    // (ListBucket under batches/ so that a missing one is a 404 to the store, not a 403).
    this.api.role.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ['s3:GetObject', 's3:PutObject'],
        resources: [this.storage.reportBucket.arnForObjects(BATCH_OUTPUT_PATTERN)],
      }),
    );
    this.api.role.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ['s3:ListBucket'],
        resources: [this.storage.reportBucket.bucketArn],
        conditions: { StringLike: { 's3:prefix': [BATCH_OUTPUT_PATTERN] } },
      }),
    );
    // POST /batch-uploads: the api presigns a PUT of the checked manifest under inbox/ (signed with
    // this role, so it needs the PutObject it never makes itself); the browser sends the object, and
    // the dashboard's origins may PUT to the bucket (nothing else) across origins.
    this.api.role.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ['s3:PutObject'],
        resources: [this.storage.reportBucket.arnForObjects(INBOX_UPLOAD_PATTERN)],
      }),
    );
    // POST /batch-uploads/commit: the api looks up each document the browser sent (HeadObject, which
    // is GetObject's right; ListBucket under inbox/ so a missing one is a 404, not a 403) before it
    // writes the manifest that starts the batch (PutObject above).
    this.api.role.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ['s3:GetObject'],
        resources: [this.storage.reportBucket.arnForObjects(INBOX_UPLOAD_PATTERN)],
      }),
    );
    this.api.role.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ['s3:ListBucket'],
        resources: [this.storage.reportBucket.bucketArn],
        conditions: { StringLike: { 's3:prefix': [INBOX_UPLOAD_PATTERN] } },
      }),
    );
    if ((config.api.dashboardOrigins?.length ?? 0) > 0)
      this.storage.reportBucket.addCorsRule({
        allowedMethods: [HttpMethods.PUT],
        allowedOrigins: [...(config.api.dashboardOrigins ?? [])],
        allowedHeaders: [
          'content-type',
          'x-amz-checksum-sha256',
          'x-amz-sdk-checksum-algorithm',
          'x-amz-meta-*',
        ],
        exposedHeaders: ['etag'],
        maxAge: 3600,
      });

    this.sweeper = new PipelineFunction(this, 'Sweeper', {
      ...functionDefaults,
      name: 'sweeper',
      functionName: `${prefix}-sweeper`,
      description: 'opflow: re-schedules due jobs whose message was lost',
      timeout: Duration.seconds(config.sweeper.timeoutSeconds),
      memorySize: config.sweeper.memoryMb,
    });
    // The sweeper lists due jobs (Query on the due index, then BatchGetItem of the jobs themselves)
    // and jobs created by a clock ahead (Query on byStatusShard), and re-sends their messages at the
    // jobs' versions, without a write. Its one write is the unpark of a parked job (the nudge of a
    // key gone idle, or a job past its deadline): a conditional PutItem of the job one version on.
    const dueIndex: keyof typeof JOB_TABLE.indexes = 'due';
    const statusIndex: keyof typeof JOB_TABLE.indexes = 'byStatusShard';
    this.sweeper.role.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ['dynamodb:Query'],
        resources: [
          `${this.storage.table.tableArn}/index/${dueIndex}`,
          `${this.storage.table.tableArn}/index/${statusIndex}`,
        ],
      }),
    );
    this.sweeper.role.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ['dynamodb:BatchGetItem', 'dynamodb:PutItem'],
        resources: [this.storage.table.tableArn],
      }),
    );
    this.workQueue.queue.grantSendMessages(this.sweeper.role);
    // Its callbacks' pass: lists the due entries of the callback outbox (one partition, CBQ) and marks
    // each (an UpdateItem that the job table's stream hands to the callback function).
    this.sweeper.role.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ['dynamodb:Query', 'dynamodb:UpdateItem'],
        resources: [this.storage.table.tableArn],
        conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [callbackOutboxPartition] } },
      }),
    );
    const sweepRule = new Rule(this, 'SweepEveryMinute', {
      ruleName: `${prefix}-sweep`,
      description: 'opflow: run the sweeper every minute',
      schedule: Schedule.rate(Duration.minutes(1)),
      // A missed sweep is covered by the next one a minute later: retry once, never pile up.
      targets: [
        new LambdaFunction(this.sweeper.function, { retryAttempts: 1, maxEventAge: Duration.minutes(1) }),
      ],
    });

    Validations.of(sweepRule).acknowledge({
      id: 'Serverless-EventBusDLQ',
      reason:
        'A sweep that fails to start is covered by the next one a minute later (the rule retries once, for a minute): ' +
        'a dead-letter queue would only collect stale minutes.',
    });
    this.acknowledgeGrantWildcards();

    this.inbox = new InboxIngestion(this, 'Inbox', {
      resourcePrefix: prefix,
      bucket: this.storage.reportBucket,
      table: this.storage.table,
      workQueue: this.workQueue.queue,
      environment,
      logRetention,
      removalPolicy: config.removalPolicy,
      tracing: config.tracing,
    });
    // The sweeper's ingest pass: when an entry of the ingest schedule (partition INGESTDUE) is due,
    // it invokes the ingest function (asynchronously), so a batch whose jobs run is looked at each
    // minute; the step worker invokes it when a job of a batch ends, so the batch moves on at once,
    // and the api when it cancels a batch's job (a retried job cancelled on the queue has no step).
    this.inbox.invokedBy(this.sweeper);
    this.inbox.invokedBy(this.worker);
    this.inbox.invokedBy(this.api);
    this.sweeper.role.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ['dynamodb:Query'],
        resources: [this.storage.table.tableArn],
        conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [ingestDuePartition] } },
      }),
    );

    this.liveEvents = new LiveEvents(this, 'LiveEvents', {
      resourcePrefix: prefix,
      table: this.storage.table,
      environment,
      logRetention,
      removalPolicy: config.removalPolicy,
      tracing: config.tracing,
    });

    this.jobApi = new JobApi(this, 'JobApi', {
      apiName: `${prefix}-jobs`,
      handler: this.api.function,
      auth: config.api.auth,
      throttle: config.api.throttle,
      dashboardOrigins: config.api.dashboardOrigins,
      accessLogGroupName: `/aws/apigateway/${prefix}-jobs`,
      logRetention,
      removalPolicy: config.removalPolicy,
    });

    // Automation: callbacks out, webhooks in, schedules (infra/lib/automation.ts).
    this.automation = new Automation(this, 'Automation', {
      prefix,
      tenants: config.tenants,
      automation: props.automation ?? parseOpflowConfig({}, 'opflow.config.json'),
      table: this.storage.table,
      bucket: this.storage.reportBucket,
      workQueue: this.workQueue.queue,
      api: this.api,
      httpApi: this.jobApi.httpApi,
      stage: this.jobApi.stage,
      webhookThrottle: config.webhooks.throttle,
      webhookReservedConcurrency: config.webhooks.reservedConcurrency,
      configFile: props.automationFile,
      functionDefaults,
    });
    this.acknowledgeAutomationWildcards();

    // The reviewers (infra/lib/reviewers.ts), when opflow.config.json has a rule.
    if ((props.automation?.reviewers?.rules.length ?? 0) > 0)
      this.reviewers = new Reviewers(this, 'Reviewers', {
        prefix,
        table: this.storage.table,
        config: this.automation.config,
        sweeper: this.sweeper,
        page: this.automation.webhookReceiver,
        api: props.automation?.reviewers?.rules.some((rule) => rule.approvers > 1) ? this.api : undefined,
        httpApi: this.jobApi.httpApi,
        stage: this.jobApi.stage,
        publicUrl: this.jobApi.url,
        throttle: config.webhooks.throttle,
        removalPolicy: config.removalPolicy,
      });

    this.monitoring = new PipelineMonitoring(this, 'Monitoring', {
      resourcePrefix: prefix,
      queue: this.workQueue.queue,
      deadLetterQueue: this.workQueue.deadLetterQueue,
      // Every function: an errors alarm each but the events function's (its failed batches go to its
      // dead-letter queue, which alarms); throttles alarm once, for the account.
      functions: {
        worker: this.worker.function,
        api: this.api.function,
        webhooks: this.automation.webhookReceiver.function,
        sweeper: this.sweeper.function,
        ingest: this.inbox.ingest.function,
        callbacks: this.automation.callbackSender.function,
        events: this.liveEvents.events.function,
        ...(this.automation.scheduleTarget ? { schedules: this.automation.scheduleTarget.function } : {}),
      },
      // The work queue's dead-letter queue is above.
      otherDeadLetterQueues: {
        ingest: this.inbox.deadLetterQueue,
        events: this.liveEvents.deadLetterQueue,
        ...(this.automation.scheduleDeadLetterQueue
          ? { schedules: this.automation.scheduleDeadLetterQueue }
          : {}),
      },
      errorsCoveredElsewhere: ['events'],
      dashboard: config.cloudWatchDashboard,
      metricsService: prefix,
      alarms: config.alarms,
      table: this.storage.table,
    });

    if (this.dataKey) grantDataKeyToFunctions(this, this.dataKey);

    new CfnOutput(this, 'ApiUrl', { value: this.jobApi.url, description: 'Base URL of the job API' });
    new CfnOutput(this, 'TableName', { value: this.storage.table.tableName });
    new CfnOutput(this, 'QueueUrl', { value: this.workQueue.queue.queueUrl });
    new CfnOutput(this, 'DeadLetterQueueUrl', { value: this.workQueue.deadLetterQueue.queueUrl });
    new CfnOutput(this, 'BucketName', { value: this.storage.reportBucket.bucketName });
    new CfnOutput(this, 'ApiKeySecretPrefix', {
      value: this.secrets.apiKeySecretPrefix,
      description: 'API key secrets are named <prefix><tenant>',
    });
    new CfnOutput(this, 'IngestFunctionName', {
      value: this.inbox.ingest.function.functionName,
      description: 'the ingest function: uploads under inbox/ of the bucket invoke it',
    });
    new CfnOutput(this, 'CallbackSecretPrefix', {
      value: this.automation.callbackSecretPrefix,
      description: 'callback signing secrets are named <prefix><tenant>',
    });
    new CfnOutput(this, 'WebhookSecretPrefix', {
      value: this.automation.webhookSecretPrefix,
      description: 'webhook signing secrets are named <prefix><source>',
    });
    new CfnOutput(this, 'AlarmTopicArn', { value: this.monitoring.topic.topicArn });
    new CfnOutput(this, 'FunctionNames', {
      value: JSON.stringify(this.functionNames()),
      description:
        'the functions by role, as JSON (opflow --backend aws doctor checks their concurrency and recursion)',
    });
    if (this.monitoring.dashboard)
      new CfnOutput(this, 'DashboardName', { value: this.monitoring.dashboard.dashboardName });
  }

  /**
   * The grant* methods scope every statement to this stack's own table, bucket and queue, but some
   * name a resource pattern or an action family; cdk-nag reports each such finding, acknowledged here
   * one by one with the reason it is as narrow as the access allows.
   */
  private acknowledgeGrantWildcards(): void {
    const tableId = this.logicalIdOf(this.storage.table);
    const bucketId = this.logicalIdOf(this.storage.reportBucket);
    const indexFinding = {
      id: `AwsSolutions-IAM5[Resource::<${tableId}.Arn>/index/*]`,
      reason:
        'Queries the job table\'s own indexes (byStatusShard, due, byBatchKeys); "index/*" is how grantReadWriteData names ' +
        'the indexes of this one table, no other table.',
    };
    const objectsFinding = (what: string) => ({
      id: `AwsSolutions-IAM5[Resource::<${bucketId}.Arn>/*]`,
      reason:
        `${what} objects of the report bucket only; object keys are per job (reports/<jobId>/...), so they ` +
        'cannot be named in advance.',
    });
    const readActionFindings = ['s3:GetBucket*', 's3:GetObject*', 's3:List*'].map((action) => ({
      id: `AwsSolutions-IAM5[Action::${action}]`,
      reason: `${action} comes from grantRead on the report bucket: the read-only action family, on that bucket only.`,
    }));
    const putActionFindings = ['s3:Abort*'].map((action) => ({
      id: `AwsSolutions-IAM5[Action::${action}]`,
      reason: `${action} comes from grantPut on the report bucket: aborting its own multipart uploads of the objects it may put.`,
    }));
    const policyOf = (fn: PipelineFunction) => fn.role.node.findChild('DefaultPolicy');
    const acknowledge = (fn: PipelineFunction, findings: { id: string; reason: string }[]) => {
      for (const finding of findings) Validations.of(policyOf(fn)).acknowledge(finding);
    };
    acknowledge(this.worker, [
      indexFinding,
      objectsFinding('Reads and writes'),
      ...readActionFindings,
      ...putActionFindings,
    ]);
    acknowledge(this.api, [
      indexFinding,
      {
        id: `AwsSolutions-IAM5[Resource::<${bucketId}.Arn>/${REPORT_OBJECT_PATTERN}]`,
        reason:
          'GetObject only, to presign links to the report files of a job (reports/<jobId>/...); job ids are ' +
          'minted per request, so the keys cannot be named in advance.',
      },
      {
        id: `AwsSolutions-IAM5[Resource::<${bucketId}.Arn>/${API_INPUT_OBJECT_PATTERN}]`,
        reason:
          'Puts only the input.json of a new job (reports/<jobId>/input.json, for inputs over the inline limit); ' +
          'the job id is minted per request, so the key cannot be named in advance.',
      },
      {
        id: `AwsSolutions-IAM5[Resource::<${bucketId}.Arn>/${INBOX_UPLOAD_PATTERN}]`,
        reason:
          'Presigns only the PUTs of a manifest or documents the dashboard uploads (inbox/<workflow>/<batch>/<file>), each bound to its ' +
          'checked SHA-256, and looks the documents up before the commit writes their manifest; the batch folder is named per upload, ' +
          'so the key cannot be named in advance.',
      },
      {
        id: `AwsSolutions-IAM5[Resource::<${bucketId}.Arn>/${BATCH_OUTPUT_PATTERN}]`,
        reason:
          'Reads and writes only the outputs of batches (batches/<batchId>/summary.csv and the like) for ' +
          'GET /batches/{id}/outputs/{file}; batch ids are minted per ingest, so the keys cannot be named in advance.',
      },
    ]);
    Validations.of(policyOf(this.worker)).acknowledge({
      id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:secretsmanager:<AWS::Region>:<AWS::AccountId>:secret:${this.secrets.apiKeySecretPrefix}*]`,
      reason:
        "Reads the API key secrets under the stage's prefix (named <prefix><tenant>); tenants are added after " +
        'deploy with the aws CLI, and secret ARNs end in a random suffix, so the prefix pattern is the narrowest name.',
    });
  }

  /** The wildcard resources of the automation functions' policies, each as narrow as its access allows. */
  private acknowledgeAutomationWildcards(): void {
    const bucketId = this.logicalIdOf(this.storage.reportBucket);
    const secretFinding = (prefix: string, what: string) => ({
      id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:secretsmanager:<AWS::Region>:<AWS::AccountId>:secret:${prefix}*]`,
      reason: `Reads the ${what} secrets under the stage's prefix (one per tenant or source, ARNs end in a random suffix).`,
    });
    const policyOf = (fn: PipelineFunction) => fn.role.node.findChild('DefaultPolicy');
    Validations.of(policyOf(this.automation.callbackSender)).acknowledge(
      secretFinding(this.automation.callbackSecretPrefix, 'callback signing'),
    );
    Validations.of(policyOf(this.automation.callbackSender)).acknowledge({
      id: `AwsSolutions-IAM5[Resource::<${bucketId}.Arn>/reports/*]`,
      reason:
        'GetObject only, to presign the report links of a finished job in its callback (reports/<jobId>/...).',
    });
    const webhooks = policyOf(this.automation.webhookReceiver);
    Validations.of(webhooks).acknowledge(
      secretFinding(this.automation.webhookSecretPrefix, 'webhook signing'),
    );
    Validations.of(webhooks).acknowledge({
      id: `AwsSolutions-IAM5[Resource::<${bucketId}.Arn>/reports/*/input.json]`,
      reason:
        'Puts and reads back only the input.json of a new job whose input is over the inline limit; job ids are minted per delivery.',
    });
    if (this.automation.scheduleTarget) {
      Validations.of(policyOf(this.automation.scheduleTarget)).acknowledge({
        id: `AwsSolutions-IAM5[Resource::<${bucketId}.Arn>/reports/*/input.json]`,
        reason:
          'Puts only the input.json of a new job whose input is over the inline limit; job ids are minted per slot.',
      });
    }
  }

  /** Every function's physical name, by its role. */
  functionNames(): Record<string, string> {
    const byRole: Record<string, PipelineFunction | undefined> = {
      worker: this.worker,
      api: this.api,
      webhooks: this.automation.webhookReceiver,
      sweeper: this.sweeper,
      ingest: this.inbox.ingest,
      callbacks: this.automation.callbackSender,
      schedules: this.automation.scheduleTarget,
      events: this.liveEvents.events,
    };
    return Object.fromEntries(
      Object.entries(byRole).flatMap(([role, fn]) =>
        fn ? [[role, (fn.function.node.defaultChild as CfnFunction).functionName as string]] : [],
      ),
    );
  }

  /** The logical id cdk-nag shows in findings (`<LogicalId.Arn>`) for an L2 construct's resource. */
  private logicalIdOf(construct: Construct): string {
    const resource = construct.node.defaultChild;
    if (!(resource instanceof CfnElement))
      throw new Error(`${construct.node.path} has no CloudFormation resource`);
    return this.getLogicalId(resource);
  }
}
