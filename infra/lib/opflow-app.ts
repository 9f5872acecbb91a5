/**
 * Builds the opflow CDK app: reads the stack settings (opflow.stack.json, `-c config=<file>`, or the
 * `opflowStack` context), picks the stage from context (`-c stage=<name>`, default dev), validates
 * its config, adds the stack and runs cdk-nag's AwsSolutions and Serverless rules on it at synth.
 */

import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { type App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks, ServerlessChecks } from 'cdk-nag';
import { type OpflowConfig, parseOpflowConfig } from '../../shared/config/opflow-config';
import { workflows } from '../../shared/workflows';
import {
  InvalidStackSettingsError,
  loadStageConfig,
  parseStackSettings,
  type StackSettings,
  type StageConfig,
} from '../config';
import { assertLocalEsbuild, PROJECT_ROOT } from './function-bundling';
import { OpflowStack } from './opflow-stack';

/** Reads a string context value (`-c key=value`), treating an empty string as absent. */
function contextString(app: App, key: string): string | undefined {
  const value: unknown = app.node.tryGetContext(key);
  if (value === undefined || value === null || value === '') return undefined;
  return String(value);
}

/** The settings file's name when none is given: at the project root, optional. */
export const STACK_SETTINGS_FILE = 'opflow.stack.json';

/**
 * The stack settings the app's context points to: the `opflowStack` context (an object, or JSON
 * text), else the file `-c config=<file>` names, else opflow.stack.json at the project root when
 * there is one; undefined when there is none (only the built-in dev and prod). Throws
 * `InvalidStackSettingsError` naming the source and the field.
 */
export function stackSettingsFromContext(app: App): StackSettings | undefined {
  const inContext: unknown = app.node.tryGetContext('opflowStack');
  const named = contextString(app, 'config');
  if (inContext !== undefined && inContext !== null && inContext !== '') {
    const source = 'context "opflowStack"';
    if (named) {
      throw new InvalidStackSettingsError(source, [
        {
          path: '',
          message: `give the settings either in this context or in a file (-c config=${named}), not both`,
        },
      ]);
    }
    return parseStackSettings(
      typeof inContext === 'string' ? parseJson(inContext, source) : inContext,
      source,
    );
  }
  const file = named ? path.resolve(named) : path.join(PROJECT_ROOT, STACK_SETTINGS_FILE);
  if (!named && !existsSync(file)) return undefined;
  const source = named ?? STACK_SETTINGS_FILE;
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new InvalidStackSettingsError(source, [
      { path: '', message: `cannot read: ${(error as Error).message}` },
    ]);
  }
  return parseStackSettings(parseJson(text, source), source);
}

function parseJson(text: string, source: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new InvalidStackSettingsError(source, [
      { path: '', message: `not valid JSON: ${(error as Error).message}` },
    ]);
  }
}

/** The stage config the app's context asks for; throws `InvalidStageConfigError` naming the bad field. */
export function stageConfigFromContext(app: App): StageConfig {
  const settings = stackSettingsFromContext(app);
  return loadStageConfig(
    contextString(app, 'stage') ?? 'dev',
    {
      alarmEmail: contextString(app, 'alarmEmail'),
      alarmTopicArn: contextString(app, 'alarmTopicArn'),
      jwtIssuer: contextString(app, 'jwtIssuer'),
      jwtAudience: contextString(app, 'jwtAudience'),
      jwtOperatorGroups: contextString(app, 'jwtOperatorGroups'),
      jwtOperatorClaim: contextString(app, 'jwtOperatorClaim'),
      dashboardOrigins: contextString(app, 'dashboardOrigins'),
    },
    settings,
  );
}

/**
 * Adds the opflow stack for the context's stage to `app` and registers cdk-nag (AwsSolutions).
 * The account and region come from the CLI's environment (`CDK_DEFAULT_ACCOUNT`/`CDK_DEFAULT_REGION`),
 * left unresolved when absent so synthesis needs no credentials.
 */
/**
 * The webhook mappings and schedules: the file `-c opflowConfig=<file>` names, else
 * opflow.config.json at the project root when there is one (README, "Schedules").
 */
export function automationFromContext(app: App): { config: OpflowConfig; file: string } | undefined {
  const named = contextString(app, 'opflowConfig');
  const file = named ? path.resolve(named) : path.join(PROJECT_ROOT, 'opflow.config.json');
  if (!named && !existsSync(file)) return undefined;
  const shown = named ?? 'opflow.config.json';
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new Error(`${shown}: ${(error as Error).message}`);
  }
  return { config: parseOpflowConfig(value, shown, workflows), file: shown };
}

export function buildOpflowApp(app: App, config: StageConfig = stageConfigFromContext(app)): OpflowStack {
  assertLocalEsbuild();
  const automation = automationFromContext(app);
  const account = process.env['CDK_DEFAULT_ACCOUNT'];
  const region = process.env['CDK_DEFAULT_REGION'];
  const stack = new OpflowStack(app, config.names.stackName, {
    config,
    automation: automation?.config,
    automationFile: automation?.file,
    description: `opflow (${config.stage}): durable Open Platform job pipeline`,
    ...(account && region ? { env: { account, region } } : {}),
  });
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app), new ServerlessChecks(app));
  return stack;
}
