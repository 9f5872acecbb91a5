/**
 * The webhook mappings and schedules of opflow.config.json as one config item in the job table,
 * written at deploy, instead of environment variables (Lambda allows 4 KB of those per function, so
 * 20 mappings did not fit). The item is `PK = CONFIG`, `SK = automation#<hash of the body>`; the
 * functions that serve webhooks or list schedules get the sort key in OPFLOW_AUTOMATION_CONFIG and
 * read the item once per container (shared/runtime/lambda/automation.ts).
 *
 * Why a table item: the functions already hold a DynamoDB client and the table, a GetItem on a
 * cold start costs a few milliseconds and nothing at idle, the table's key (AWS-owned or the
 * stack's own KMS key) covers it, and the item never expires (no `expiresAt`). The hash in its key
 * makes a changed config a changed variable, so Lambda starts fresh containers: none serves a
 * stale copy, and the old item stays for the containers still finishing on it.
 */
import { createHash } from 'node:crypto';
import { RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { type IGrantable, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import {
  AwsCustomResource,
  AwsCustomResourcePolicy,
  Logging,
  PhysicalResourceId,
} from 'aws-cdk-lib/custom-resources';
import { Construct } from 'constructs';
import { ConfigFileError, type OpflowConfig } from '../../shared/config/opflow-config';
import {
  AUTOMATION_CONFIG_VARIABLE,
  automationConfigSortKey,
  CONFIG_ITEM_PARTITION,
} from '../../shared/runtime/aws/config';

/**
 * The largest config body accepted (200 KiB of JSON): half of DynamoDB's 400 KB item, and inside
 * the 256 KB CloudFormation's request to the function that writes the item can carry (Lambda's
 * limit on an asynchronous invocation). 200 webhook mappings of a few fields take about 30 KB.
 */
export const AUTOMATION_CONFIG_MAX_BYTES = 200 * 1024;

/**
 * The body of the config item: the webhook mappings, schedules and reviewers (when the config has
 * any: a config without them keeps the body, and the item, it had before reviewers), as JSON, and
 * its hash.
 */
export function automationConfigBody(
  automation: Pick<OpflowConfig, 'webhooks' | 'schedules'> & Partial<Pick<OpflowConfig, 'reviewers'>>,
): {
  body: string;
  hash: string;
} {
  const body = JSON.stringify({
    webhooks: automation.webhooks,
    schedules: automation.schedules,
    ...(automation.reviewers ? { reviewers: automation.reviewers } : {}),
  });
  return { body, hash: createHash('sha256').update(body).digest('hex').slice(0, 16) };
}

/** The singleton function CDK adds for every AwsCustomResource of a stack. */
const PROVIDER_ID = `AWS${AwsCustomResource.PROVIDER_FUNCTION_UUID.replaceAll('-', '')}`;

export interface AutomationConfigItemProps {
  readonly table: ITable;
  readonly automation: Pick<OpflowConfig, 'webhooks' | 'schedules'> &
    Partial<Pick<OpflowConfig, 'reviewers'>>;
  /** The config file as the deployer named it, for errors. */
  readonly file: string;
  /** The deploy-time writer's log: kept as long as the functions' logs, removed as they are. */
  readonly logRetention: RetentionDays;
  readonly removalPolicy: 'retain' | 'destroy';
}

/** The automation config item and what its readers need: the variable and the read grant. */
export class AutomationConfigItem extends Construct {
  /** The item's sort key (the value of OPFLOW_AUTOMATION_CONFIG). */
  readonly sortKey: string;
  private readonly table: ITable;

  constructor(scope: Construct, id: string, props: AutomationConfigItemProps) {
    super(scope, id);
    this.table = props.table;
    const { body, hash } = automationConfigBody(props.automation);
    const bytes = Buffer.byteLength(body);
    if (bytes > AUTOMATION_CONFIG_MAX_BYTES) {
      const share = (value: unknown) => Buffer.byteLength(JSON.stringify(value));
      throw new ConfigFileError(
        `${props.file}: the webhook mappings (${share(props.automation.webhooks)} bytes) and schedules ` +
          `(${share(props.automation.schedules)} bytes) take ${bytes} bytes as JSON, over the ${AUTOMATION_CONFIG_MAX_BYTES} ` +
          "the stack's config item holds (a DynamoDB item, written at deploy): shorten their inputs",
      );
    }
    this.sortKey = automationConfigSortKey(hash);
    const writer = new AwsCustomResource(this, 'Writer', {
      resourceType: 'Custom::OpflowAutomationConfig',
      // onUpdate serves the create too. A changed config is a new item (a new physical id); the old
      // one is left for containers still running on it, and nothing is deleted on stack deletion.
      onUpdate: {
        service: 'DynamoDB',
        action: 'putItem',
        parameters: {
          TableName: props.table.tableName,
          Item: {
            PK: { S: CONFIG_ITEM_PARTITION },
            SK: { S: this.sortKey },
            body: { S: body },
          },
        },
        physicalResourceId: PhysicalResourceId.of(this.sortKey),
        // Callback URLs and inputs are the deployer's business: not copied into the writer's log.
        logging: Logging.withDataHidden(),
      },
      policy: AwsCustomResourcePolicy.fromStatements([
        new PolicyStatement({ actions: ['dynamodb:PutItem'], resources: [props.table.tableArn] }),
      ]),
      installLatestAwsSdk: false,
      logGroup: new LogGroup(this, 'WriterLog', {
        retention: props.logRetention,
        removalPolicy: props.removalPolicy === 'retain' ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
      }),
    });
    // With the stack's own KMS key, the writer encrypts with it.
    props.table.encryptionKey?.grantEncrypt(writer);
    this.acknowledgeProvider();
  }

  /** Lets `fn` read the config item (GetItem on `PK = CONFIG` only) and tells it which one. */
  grantRead(fn: IGrantable & { addEnvironment(key: string, value: string): unknown }): void {
    fn.addEnvironment(AUTOMATION_CONFIG_VARIABLE, this.sortKey);
    fn.grantPrincipal.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ['dynamodb:GetItem'],
        resources: [this.table.tableArn],
        conditions: { 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': [CONFIG_ITEM_PARTITION] } },
      }),
    );
    this.table.encryptionKey?.grantDecrypt(fn);
  }

  /** cdk-nag's findings on CDK's own provider function, which runs only at deploy. */
  private acknowledgeProvider(): void {
    const provider = Stack.of(this).node.tryFindChild(PROVIDER_ID);
    if (!provider) return;
    const reason = (what: string) =>
      `CDK's own function that writes the automation config item during a deploy (not opflow code): ${what}`;
    Validations.of(provider).acknowledge(
      {
        id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
        reason: reason('it only writes its log.'),
      },
      {
        id: 'Serverless-LambdaDLQ',
        reason: reason('CloudFormation invokes it and fails the deploy when it fails.'),
      },
      { id: 'Serverless-LambdaDefaultMemorySize', reason: reason('one small DynamoDB call per deploy.') },
      { id: 'Serverless-LambdaTracing', reason: reason('one DynamoDB call per deploy, nothing to trace.') },
    );
  }
}
