/**
 * Builds the opflow CDK app for infra tests the way `npx cdk synth` does: the feature flags and
 * settings of cdk.json in the context, the stage and overrides from `context`, bundling with esbuild.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { PROJECT_ROOT } from '../../../infra/lib/function-bundling';
import { buildOpflowApp } from '../../../infra/lib/opflow-app';
import type { OpflowStack } from '../../../infra/lib/opflow-stack';

/** The `context` of cdk.json (feature flags), so tests synthesize with the CLI's flags. */
export function cdkJsonContext(): Record<string, unknown> {
  const cdkJson = JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'cdk.json'), 'utf8')) as {
    context?: Record<string, unknown>;
  };
  return cdkJson.context ?? {};
}

/** A synthesized stage: its app, stack and template. */
export interface SynthesizedStage {
  app: App;
  stack: OpflowStack;
  template: Template;
}

/**
 * Builds and synthesizes the app for `context` (e.g. `{ stage: 'prod' }`); cdk-nag runs during synth.
 * With `bundle: false` the functions are not bundled (their code is a placeholder asset), for tests
 * that read only the template: much faster.
 */
export function synthStage(
  context: Record<string, string>,
  options: { bundle?: boolean } = {},
): SynthesizedStage {
  const skipBundling = options.bundle === false ? { 'aws:cdk:bundling-stacks': [] } : {};
  const app = new App({ context: { ...cdkJsonContext(), ...context, ...skipBundling } });
  const stack = buildOpflowApp(app);
  const template = Template.fromStack(stack);
  return { app, stack, template };
}

/**
 * Writes an opflow.config.json with one weekly schedule to a temporary folder and returns its path
 * (for `opflowConfig`), so a template holds the EventBridge Scheduler resources and their queue too.
 */
export function opflowConfigWithOneSchedule(): string {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'opflow-one-schedule-')), 'opflow.config.json');
  const schedule = {
    name: 'weekly',
    cron: '0 6 * * 1',
    workflow: 'patent-count',
    input: { query: 'battery' },
  };
  writeFileSync(file, JSON.stringify({ schedules: [schedule] }));
  return file;
}
