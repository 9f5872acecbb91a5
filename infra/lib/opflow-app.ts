/**
 * Builds the opflow CDK app: picks the stage from context (`-c stage=prod`, default dev), validates
 * its config, adds the stack and runs cdk-nag's AwsSolutions rules on it at synth.
 */
import { type App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { loadStageConfig, type StageConfig } from '../config';
import { assertLocalEsbuild } from './function-bundling';
import { OpflowStack } from './opflow-stack';

/** Reads a string context value (`-c key=value`), treating an empty string as absent. */
function contextString(app: App, key: string): string | undefined {
  const value: unknown = app.node.tryGetContext(key);
  if (value === undefined || value === null || value === '') return undefined;
  return String(value);
}

/** The stage config the app's context asks for; throws `InvalidStageConfigError` naming the bad field. */
export function stageConfigFromContext(app: App): StageConfig {
  return loadStageConfig(contextString(app, 'stage') ?? 'dev', {
    alarmEmail: contextString(app, 'alarmEmail'),
    alarmTopicArn: contextString(app, 'alarmTopicArn'),
    jwtIssuer: contextString(app, 'jwtIssuer'),
    jwtAudience: contextString(app, 'jwtAudience'),
  });
}

/**
 * Adds the opflow stack for the context's stage to `app` and registers cdk-nag (AwsSolutions).
 * The account and region come from the CLI's environment (`CDK_DEFAULT_ACCOUNT`/`CDK_DEFAULT_REGION`),
 * left unresolved when absent so synthesis needs no credentials.
 */
export function buildOpflowApp(app: App, config: StageConfig = stageConfigFromContext(app)): OpflowStack {
  assertLocalEsbuild();
  const account = process.env['CDK_DEFAULT_ACCOUNT'];
  const region = process.env['CDK_DEFAULT_REGION'];
  const stack = new OpflowStack(app, config.names.stackName, {
    config,
    description: `opflow (${config.stage}): durable Open Platform job pipeline`,
    ...(account && region ? { env: { account, region } } : {}),
  });
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  return stack;
}
