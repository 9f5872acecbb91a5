// The AWS HTTP API for the dashboard: the routes of its pages (timeline, batches,
// schedules with pause and resume, webhook deliveries) on the api function; a static dashboard's
// origin allowed by CORS only with the JWT authorizer; the api function may read and write batch
// outputs and nothing more of the bucket than before; the schedules reach it through the stack's config item.
// cdk-nag runs during synth (a finding fails it).
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CfnElement } from 'aws-cdk-lib';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadStageConfig } from '../../../infra/config';
import { DASHBOARD_CORS_HEADERS, JOB_ROUTES } from '../../../infra/lib/job-api';
import { automationConfigBody, functionVariables } from '../support/automation-config-item';
import { type SynthesizedStage, synthStage } from '../support/synth-stage';

type Statement = { Effect: string; Action: string | string[]; Resource: unknown; Condition?: unknown };

let synth: SynthesizedStage;
let plain: SynthesizedStage;
beforeAll(() => {
  const dir = mkdtempSync(join(tmpdir(), 'opflow-cdk-dashboard-'));
  const file = join(dir, 'opflow.config.json');
  writeFileSync(
    file,
    JSON.stringify({
      schedules: [{ name: 'weekly', cron: '0 6 * * 1', workflow: 'patent-count', input: { query: 'x' } }],
    }),
  );
  synth = synthStage(
    {
      stage: 'dev',
      opflowConfig: file,
      jwtIssuer: 'https://issuer.example.com/',
      jwtAudience: 'opflow-dashboard',
      dashboardOrigins: 'https://opflow.example.com, http://localhost:5173',
    },
    { bundle: false },
  );
  plain = synthStage({ stage: 'dev' }, { bundle: false });
});

const routeKeys = (stage: SynthesizedStage) =>
  Object.values(stage.template.findResources('AWS::ApiGatewayV2::Route')).map(
    (route) => route.Properties.RouteKey as string,
  );

describe('the HTTP API for the dashboard', () => {
  it('routes every page of the dashboard to the api function, behind the authorizer', () => {
    const keys = routeKeys(synth);
    for (const key of [
      'GET /jobs/{id}/timeline',
      'GET /batches',
      'GET /batches/{id}',
      'POST /batches/{id}/redrive',
      'POST /batches/{id}/cancel',
      'GET /batches/{id}/outputs/{file}',
      'GET /schedules',
      'POST /schedules/{name}/trigger',
      'POST /schedules/{name}/pause',
      'POST /schedules/{name}/resume',
      'GET /webhook-deliveries',
      'GET /webhook-sources',
    ]) {
      expect(keys).toContain(key);
      synth.template.hasResourceProperties('AWS::ApiGatewayV2::Route', {
        RouteKey: key,
        AuthorizationType: 'JWT',
      });
    }
    expect(keys.length).toBe(JOB_ROUTES.length + 1); // + POST /webhooks/{source}
  });

  it('allows the dashboard origins by CORS, with the headers the page sends, and no credentials', () => {
    synth.template.hasResourceProperties('AWS::ApiGatewayV2::Api', {
      CorsConfiguration: {
        AllowOrigins: ['https://opflow.example.com', 'http://localhost:5173'],
        AllowMethods: ['GET', 'POST', 'OPTIONS'],
        AllowHeaders: [...DASHBOARD_CORS_HEADERS],
        AllowCredentials: false,
        MaxAge: 3600,
      },
    });
    // No OPTIONS route: API Gateway answers the preflight itself, before any authorizer.
    expect(routeKeys(synth).filter((key) => key.startsWith('OPTIONS'))).toEqual([]);
    const api = Object.values(plain.template.findResources('AWS::ApiGatewayV2::Api'))[0]!;
    expect(api.Properties.CorsConfiguration).toBeUndefined();
  });

  it('refuses dashboard origins without the JWT authorizer, and origins that are not origins', () => {
    expect(() => loadStageConfig('dev', { dashboardOrigins: 'https://opflow.example.com' })).toThrow(
      /api\.dashboardOrigins.*JWT/s,
    );
    expect(() =>
      loadStageConfig('dev', {
        dashboardOrigins: 'https://opflow.example.com/',
        jwtIssuer: 'https://issuer.example.com/',
        jwtAudience: 'a',
      }),
    ).toThrow(/must be an origin/);
  });

  it('lets the api function read and write batch outputs only, and hands it the schedules', () => {
    const role = synth.stack.getLogicalId(synth.stack.api.role.node.defaultChild as CfnElement);
    const statements = Object.values(synth.template.findResources('AWS::IAM::Policy'))
      .filter((policy) => JSON.stringify(policy.Properties.Roles) === JSON.stringify([{ Ref: role }]))
      .flatMap((policy) => policy.Properties.PolicyDocument.Statement as Statement[]);
    const batchOutputs = statements.filter((s) => JSON.stringify(s.Resource).includes('/batches/*'));
    expect(batchOutputs.flatMap((s) => s.Action).sort()).toEqual(['s3:GetObject', 's3:PutObject']);
    const listing = statements.find((s) => s.Action === 's3:ListBucket')!;
    expect(listing.Condition).toEqual({ StringLike: { 's3:prefix': ['batches/*'] } });
    expect(functionVariables(synth.template, 'opflow-dev-api')['OPFLOW_AUTOMATION_CONFIG']).toMatch(
      /^automation#[0-9a-f]{16}$/,
    );
    expect(automationConfigBody(synth.template).schedules.map((s) => s.name)).toEqual(['weekly']);
  });

  it("lets the api presign the dashboard's PUTs and look the documents up under inbox/ only, and the dashboard origins PUT to the bucket", () => {
    const role = synth.stack.getLogicalId(synth.stack.api.role.node.defaultChild as CfnElement);
    const statements = Object.values(synth.template.findResources('AWS::IAM::Policy'))
      .filter((policy) => JSON.stringify(policy.Properties.Roles) === JSON.stringify([{ Ref: role }]))
      .flatMap((policy) => policy.Properties.PolicyDocument.Statement as Statement[]);
    const inbox = statements.filter((s) => JSON.stringify(s.Resource).includes('/inbox/*'));
    // PutObject: the presigned PUTs (and the manifest a documents commit writes); GetObject: the
    // commit's lookup of each document; listing only under inbox/ (a missing document is a 404).
    expect(inbox.flatMap((s) => s.Action).sort()).toEqual(['s3:GetObject', 's3:PutObject']);
    const inboxListing = statements.filter(
      (s) => s.Action === 's3:ListBucket' && JSON.stringify(s.Condition).includes('inbox/'),
    );
    expect(inboxListing.map((s) => s.Condition)).toEqual([{ StringLike: { 's3:prefix': ['inbox/*'] } }]);
    const bucket = synth.stack.getLogicalId(synth.stack.storage.reportBucket.node.defaultChild as CfnElement);
    const cors = synth.template.toJSON().Resources[bucket].Properties.CorsConfiguration;
    expect(cors).toEqual({
      CorsRules: [
        expect.objectContaining({
          AllowedMethods: ['PUT'],
          AllowedOrigins: ['https://opflow.example.com', 'http://localhost:5173'],
          AllowedHeaders: expect.arrayContaining(['x-amz-checksum-sha256', 'x-amz-meta-*']),
        }),
      ],
    });
    // Without dashboard origins, no browser reaches the bucket.
    const plainBucket = plain.stack.getLogicalId(
      plain.stack.storage.reportBucket.node.defaultChild as CfnElement,
    );
    expect(plain.template.toJSON().Resources[plainBucket].Properties.CorsConfiguration).toBeUndefined();
  });
});
