// The reviewers in the CDK app, from a config file with a reviewers rule: the generated link key, the
// sweeper's pass (settings and least-privilege grants), the api's pass after a first approval (a
// two-approver rule), the confirmation page's public routes on the
// webhooks function with the webhook route's throttle, and the reviewers in the config item. Without a
// rule, none of it. cdk-nag runs during synth (a finding fails it).
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CfnElement } from 'aws-cdk-lib';
import { beforeAll, describe, expect, it } from 'vitest';
import { automationConfigPut, functionVariables } from '../support/automation-config-item';
import { type SynthesizedStage, synthStage } from '../support/synth-stage';

type Statement = { Action: string | string[]; Resource: unknown; Condition?: unknown };

const reviewers = {
  channels: { legal: { type: 'email', to: ['alice@example.com'] }, chat: { type: 'slack' } },
  rules: [
    { name: 'pair', match: { tenant: 'legal' }, notify: ['legal'], approvers: 2 },
    { name: 'all', notify: ['legal', 'chat'], timeout: { after: '4h', answer: 'preselected' } },
  ],
};

function configFile(body: object): string {
  const file = join(mkdtempSync(join(tmpdir(), 'opflow-cdk-reviewers-')), 'opflow.config.json');
  writeFileSync(file, JSON.stringify(body));
  return file;
}

let synth: SynthesizedStage;
beforeAll(() => {
  synth = synthStage({ stage: 'dev', opflowConfig: configFile({ reviewers }) }, { bundle: false });
}, 180_000);

/** The statements of the policy attached to `role`. */
function statementsOf(roleLogicalId: string): Statement[] {
  return Object.values(synth.template.findResources('AWS::IAM::Policy'))
    .filter((policy) => JSON.stringify(policy['Properties']['Roles']).includes(roleLogicalId))
    .flatMap((policy) => policy['Properties']['PolicyDocument']['Statement'] as Statement[]);
}

const roleOf = (fn: { role: { node: { defaultChild?: unknown } } }) =>
  synth.stack.getLogicalId(fn.role.node.defaultChild as CfnElement);

describe('reviewers on aws', { timeout: 180_000 }, () => {
  it('generates the link key and tells the sweeper and the webhooks function where the secrets are', () => {
    synth.template.hasResourceProperties('AWS::SecretsManager::Secret', {
      Name: 'opflow-dev/review/link-key',
      GenerateSecretString: { PasswordLength: 64, ExcludePunctuation: true },
    });
    const sweeper = functionVariables(synth.template, 'opflow-dev-sweeper');
    expect(sweeper['OPFLOW_REVIEW_SECRET_PREFIX']).toBe('opflow-dev/review/');
    expect(JSON.stringify(sweeper['OPFLOW_PUBLIC_URL'])).toContain('execute-api');
    expect(sweeper['OPFLOW_AUTOMATION_CONFIG']).toMatch(/^automation#/);
    expect(functionVariables(synth.template, 'opflow-dev-webhooks')['OPFLOW_REVIEW_SECRET_PREFIX']).toBe(
      'opflow-dev/review/',
    );
    // No secret value and no channel URL in any function's environment.
    for (const name of ['opflow-dev-sweeper', 'opflow-dev-webhooks', 'opflow-dev-api'])
      expect(JSON.stringify(functionVariables(synth.template, name))).not.toMatch(/smtp:|hooks\.slack/);
  });

  it('keeps the reviewers in the config item the functions read', () => {
    const body = JSON.parse(automationConfigPut(synth.template).Item.body.S) as { reviewers?: unknown };
    expect(body.reviewers).toMatchObject({
      rules: [
        { name: 'pair', approvers: 2 },
        { name: 'all', notify: ['legal', 'chat'] },
      ],
    });
  });

  it('lets the sweeper read only the reviewers secrets, the config item, and jobs and their history', () => {
    const statements = statementsOf(roleOf(synth.stack.sweeper));
    const secrets = statements.filter((s) => JSON.stringify(s.Action).includes('secretsmanager'));
    expect(secrets).toHaveLength(1);
    expect(secrets[0]!.Action).toBe('secretsmanager:GetSecretValue');
    expect(JSON.stringify(secrets[0]!.Resource)).toContain(':secret:opflow-dev/review/*');
    const keyed = statements.filter((s) => JSON.stringify(s.Condition ?? {}).includes('LeadingKeys'));
    expect(keyed.map((s) => s.Condition)).toEqual(
      expect.arrayContaining([
        { 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': ['CONFIG'] } },
        { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['JOB#*', 'HIST#*'] } },
      ]),
    );
    const actions = statements.flatMap((s) => (Array.isArray(s.Action) ? s.Action : [s.Action]));
    expect(actions).not.toContain('dynamodb:Scan');
    expect(actions).not.toContain('dynamodb:DeleteItem');
    expect(actions.filter((a) => a.startsWith('s3:'))).toEqual([]);
  });

  it('gives the api function, with a two-approver rule, the secrets and the links URL for its pass after a first approval', () => {
    const api = functionVariables(synth.template, 'opflow-dev-api');
    expect(api['OPFLOW_REVIEW_SECRET_PREFIX']).toBe('opflow-dev/review/');
    expect(JSON.stringify(api['OPFLOW_PUBLIC_URL'])).toContain('execute-api');
    const secrets = statementsOf(roleOf(synth.stack.api)).filter((s) =>
      JSON.stringify(s.Action).includes('secretsmanager'),
    );
    expect(secrets.map((s) => s.Action)).toEqual(['secretsmanager:GetSecretValue']);
    expect(JSON.stringify(secrets[0]!.Resource)).toContain(':secret:opflow-dev/review/*');
  });

  it('routes GET and POST /review/{token} to the webhooks function without IAM, throttled as the webhook route', () => {
    const routes = Object.values(synth.template.findResources('AWS::ApiGatewayV2::Route')).filter((r) =>
      String(r['Properties']['RouteKey']).endsWith(' /review/{token}'),
    );
    expect(routes.map((r) => r['Properties']['RouteKey']).sort()).toEqual([
      'GET /review/{token}',
      'POST /review/{token}',
    ]);
    for (const route of routes) expect(route['Properties']['AuthorizationType']).toBe('NONE');
    const webhooks = synth.stack.getLogicalId(
      synth.stack.automation.webhookReceiver.function.node.defaultChild as CfnElement,
    );
    const integrations = Object.values(synth.template.findResources('AWS::ApiGatewayV2::Integration'));
    // Both routes share one integration, to the webhooks function (its other one is the webhook route's).
    const targets = new Set(routes.map((route) => JSON.stringify(route['Properties']['Target'])));
    expect(targets.size).toBe(1);
    expect(
      integrations.filter((i) => JSON.stringify(i['Properties']['IntegrationUri']).includes(webhooks)),
    ).toHaveLength(2);
    synth.template.hasResourceProperties('AWS::ApiGatewayV2::Stage', {
      RouteSettings: {
        'POST /webhooks/{source}': { ThrottlingRateLimit: 10, ThrottlingBurstLimit: 20 },
        'GET /review/{token}': { ThrottlingRateLimit: 10, ThrottlingBurstLimit: 20 },
        'POST /review/{token}': { ThrottlingRateLimit: 10, ThrottlingBurstLimit: 20 },
      },
    });
  });

  it('adds none of it without a reviewers rule', () => {
    const bare = synthStage({ stage: 'dev', opflowConfig: configFile({}) }, { bundle: false });
    expect(bare.stack.reviewers).toBeUndefined();
    for (const name of ['opflow-dev-sweeper', 'opflow-dev-api'])
      expect(functionVariables(bare.template, name)['OPFLOW_REVIEW_SECRET_PREFIX']).toBeUndefined();
    const keys = Object.values(bare.template.findResources('AWS::ApiGatewayV2::Route')).map(
      (r) => r['Properties']['RouteKey'],
    );
    expect(keys.filter((k) => String(k).includes('/review/'))).toEqual([]);
    expect(JSON.parse(automationConfigPut(bare.template).Item.body.S)).not.toHaveProperty('reviewers');
  });
});
