/**
 * The HTTP API in front of the api function: the routes of the route table the AWS stack serves
 * (the job routes and the dashboard's: timeline, batches, schedules, webhook deliveries), each
 * requiring IAM (SigV4) or a JWT per the stage config, one `$default` stage with throttling and JSON access logs in a log group. With `dashboardOrigins`
 * (JWT only), CORS lets a static dashboard on those origins call it from a browser: API Gateway
 * answers the preflight (OPTIONS, no authorizer) and adds the CORS headers to every answer.
 */
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import {
  CorsHttpMethod,
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
import { routesServedBy } from '../../shared/http/routes';
import type { StageConfig } from '../config';

/**
 * The routes this construct gives the api function, from the route table (shared/http/routes.ts):
 * every route the AWS stack serves that a caller authenticates for (IAM or JWT). The webhook route
 * (`auth: 'signature'`, no authorizer) is the Automation construct's.
 */
export const JOB_ROUTES = routesServedBy('aws')
  .filter((route) => route.auth === 'caller')
  .map((route) => ({ method: HttpMethod[route.method], path: route.path }));

/** The headers a dashboard sends (the bearer JWT, JSON bodies, an idempotency key). */
export const DASHBOARD_CORS_HEADERS = ['authorization', 'content-type', 'idempotency-key'] as const;

/** Settings of {@link JobApi}. */
export interface JobApiProps {
  readonly apiName: string;
  readonly handler: IFunction;
  readonly auth: StageConfig['api']['auth'];
  readonly throttle: StageConfig['api']['throttle'];
  readonly accessLogGroupName: string;
  readonly logRetention: RetentionDays;
  readonly removalPolicy: 'retain' | 'destroy';
  /** Origins of a static dashboard allowed by CORS (JWT auth only; the stage config checks it). */
  readonly dashboardOrigins?: readonly string[] | undefined;
}

/**
 * One access log line per request, as JSON; no headers, query strings, bodies or paths (they may
 * carry secrets: the path of a reviewers' confirmation page is its signed token). The route key
 * (`GET /review/{token}`, `GET /jobs/{id}`) says which route without the values.
 */
const ACCESS_LOG_FORMAT = AccessLogFormat.custom(
  JSON.stringify({
    requestId: '$context.requestId',
    requestTime: '$context.requestTimeEpoch',
    routeKey: '$context.routeKey',
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
      ...(props.dashboardOrigins && props.dashboardOrigins.length > 0
        ? {
            corsPreflight: {
              allowOrigins: [...props.dashboardOrigins],
              allowMethods: [CorsHttpMethod.GET, CorsHttpMethod.POST, CorsHttpMethod.OPTIONS],
              allowHeaders: [...DASHBOARD_CORS_HEADERS],
              exposeHeaders: ['location', 'retry-after'],
              allowCredentials: false,
              maxAge: Duration.hours(1),
            },
          }
        : {}),
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
