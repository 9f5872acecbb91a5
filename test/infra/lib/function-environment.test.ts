// Lambda's 4 KB limit on a function's environment, checked at synth: a function whose variables do
// not fit stops synthesis naming the largest ones, instead of synthesizing a template whose deploy
// fails. Webhook mappings and schedules are not variables (they live in the stack's config item).
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CfnElement } from 'aws-cdk-lib';
import { describe, expect, it } from 'vitest';
import { environmentBytes, LAMBDA_ENVIRONMENT_MAX_BYTES } from '../../../infra/lib/pipeline-function';
import { synthStage } from '../support/synth-stage';

/** An opflow.config.json with `count` webhook mappings of a realistic size (about 260 bytes each). */
function configWithWebhooks(count: number): string {
  const webhooks = Object.fromEntries(
    Array.from({ length: count }, (_, i) => [
      `tracker-${String(i).padStart(2, '0')}`,
      {
        workflow: 'novelty-check',
        tenant: 'default',
        input: {
          text: { $from: '/issue/fields/description' },
          lang: 'en',
          title: { $from: '/issue/fields/summary' },
        },
        label: { $from: '/issue/key' },
      },
    ]),
  );
  const dir = mkdtempSync(join(tmpdir(), 'opflow-env-'));
  const file = join(dir, 'opflow.config.json');
  writeFileSync(file, JSON.stringify({ webhooks }));
  return file;
}

describe('the functions environment', { timeout: 180_000 }, () => {
  it('refuses at synth a function whose variables are over 4 KB, naming the largest and its source', () => {
    // 50 operator groups of 90 characters: OPFLOW_API_AUTH alone is over 4 KB.
    const groups = Array.from({ length: 50 }, (_, i) => `${String(i).padStart(2, '0')}-${'g'.repeat(87)}`);
    expect(() =>
      synthStage(
        {
          stage: 'dev',
          jwtIssuer: 'https://issuer.example.com/',
          jwtAudience: 'a',
          jwtOperatorGroups: groups.join(','),
        },
        { bundle: false },
      ),
    ).toThrow(
      /the opflow-dev-api function's environment takes \d+ bytes, over Lambda's 4096 for all variables together; largest: OPFLOW_API_AUTH \d+ bytes \(api.auth.operators of the stage config\)/,
    );
  });

  it('synthesizes a few mappings, every function within 4 KB counted as Lambda would', () => {
    const { stack, template } = synthStage(
      { stage: 'dev', opflowConfig: configWithWebhooks(3) },
      { bundle: false },
    );
    const functions = template.findResources('AWS::Lambda::Function');
    const api = functions[stack.getLogicalId(stack.api.function.node.defaultChild as CfnElement)];
    const variables = api?.['Properties']['Environment']['Variables'] as Record<string, unknown>;
    expect(variables['OPFLOW_WEBHOOK_MAPPINGS']).toBeUndefined();
    expect(variables['OPFLOW_AUTOMATION_CONFIG']).toMatch(/^automation#/);
    for (const [id, fn] of Object.entries(functions)) {
      const size = environmentBytes(fn['Properties']['Environment']?.['Variables'] ?? {});
      expect(size.total, id).toBeLessThanOrEqual(LAMBDA_ENVIRONMENT_MAX_BYTES);
    }
  });

  it("gives the stage's fair shares to the step worker and the api, the functions that take tokens", () => {
    const settings = { stages: { qa: { tenants: ['default', 'acme'], openPlatform: { shares: 'acme=3' } } } };
    const { stack, template } = synthStage(
      { stage: 'qa', opflowStack: JSON.stringify(settings) },
      { bundle: false },
    );
    const functions = template.findResources('AWS::Lambda::Function');
    const takers = [stack.worker, stack.api].map((fn) =>
      stack.getLogicalId(fn.function.node.defaultChild as CfnElement),
    );
    for (const [id, fn] of Object.entries(functions)) {
      const variables = (fn['Properties']['Environment']?.['Variables'] ?? {}) as Record<string, unknown>;
      expect(variables['OPFLOW_SHARES'], id).toBe(takers.includes(id) ? 'acme=3' : undefined);
    }
  });

  it('counts names and values in UTF-8, and a CloudFormation value at its longest', () => {
    expect(environmentBytes({ A: 'bé' })).toEqual({ total: 4, variables: [{ name: 'A', bytes: 4 }] });
    expect(environmentBytes({ QUEUE: { Ref: 'WorkQueue' }, B: 'x' })).toEqual({
      total: 5 + 150 + 2,
      variables: [
        { name: 'QUEUE', bytes: 155 },
        { name: 'B', bytes: 2 },
      ],
    });
  });
});
