/**
 * One opflow Lambda function: its code built with the local esbuild (function-bundling.ts, with code splitting),
 * Node.js 24 on arm64, tracing as the stage's `tracing` setting says (off by default), its own log group
 * with a retention, and its own role that starts with nothing but writing to that log group; callers add
 * exactly what the function touches with grant*.
 */
import { type Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import { Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import {
  Architecture,
  type CfnFunction,
  Function as LambdaFunction,
  LayerVersion,
  type RecursiveLoop,
  Runtime,
  Tracing,
} from 'aws-cdk-lib/aws-lambda';
import type { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { type FunctionName, functionCode } from './function-bundling';
import { type FunctionTracing, OPENTELEMETRY_EXEC_WRAPPER } from './function-tracing';

/** Lambda's limit on a function's environment variables, all of them together (4 KB). */
export const LAMBDA_ENVIRONMENT_MAX_BYTES = 4096;

/**
 * What a value the template leaves to CloudFormation (a Ref or Fn::GetAtt: a table or bucket name,
 * a queue URL) is counted as: the longest SQS queue URL, `https://sqs.<longest region>.amazonaws.com/
 * <account>/<80-character name>`, rounded up.
 */
const UNRESOLVED_VALUE_BYTES = 150;

/** Where a variable's value comes from, for the message that refuses an environment too large. */
const VARIABLE_SOURCES: Record<string, string> = {
  OPFLOW_API_AUTH: 'api.auth.operators of the stage config',
  OPFLOW_SHARES: 'openPlatform.shares of the stage config',
};

/**
 * The bytes a function's environment takes as Lambda counts it: every name and value, in UTF-8, a
 * value CloudFormation fills in counted at its longest. Returns the total and each variable's share,
 * largest first.
 */
export function environmentBytes(variables: Record<string, unknown>): {
  total: number;
  variables: { name: string; bytes: number }[];
} {
  const sized = Object.entries(variables).map(([name, value]) => ({
    name,
    bytes:
      Buffer.byteLength(name) +
      (typeof value === 'string' ? Buffer.byteLength(value) : UNRESOLVED_VALUE_BYTES),
  }));
  return {
    total: sized.reduce((sum, variable) => sum + variable.bytes, 0),
    variables: sized.sort((a, b) => b.bytes - a.bytes),
  };
}

/** Settings of {@link PipelineFunction}. */
export interface PipelineFunctionProps {
  readonly name: FunctionName;
  /** Physical function name; the log group is `/aws/lambda/<functionName>`. */
  readonly functionName: string;
  readonly description: string;
  readonly timeout: Duration;
  readonly memorySize: number;
  readonly environment: Record<string, string>;
  readonly logRetention: RetentionDays;
  readonly removalPolicy: 'retain' | 'destroy';
  /**
   * Lambda's recursive loop detection (default Terminate: a chain that invokes the function more
   * than 16 times is stopped). Allow only for a function that sends to its own trigger on purpose,
   * with a budget of its own that stops a runaway.
   */
  readonly recursiveLoop?: RecursiveLoop | undefined;
  /** How the function is traced; default `{ mode: 'off' }`. */
  readonly tracing?: FunctionTracing | undefined;
}

/** A bundled opflow function with its log group and least-privilege role. */
export class PipelineFunction extends Construct {
  readonly function: LambdaFunction;
  readonly logGroup: LogGroup;
  readonly role: Role;

  constructor(scope: Construct, id: string, props: PipelineFunctionProps) {
    super(scope, id);
    this.logGroup = new LogGroup(this, 'LogGroup', {
      logGroupName: `/aws/lambda/${props.functionName}`,
      retention: props.logRetention,
      removalPolicy: props.removalPolicy === 'retain' ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
    });
    // An explicit role keeps the AWSLambdaBasicExecutionRole managed policy (logs on every group) away.
    this.role = new Role(this, 'Role', {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      description: `opflow ${props.name} function`,
    });
    this.logGroup.grantWrite(this.role);
    const tracing = props.tracing ?? { mode: 'off' };

    this.function = new LambdaFunction(this, 'Function', {
      functionName: props.functionName,
      description: props.description,
      code: functionCode(props.name),
      handler: 'index.handler',
      runtime: Runtime.NODEJS_24_X,
      architecture: Architecture.ARM_64,
      timeout: props.timeout,
      memorySize: props.memorySize,
      ...(tracing.mode === 'off' ? {} : { tracing: Tracing.ACTIVE }),
      logGroup: this.logGroup,
      role: this.role,
      environment: { ...props.environment, NODE_OPTIONS: '--enable-source-maps' },
      ...(props.recursiveLoop ? { recursiveLoop: props.recursiveLoop } : {}),
    });
    if (tracing.mode === 'opentelemetry') {
      this.function.addLayers(LayerVersion.fromLayerVersionArn(this, 'OpenTelemetryLayer', tracing.layerArn));
      this.function.addEnvironment('AWS_LAMBDA_EXEC_WRAPPER', OPENTELEMETRY_EXEC_WRAPPER);
    }

    // A deploy would fail on an environment over 4 KB: synthesis refuses it first, naming what is large.
    this.function.node.addValidation({
      validate: () => {
        const cfn = this.function.node.defaultChild as CfnFunction;
        const resolved = Stack.of(this).resolve(cfn.environment) as
          | { variables?: Record<string, unknown> }
          | undefined;
        const size = environmentBytes(resolved?.variables ?? {});
        if (size.total <= LAMBDA_ENVIRONMENT_MAX_BYTES) return [];
        const largest = size.variables
          .slice(0, 3)
          .map(
            (v) =>
              `${v.name} ${v.bytes} bytes${VARIABLE_SOURCES[v.name] ? ` (${VARIABLE_SOURCES[v.name]})` : ''}`,
          );
        return [
          `the ${props.functionName} function's environment takes ${size.total} bytes, over Lambda's ` +
            `${LAMBDA_ENVIRONMENT_MAX_BYTES} for all variables together; largest: ${largest.join(', ')}`,
        ];
      },
    });

    // nodejs24.x is the newest Node.js runtime: AwsSolutions-L1 and Serverless-LambdaLatestVersion have nothing to say.
    Validations.of(this.function).acknowledge({
      id: 'Serverless-LambdaDLQ',
      reason:
        "A function's dead-letter target catches failed asynchronous invocations only. opflow's functions are " +
        "invoked by SQS event sources (failed messages go to the queue's own alarmed DLQ), synchronously by the " +
        "HTTP API (the caller gets the error), by the sweeper's rule (the next minute's run covers a miss) or by " +
        'EventBridge Scheduler (the schedule has its own DLQ).',
    });
    this.acknowledgeTracing(tracing);
  }

  /** cdk-nag's tracing findings, which depend on the mode. */
  private acknowledgeTracing(tracing: FunctionTracing): void {
    if (tracing.mode === 'off') {
      Validations.of(this.function).acknowledge({
        id: 'Serverless-LambdaTracing',
        reason:
          "Tracing is off by default (the stage's tracing setting turns on Lambda's active tracing or an " +
          'OpenTelemetry layer): every log line already carries the job id, step and correlation id, and no ' +
          'X-Ray SDK is bundled (it reaches end of support on 2027-02-25).',
      });
      return;
    }
    // Tracing.ACTIVE adds xray:PutTraceSegments/PutTelemetryRecords, which have no resource-level permissions.
    const policy = this.role.node.tryFindChild('DefaultPolicy');
    if (policy) {
      Validations.of(policy).acknowledge({
        id: 'AwsSolutions-IAM5[Resource::*]',
        reason:
          'Only the X-Ray actions (PutTraceSegments, PutTelemetryRecords) use Resource "*": X-Ray has no ' +
          'resource-level permissions. Every other statement names its resource.',
      });
    }
  }

  /** Adds an SQS event source (whose failed messages end in the queue's own alarmed dead-letter queue). */
  addSqsEventSource(source: SqsEventSource): void {
    this.function.addEventSource(source);
    Validations.of(this.function).acknowledge({
      id: 'Serverless-LambdaEventSourceMappingDestination',
      reason:
        "An SQS event source keeps a failed message on the queue until maxReceiveCount, then the queue's redrive " +
        'policy moves it to its dead-letter queue, which has an alarm; an on-failure destination is for stream sources.',
    });
  }
}
