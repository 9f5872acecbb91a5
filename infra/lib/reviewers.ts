/**
 * The reviewers on aws, added when opflow.config.json has a `reviewers` rule: the key links are
 * signed with (a generated secret), the reviewers' secret prefix for the channel URLs and the SMTP
 * server (put by the deployer with the aws CLI), the sweeper's pass (its grants and settings), the
 * api's pass after a first approval where a rule asks for two approvers, and
 * the confirmation page's public routes (`GET`/`POST /review/{token}`, no authorizer: the signed
 * token authenticates) on the webhooks function, throttled like the webhook route.
 */
import { Arn, ArnFormat, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import {
  type CfnStage,
  type HttpApi,
  HttpMethod,
  HttpNoneAuthorizer,
  type HttpStage,
} from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { type IGrantable, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import { reviewerSecretNames } from '../../shared/backends/aws/secrets-manager-reviewer-secrets';
import { reviewSecretPrefixVariable } from '../../shared/reviewers/reviewer-secrets';
import type { AutomationConfigItem } from './automation-config';
import type { PipelineFunction } from './pipeline-function';

/** The confirmation page's routes as API Gateway names them (route settings are keyed by them). */
export const REVIEW_ROUTE_KEYS = ['GET /review/{token}', 'POST /review/{token}'] as const;

export interface ReviewersProps {
  readonly prefix: string;
  readonly table: ITable;
  readonly config: AutomationConfigItem;
  readonly sweeper: PipelineFunction;
  /** The webhooks function: the public one, which serves the confirmation page too. */
  readonly page: PipelineFunction;
  /**
   * The api function, given when a rule asks for two approvers: a first approval through the job
   * API calls for the second at once (the reviewers' pass for that job), not at the sweeper's next run.
   */
  readonly api?: PipelineFunction | undefined;
  readonly httpApi: HttpApi;
  readonly stage: HttpStage;
  /** Where people's browsers reach the API (the links are made from it). */
  readonly publicUrl: string;
  readonly throttle: { rateLimit: number; burstLimit: number };
  readonly removalPolicy: 'retain' | 'destroy';
}

export class Reviewers extends Construct {
  /** Every reviewers' secret is named `<secretPrefix>...` (reviewerSecretNames). */
  readonly secretPrefix: string;
  readonly linkKey: Secret;

  constructor(scope: Construct, id: string, props: ReviewersProps) {
    super(scope, id);
    this.secretPrefix = `${props.prefix}/review/`;
    this.linkKey = new Secret(this, 'LinkKey', {
      secretName: reviewerSecretNames.linkKey(this.secretPrefix),
      description: 'the key opflow signs the links of reviewers notices with (links die when it changes)',
      generateSecretString: { passwordLength: 64, excludePunctuation: true },
      removalPolicy: props.removalPolicy === 'retain' ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
    });
    Validations.of(this.linkKey).acknowledge({
      id: 'AwsSolutions-SMG4',
      reason:
        'Rotating the link key ends every link already sent; a reminder brings new ones. It is a put-secret-value ' +
        'when wanted (read again within 5 minutes), not a schedule.',
    });
    this.sweeperPass(props);
    this.confirmationPage(props);
    if (props.api) {
      this.apiCalls(props.api, props.publicUrl);
      // A first approval on the page calls for the second approver from the webhooks function too.
      props.page.function.addEnvironment('OPFLOW_PUBLIC_URL', props.publicUrl);
    }
    for (const fn of [props.sweeper, props.page, ...(props.api ? [props.api] : [])])
      Validations.of(fn.role.node.findChild('DefaultPolicy')).acknowledge({
        id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:secretsmanager:<AWS::Region>:<AWS::AccountId>:secret:${this.secretPrefix}*]`,
        reason:
          "Reads the reviewers' secrets under the stage's prefix (the link key, channel URLs added by the deployer " +
          'with the aws CLI, the SMTP server); secret ARNs end in a random suffix, so the prefix is the narrowest name.',
      });
  }

  /** The sweeper: reads the config item, the secrets, the jobs awaiting a selection; commits rounds and answers. */
  private sweeperPass(props: ReviewersProps): void {
    const fn = props.sweeper.function;
    fn.addEnvironment(reviewSecretPrefixVariable, this.secretPrefix);
    fn.addEnvironment('OPFLOW_PUBLIC_URL', props.publicUrl);
    props.config.grantRead(fn);
    this.readSecrets(props.sweeper.role);
    // Its own sweep already queries byStatusShard (the jobs awaiting a selection) and puts jobs.
    // The pass also reads a job again (GetItem) and writes its history (HIST#).
    props.sweeper.role.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ['dynamodb:GetItem', 'dynamodb:PutItem'],
        resources: [props.table.tableArn],
        conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['JOB#*', 'HIST#*'] } },
      }),
    );
  }

  /** The api function: the secrets and the links' URL for its pass after a first approval (it already reads the config item and commits jobs). */
  private apiCalls(api: PipelineFunction, publicUrl: string): void {
    api.function.addEnvironment(reviewSecretPrefixVariable, this.secretPrefix);
    api.function.addEnvironment('OPFLOW_PUBLIC_URL', publicUrl);
    this.readSecrets(api.role);
  }

  /** The page's routes on the webhooks function (which already reads and commits jobs). */
  private confirmationPage(props: ReviewersProps): void {
    props.page.function.addEnvironment(reviewSecretPrefixVariable, this.secretPrefix);
    this.readSecrets(props.page.role);
    const routes = props.httpApi.addRoutes({
      path: '/review/{token}',
      methods: [HttpMethod.GET, HttpMethod.POST],
      integration: new HttpLambdaIntegration('ReviewPage', props.page.function),
      authorizer: new HttpNoneAuthorizer(),
    });
    for (const route of routes)
      Validations.of(route).acknowledge({
        id: 'AwsSolutions-APIG4',
        reason:
          'A reviewer opens a link from a mail or a chat: no IAM, no JWT. The signed, expiring token in the path ' +
          'is the credential (checked by the function, 403/410 otherwise); GET never answers; the route has its own throttle.',
      });
    const stage = props.stage.node.defaultChild as CfnStage;
    for (const key of REVIEW_ROUTE_KEYS)
      stage.addPropertyOverride(`RouteSettings.${key}`, {
        ThrottlingRateLimit: props.throttle.rateLimit,
        ThrottlingBurstLimit: props.throttle.burstLimit,
      });
  }

  /** GetSecretValue on the reviewers' secrets only. */
  private readSecrets(grantee: IGrantable): void {
    grantee.grantPrincipal.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ['secretsmanager:GetSecretValue'],
        resources: [
          Arn.format(
            {
              service: 'secretsmanager',
              resource: 'secret',
              resourceName: `${this.secretPrefix}*`,
              arnFormat: ArnFormat.COLON_RESOURCE_NAME,
            },
            Stack.of(this),
          ),
        ],
      }),
    );
  }
}
