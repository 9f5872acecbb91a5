/**
 * Callbacks, webhooks and schedules on aws, one construct added to the stack with a few lines: the callback sender (a
 * function on the job table's stream, handed the outbox entries that come due; per-tenant signing
 * secrets), the webhook route of the HTTP API
 * (`POST /webhooks/{source}`, no IAM: the HMAC authenticates; throttled per route), and one
 * EventBridge Scheduler schedule per schedule of opflow.config.json (time zone, retries, a
 * dead-letter queue) whose target, the `schedules` function, creates the slot's job. Each function
 * gets only what it touches: DynamoDB actions limited to the item kinds it reads and writes
 * (`dynamodb:LeadingKeys`), its secrets by prefix, no API keys.
 */
import {
  Arn,
  ArnFormat,
  type CfnElement,
  Duration,
  RemovalPolicy,
  Stack,
  TimeZone,
  Validations,
} from 'aws-cdk-lib';
import {
  type CfnStage,
  type HttpApi,
  HttpMethod,
  HttpNoneAuthorizer,
  type HttpStage,
} from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { type IGrantable, PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import {
  type CfnFunction,
  EventSourceMapping,
  FilterCriteria,
  FilterRule,
  StartingPosition,
} from 'aws-cdk-lib/aws-lambda';
import { DynamoEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import {
  ContextAttribute,
  Schedule,
  ScheduleExpression,
  ScheduleTargetInput,
  TimeWindow,
} from 'aws-cdk-lib/aws-scheduler';
import { LambdaInvoke } from 'aws-cdk-lib/aws-scheduler-targets';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { type IQueue, Queue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { ConfigFileError, type OpflowConfig, parseDuration } from '../../shared/config/opflow-config';
import { AutomationConfigItem } from './automation-config';
import { eventBridgeCron } from './eventbridge-cron';
import type { JOB_TABLE } from './job-storage';
import { PipelineFunction, type PipelineFunctionProps } from './pipeline-function';
import { acknowledgeDeadLetterQueue, queueEncryption } from './work-queue';

export { eventBridgeCron } from './eventbridge-cron';

/** The webhook route as API Gateway names it (its route settings are keyed by it). */
export const WEBHOOK_ROUTE_KEY = 'POST /webhooks/{source}';

/**
 * The stream records the callback function is invoked with: an outbox entry item (`CBQ`) written
 * due, or marked due since by the sweeper (dynamodb-callback-outbox.ts). A claim's lease, a retry
 * at a later time, a removal and every other item invoke nothing.
 */
export const CALLBACK_DUE_FILTER = {
  eventName: FilterRule.or('INSERT', 'MODIFY'),
  dynamodb: { Keys: { PK: { S: FilterRule.isEqual('CBQ') } }, NewImage: { due: { BOOL: [true] } } },
};

/** EventBridge Scheduler's longest schedule name. */
export const SCHEDULE_NAME_MAX_LENGTH = 64;

export interface AutomationProps {
  readonly prefix: string;
  readonly tenants: readonly string[];
  readonly automation: OpflowConfig;
  /** The job table, with its stream on (the callback function reads it). */
  readonly table: ITable;
  readonly bucket: IBucket;
  readonly workQueue: IQueue;
  readonly api: PipelineFunction;
  readonly httpApi: HttpApi;
  readonly stage: HttpStage;
  readonly webhookThrottle: { rateLimit: number; burstLimit: number };
  /** Reserved concurrency of the webhooks function (its share and its maximum); none by default. */
  readonly webhookReservedConcurrency?: number | undefined;
  /** The config file as the deployer named it, for errors (default opflow.config.json). */
  readonly configFile?: string | undefined;
  readonly functionDefaults: Pick<
    PipelineFunctionProps,
    'environment' | 'logRetention' | 'removalPolicy' | 'tracing'
  >;
}

export class Automation extends Construct {
  readonly callbackSecretPrefix: string;
  readonly webhookSecretPrefix: string;
  readonly callbackSecrets: ReadonlyMap<string, Secret>;
  readonly callbackSender: PipelineFunction;
  /** The webhook route's own function (`POST /webhooks/{source}`). */
  readonly webhookReceiver: PipelineFunction;
  readonly scheduleTarget: PipelineFunction | undefined;
  readonly scheduleDeadLetterQueue: Queue | undefined;
  readonly schedules: Schedule[] = [];
  /** The webhook mappings and schedules, as the config item the functions read. */
  readonly config: AutomationConfigItem;

  constructor(scope: Construct, id: string, props: AutomationProps) {
    super(scope, id);
    const { prefix } = props;
    const file = props.configFile ?? 'opflow.config.json';
    refuseLongScheduleNames(prefix, props.automation.schedules, file);
    this.config = new AutomationConfigItem(this, 'Config', {
      table: props.table,
      automation: props.automation,
      file,
      logRetention: props.functionDefaults.logRetention,
      removalPolicy: props.functionDefaults.removalPolicy,
    });
    this.callbackSecretPrefix = `${prefix}/callback-signing/`;
    this.webhookSecretPrefix = `${prefix}/webhook/`;
    const removalPolicy =
      props.functionDefaults.removalPolicy === 'retain' ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY;

    // Per-tenant callback signing secrets, generated once (receivers are given the value).
    const secrets = new Map<string, Secret>();
    for (const tenant of props.tenants) {
      const secret = new Secret(this, `CallbackSigning-${tenant}`, {
        secretName: `${this.callbackSecretPrefix}${tenant}`,
        description: `Standard Webhooks key opflow signs tenant "${tenant}"'s callbacks with`,
        generateSecretString: { passwordLength: 64, excludePunctuation: true },
        removalPolicy,
      });
      Validations.of(secret).acknowledge({
        id: 'AwsSolutions-SMG4',
        reason:
          'Receivers verify callbacks with this key, so a new one must reach them first: rotation is a coordinated ' +
          'put-secret-value (the sender re-reads it within 5 minutes), not a scheduled Lambda.',
      });
      secrets.set(tenant, secret);
    }
    this.callbackSecrets = secrets;

    const stack = Stack.of(this);
    const secretArns = (namePrefix: string) =>
      Arn.format(
        {
          service: 'secretsmanager',
          resource: 'secret',
          resourceName: `${namePrefix}*`,
          arnFormat: ArnFormat.COLON_RESOURCE_NAME,
        },
        stack,
      );
    const readSecrets = (grantee: IGrantable, namePrefix: string) =>
      grantee.grantPrincipal.addToPrincipalPolicy(
        new PolicyStatement({
          actions: ['secretsmanager:GetSecretValue'],
          resources: [secretArns(namePrefix)],
        }),
      );
    const items = (grantee: IGrantable, actions: string[], leadingKeys: string[]) =>
      grantee.grantPrincipal.addToPrincipalPolicy(
        new PolicyStatement({
          actions: actions.map((action) => `dynamodb:${action}`),
          resources: [props.table.tableArn],
          conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': leadingKeys } },
        }),
      );

    // The callback sender: reads the outbox and the jobs, records attempts on the jobs.
    this.callbackSender = new PipelineFunction(this, 'CallbackSender', {
      ...props.functionDefaults,
      environment: {
        ...props.functionDefaults.environment,
        OPFLOW_CALLBACK_SECRET_PREFIX: this.callbackSecretPrefix,
      },
      name: 'callbacks',
      functionName: `${prefix}-callback-sender`,
      description: 'opflow: delivers the signed callbacks of finished jobs, with retries (job table stream)',
      timeout: Duration.seconds(70),
      memorySize: 512,
    });
    items(
      this.callbackSender.role,
      ['GetItem', 'PutItem', 'DeleteItem', 'Query', 'ConditionCheckItem'],
      ['CBQ', 'CBJOB#*', 'JOB#*'],
    );
    readSecrets(this.callbackSender.role, this.callbackSecretPrefix);
    this.callbackSender.role.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ['s3:GetObject'],
        resources: [props.bucket.arnForObjects('reports/*')],
      }),
    );
    // Woken by the job table's stream, never by a timer or a queue: the outbox entry of a job that
    // ends is written due (by the function that commits the end), and the sweeper's minute pass marks
    // the entries that come due later (a retry, a recheck, a dead sender's lease). Lambda reads a
    // stream at no charge, so nothing is paid while no callback is due. Records of one partition
    // (the outbox's) come in order, one batch at a time: one instance per shard, each making at most
    // 8 deliveries at once, 2 per receiver host.
    this.callbackSender.function.addEventSource(
      new DynamoEventSource(props.table, {
        startingPosition: StartingPosition.LATEST,
        batchSize: 25,
        // A batch that fails (a fault of the store or Secrets Manager) is tried twice more, then
        // left: the outbox keeps its entries and the sweeper marks them due again the next minute.
        retryAttempts: 2,
        bisectBatchOnError: false,
        maxRecordAge: Duration.hours(1),
        filters: [FilterCriteria.filter(CALLBACK_DUE_FILTER)],
      }),
    );
    for (const mapping of this.callbackSender.function.node.children.filter(
      (child) => child instanceof EventSourceMapping,
    ))
      Validations.of(mapping).acknowledge({
        id: 'Serverless-LambdaEventSourceMappingDestination',
        reason:
          'The callback outbox in the job table is the record of what is undelivered: a batch left after its retries ' +
          "keeps its entries there, and the sweeper's minute pass marks them due again; the function's errors alarm.",
      });
    Validations.of(this.callbackSender.role.node.findChild('DefaultPolicy')).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        'dynamodb:ListStreams (added by the stream event source) has no resource-level permissions; the stream ' +
        "reads themselves name the job table's stream.",
    });

    // The webhook route: a function of its own (a flood of bad signatures takes its concurrency and the
    // route's throttle, never the job API's), no IAM (the signature authenticates).
    this.webhookReceiver = this.webhookFunction(props, items, readSecrets);
    // The api reads the schedules (GET /schedules, trigger, pause, resume) from the config item.
    this.config.grantRead(props.api.function);
    const [route] = props.httpApi.addRoutes({
      path: '/webhooks/{source}',
      methods: [HttpMethod.POST],
      integration: new HttpLambdaIntegration('Webhooks', this.webhookReceiver.function),
      authorizer: new HttpNoneAuthorizer(),
    });
    Validations.of(route!).acknowledge({
      id: 'AwsSolutions-APIG4',
      reason:
        'Webhook senders cannot sign with IAM or hold a JWT: each request carries a Standard Webhooks HMAC signature ' +
        'over its raw body, checked by the function (401 otherwise); the route has its own throttle.',
    });
    (props.stage.node.defaultChild as CfnStage).addPropertyOverride('RouteSettings', {
      [WEBHOOK_ROUTE_KEY]: {
        ThrottlingRateLimit: props.webhookThrottle.rateLimit,
        ThrottlingBurstLimit: props.webhookThrottle.burstLimit,
      },
    });

    // The schedules.
    const schedules = props.automation.schedules;
    if (schedules.length === 0) return;
    this.scheduleDeadLetterQueue = new Queue(this, 'ScheduleDeadLetters', {
      queueName: `${prefix}-schedule-dlq`,
      ...queueEncryption(props.table.encryptionKey),
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    Validations.of(this.scheduleDeadLetterQueue).acknowledge({
      id: 'AwsSolutions-SQS3',
      reason: 'This queue is the dead-letter queue of the EventBridge Scheduler schedules.',
    });
    acknowledgeDeadLetterQueue(this.scheduleDeadLetterQueue);
    this.scheduleTarget = new PipelineFunction(this, 'ScheduleTarget', {
      ...props.functionDefaults,
      name: 'schedules',
      functionName: `${prefix}-schedules`,
      description: 'opflow: creates the job of a schedule slot (EventBridge Scheduler target)',
      timeout: Duration.seconds(30),
      memorySize: 512,
    });
    items(
      this.scheduleTarget.role,
      ['GetItem', 'PutItem', 'ConditionCheckItem', 'DeleteItem', 'BatchGetItem'],
      ['JOB#*', 'IDEM#*', 'SCHED#*', 'CBQ', 'CBJOB#*', 'HIST#*'],
    );
    props.workQueue.grantSendMessages(this.scheduleTarget.role);
    // A large input is written as reports/<jobId>/input.json, and read back when a slot delivered again
    // finds its job; the day cost cap lists the tenant's jobs of the last 24 hours (byStatusShard).
    this.scheduleTarget.role.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ['s3:GetObject', 's3:PutObject'],
        resources: [props.bucket.arnForObjects('reports/*/input.json')],
      }),
    );
    const statusIndex: keyof typeof JOB_TABLE.indexes = 'byStatusShard';
    this.scheduleTarget.role.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ['dynamodb:Query'],
        resources: [`${props.table.tableArn}/index/${statusIndex}`],
      }),
    );
    // One role for every schedule: invoke the schedules function, send to the dead-letter queue.
    const schedulerRole = new Role(this, 'SchedulerRole', {
      assumedBy: new ServicePrincipal('scheduler.amazonaws.com', {
        conditions: { StringEquals: { 'aws:SourceAccount': Stack.of(this).account } },
      }),
      description: 'opflow: EventBridge Scheduler invoking the schedules function',
    });
    for (const [index, schedule] of schedules.entries()) {
      const where = `${file}: schedules[${index}].cron`;
      const created = new Schedule(this, `Schedule-${schedule.name}`, {
        scheduleName: `${prefix}-${schedule.name}`,
        description: `opflow schedule ${schedule.name}: ${schedule.workflow}`,
        schedule: ScheduleExpression.expression(
          eventBridgeCron(schedule.cron, where),
          TimeZone.of(schedule.timezone),
        ),
        target: new LambdaInvoke(this.scheduleTarget.function, {
          input: ScheduleTargetInput.fromObject({ schedule, slot: ContextAttribute.scheduledTime }),
          deadLetterQueue: this.scheduleDeadLetterQueue,
          role: schedulerRole,
          retryAttempts: 5,
          maxEventAge: Duration.hours(1),
        }),
        enabled: schedule.paused === undefined,
        ...(schedule.jitter && parseDuration(schedule.jitter) >= 60_000
          ? {
              timeWindow: TimeWindow.flexible(
                Duration.minutes(Math.min(1440, Math.floor(parseDuration(schedule.jitter) / 60_000))),
              ),
            }
          : {}),
      });
      this.schedules.push(created);
    }
    Validations.of(schedulerRole.node.findChild('DefaultPolicy')).acknowledge({
      id: `AwsSolutions-IAM5[Resource::<${Stack.of(this).getLogicalId(this.scheduleTarget.function.node.defaultChild as CfnElement)}.Arn>:*]`,
      reason:
        'lambda:InvokeFunction on the schedules function and its versions (grantInvoke adds ":*"); nothing else.',
    });
  }

  /**
   * The webhooks function: reads the config item (mappings) and the webhook secrets, creates jobs as
   * the api does (the job, its idempotency key, its history, its callback entry; an input over the
   * inline limit in S3, read back for a replay), records each delivery (`HOOKLOG`), and lists a source's recent jobs for its
   * day cap (`byStatusShard`).
   */
  private webhookFunction(
    props: AutomationProps,
    items: (grantee: IGrantable, actions: string[], leadingKeys: string[]) => unknown,
    readSecrets: (grantee: IGrantable, namePrefix: string) => unknown,
  ): PipelineFunction {
    const receiver = new PipelineFunction(this, 'WebhookReceiver', {
      ...props.functionDefaults,
      environment: {
        ...props.functionDefaults.environment,
        OPFLOW_WEBHOOK_SECRET_PREFIX: this.webhookSecretPrefix,
      },
      name: 'webhooks',
      functionName: `${props.prefix}-webhooks`,
      description: 'opflow: the webhook route (POST /webhooks/{source}): checks signatures, starts jobs',
      timeout: Duration.seconds(10),
      memorySize: 512,
    });
    if (props.webhookReservedConcurrency !== undefined) {
      (receiver.function.node.defaultChild as CfnFunction).reservedConcurrentExecutions =
        props.webhookReservedConcurrency;
    }
    this.config.grantRead(receiver.function);
    readSecrets(receiver.role, this.webhookSecretPrefix);
    items(
      receiver.role,
      ['GetItem', 'PutItem', 'DeleteItem', 'ConditionCheckItem', 'BatchGetItem'],
      ['JOB#*', 'IDEM#*', 'CBQ', 'CBJOB#*', 'HIST#*', 'HOOKLOG'],
    );
    const statusIndex: keyof typeof JOB_TABLE.indexes = 'byStatusShard';
    receiver.role.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ['dynamodb:Query'],
        resources: [`${props.table.tableArn}/index/${statusIndex}`],
      }),
    );
    props.workQueue.grantSendMessages(receiver.role);
    // A large input is written as reports/<jobId>/input.json, and read back when a replay finds its job.
    receiver.role.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ['s3:GetObject', 's3:PutObject'],
        resources: [props.bucket.arnForObjects('reports/*/input.json')],
      }),
    );
    return receiver;
  }
}

/**
 * Refuses a schedule whose EventBridge Scheduler name (`<resource prefix>-<name>`) is over
 * {@link SCHEDULE_NAME_MAX_LENGTH}, naming the entry: the deploy would fail on it.
 */
export function refuseLongScheduleNames(
  prefix: string,
  schedules: OpflowConfig['schedules'],
  file: string,
): void {
  const problems = schedules.flatMap((schedule, index) => {
    const name = `${prefix}-${schedule.name}`;
    return name.length > SCHEDULE_NAME_MAX_LENGTH
      ? [
          `${file}: schedules[${index}].name: "${schedule.name}" makes the schedule name ${name} ` +
            `(${name.length} characters), over EventBridge Scheduler's ${SCHEDULE_NAME_MAX_LENGTH}: ` +
            `keep it to ${SCHEDULE_NAME_MAX_LENGTH - prefix.length - 1} characters, or shorten names.resourcePrefix`,
        ]
      : [];
  });
  if (problems.length > 0) throw new ConfigFileError(problems.join('\n'));
}
