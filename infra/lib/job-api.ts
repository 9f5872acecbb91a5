/**
 * The HTTP API in front of the api function: the job routes, each requiring IAM (SigV4) or a JWT per
 * the stage config, one `$default` stage with throttling and JSON access logs in a log group.
 */
import { RemovalPolicy } from 'aws-cdk-lib';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import {
  HttpApi,
  HttpMethod,
  HttpStage,
  type IHttpRouteAuthorizer,
  LogGroupLogDestination,
} from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpIamAuthorizer, HttpJwtAuthorizer } from 'aws-cdk-lib/aws-apigatewayv2-authorizers';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import type { StageConfig } from '../config';

/** The job API's routes, as `METHOD path` (the api function's router must answer each). */
export const JOB_ROUTES = [
  { method: HttpMethod.POST, path: '/jobs' },
  { method: HttpMethod.GET, path: '/jobs' },
  { method: HttpMethod.GET, path: '/health' },
  { method: HttpMethod.GET, path: '/openapi.json' },
  { method: HttpMethod.GET, path: '/jobs/{id}' },
  { method: HttpMethod.POST, path: '/jobs/{id}/selection' },
  { method: HttpMethod.POST, path: '/jobs/{id}/cancel' },
  { method: HttpMethod.POST, path: '/jobs/{id}/retry' },
  { method: HttpMethod.GET, path: '/jobs/{id}/report' },
] as const;

/** Settings of {@link JobApi}. */
export interface JobApiProps {
  readonly apiName: string;
  readonly handler: IFunction;
  readonly auth: StageConfig['api']['auth'];
  readonly throttle: StageConfig['api']['throttle'];
  readonly accessLogGroupName: string;
  readonly logRetention: RetentionDays;
  readonly removalPolicy: 'retain' | 'destroy';
}

/** One access log line per request, as JSON; no headers, query strings or bodies (they may carry secrets). */
const ACCESS_LOG_FORMAT = AccessLogFormat.custom(
  JSON.stringify({
    requestId: '$context.requestId',
    requestTime: '$context.requestTimeEpoch',
    routeKey: '$context.routeKey',
    path: '$context.path',
    status: '$context.status',
    responseLength: '$context.responseLength',
    responseLatency: '$context.responseLatency',
    integrationLatency: '$context.integrationLatency',
    integrationError: '$context.integrationErrorMessage',
    authorizerError: '$context.authorizer.error',
    caller: '$context.identity.caller',
    jwtSubject: '$context.authorizer.claims.sub',
    sourceIp: '$context.identity.sourceIp',
    userAgent: '$context.identity.userAgent',
  }),
);

/** The job HTTP API and its `$default` stage. */
export class JobApi extends Construct {
  readonly httpApi: HttpApi;
  readonly stage: HttpStage;
  readonly accessLogGroup: LogGroup;

  constructor(scope: Construct, id: string, props: JobApiProps) {
    super(scope, id);
    const authorizer: IHttpRouteAuthorizer =
      props.auth.mode === 'jwt'
        ? new HttpJwtAuthorizer('JwtAuthorizer', props.auth.issuer, { jwtAudience: [...props.auth.audience] })
        : new HttpIamAuthorizer();

    // The default stage HttpApi would create takes neither throttling nor access logs: create it here.
    this.httpApi = new HttpApi(this, 'HttpApi', {
      apiName: props.apiName,
      description: 'opflow job API',
      createDefaultStage: false,
      defaultAuthorizer: authorizer,
    });
    const integration = new HttpLambdaIntegration('ApiFunction', props.handler);
    for (const route of JOB_ROUTES) {
      this.httpApi.addRoutes({ path: route.path, methods: [route.method], integration });
    }

    this.accessLogGroup = new LogGroup(this, 'AccessLogs', {
      logGroupName: props.accessLogGroupName,
      retention: props.logRetention,
      removalPolicy: props.removalPolicy === 'retain' ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
    });
    this.stage = new HttpStage(this, 'DefaultStage', {
      httpApi: this.httpApi,
      stageName: '$default',
      autoDeploy: true,
      throttle: { rateLimit: props.throttle.rateLimit, burstLimit: props.throttle.burstLimit },
      accessLogSettings: {
        destination: new LogGroupLogDestination(this.accessLogGroup),
        format: ACCESS_LOG_FORMAT,
      },
    });
  }

  /** The API's invoke URL (ends with `/`). */
  get url(): string {
    return this.stage.url;
  }
}
