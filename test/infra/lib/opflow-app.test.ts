/**
 * The app as `npx cdk synth` builds it: cdk-nag's AwsSolutions rules pass with every acknowledgement
 * needed and explained, context overrides (JWT auth, alarm email, existing topic) reach the template,
 * bundles are local-esbuild ES modules with source maps, and a bad config stops synthesis naming the field.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { App, type CfnElement, Stack, Validations } from 'aws-cdk-lib';
import { Annotations, Match } from 'aws-cdk-lib/assertions';
import { Queue } from 'aws-cdk-lib/aws-sqs';
import { AwsSolutionsChecks, ServerlessChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import { beforeAll, describe, expect, it } from 'vitest';
import { InvalidStageConfigError } from '../../../infra/config';
import {
  ESM_REQUIRE_BANNER,
  functionBuildOptions,
  LocalEsbuildOnly,
  PROJECT_ROOT,
} from '../../../infra/lib/function-bundling';
import { JOB_ROUTES } from '../../../infra/lib/job-api';
import { buildOpflowApp } from '../../../infra/lib/opflow-app';
import { measureBundle } from '../../../scripts/bundle-sizes';
import { REAL_PROCESS_TIMEOUT_MS } from '../../support/timeouts';
import { cdkJsonContext, type SynthesizedStage, synthStage } from '../support/synth-stage';

const ALARM_TOPIC_ARN = 'arn:aws:sns:eu-west-1:123456789012:ops-alarms';

let devJwt: SynthesizedStage;
let prodTopic: SynthesizedStage;

beforeAll(() => {
  devJwt = synthStage({
    stage: 'dev',
    jwtIssuer: 'https://auth.example.com/',
    jwtAudience: 'opflow-api,opflow-cli',
    jwtOperatorGroups: 'opflow-operators',
    alarmEmail: 'ops@example.com',
  });
  // Bundled once (the function bundles below read devJwt's assets): a function's code does not
  // depend on the stage (functionCode takes its name alone), so prod's checks read its template.
  prodTopic = synthStage({ stage: 'prod', alarmTopicArn: ALARM_TOPIC_ARN }, { bundle: false });
  // Bundling the functions on a loaded machine: more than the default hook timeout.
}, 360_000);

/** The cdk-nag packs the app runs. */
const packs = () => [new AwsSolutionsChecks(), new ServerlessChecks()];

/** cdk-nag's AwsSolutions and Serverless packs with acknowledgements ignored: every finding, acknowledged or not. */
function allFindings(scope: IConstruct) {
  return packs().flatMap((pack) => {
    Object.defineProperty(pack, 'isAcknowledged', { value: () => false });
    return pack.validateScope(scope).violations;
  });
}

/** Every acknowledgement recorded with `Validations.of(x).acknowledge`: construct path, rule id, reason. */
function acknowledgements(scope: IConstruct) {
  return scope.node.findAll().flatMap((construct) =>
    construct.node.metadata
      .filter((entry) => entry.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY)
      .flatMap((entry) =>
        Object.entries(entry.data as Record<string, string>).map(([id, reason]) => ({
          path: construct.node.path,
          id: id.replace(/^annotation::/i, ''),
          reason,
        })),
      ),
  );
}

describe.each([
  ['dev with JWT auth', () => devJwt],
  ['prod with an existing alarm topic', () => prodTopic],
])('cdk-nag on %s', (_name, stageOf) => {
  it('reports no unacknowledged AwsSolutions or Serverless error or warning', () => {
    for (const pack of packs()) {
      const report = pack.validateScope(stageOf().stack);
      expect(
        report.violations.map(
          (v) => `${v.severity} ${v.ruleName}: ${v.violatingResources[0]?.constructPath}`,
        ),
      ).toEqual([]);
      expect(report.success).toBe(true);
    }
  });

  it('leaves no error or warning annotation on the stack', () => {
    const annotations = Annotations.fromStack(stageOf().stack);
    expect(annotations.findError('*', Match.anyValue())).toEqual([]);
    expect(annotations.findWarning('*', Match.anyValue())).toEqual([]);
  });

  it('acknowledges only real findings, each on the construct it is about, with a reason', () => {
    const { stack } = stageOf();
    const findings = allFindings(stack).flatMap((v) =>
      v.violatingResources.map((r) => ({ id: v.ruleName, path: r.constructPath ?? '' })),
    );
    const acks = acknowledgements(stack);
    expect(acks.length).toBeGreaterThan(0);
    for (const ack of acks) {
      expect(ack.id).toMatch(/^(AwsSolutions-[A-Z]+\d+|Serverless-[A-Za-z]+)(\[.+\])?$/);
      expect(ack.reason.length, `reason of ${ack.id} on ${ack.path}`).toBeGreaterThan(60);
      const onThisConstruct = findings.filter((f) => f.id === ack.id && f.path.startsWith(`${ack.path}/`));
      expect(
        onThisConstruct,
        `${ack.id} on ${ack.path} acknowledges a finding that is not there`,
      ).not.toEqual([]);
    }
    // Every finding is covered by an acknowledgement on its construct or an ancestor.
    for (const finding of findings) {
      expect(
        acks.some((a) => a.id === finding.id && finding.path.startsWith(`${a.path}/`)),
        `${finding.id} on ${finding.path}`,
      ).toBe(true);
    }
  });
});

describe('cdk-nag registration', () => {
  it('fails synthesis of the app on an unacknowledged finding', () => {
    // No bundling: this app only needs to reach validation.
    const app = new App({ context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [] } });
    const stack = buildOpflowApp(app);
    new Queue(Stack.of(stack), 'QueueWithoutDeadLetters', { enforceSSL: true });
    const failure = (() => {
      try {
        app.synth();
      } catch (error) {
        return String(error);
      }
      return 'synthesized';
    })();
    expect(failure).toContain('opflow-dev/QueueWithoutDeadLetters');
    expect(failure).toContain('AwsSolutions-SQS3');
  });
});

describe('context overrides', () => {
  it('puts every job route behind a JWT authorizer with the issuer and audiences given', () => {
    const { template, stack } = devJwt;
    const authorizers = template.findResources('AWS::ApiGatewayV2::Authorizer');
    expect(Object.values(authorizers).map((a) => a['Properties'])).toEqual([
      expect.objectContaining({
        AuthorizerType: 'JWT',
        IdentitySource: ['$request.header.Authorization'],
        JwtConfiguration: { Issuer: 'https://auth.example.com/', Audience: ['opflow-api', 'opflow-cli'] },
      }),
    ]);
    const [authorizerId] = Object.keys(authorizers);
    const routes = Object.values(template.findResources('AWS::ApiGatewayV2::Route')).filter((route) =>
      JOB_ROUTES.some((r) => route['Properties']['RouteKey'] === `${r.method} ${r.path}`),
    );
    expect(routes).toHaveLength(JOB_ROUTES.length);
    for (const route of routes) {
      expect(route['Properties']).toMatchObject({
        AuthorizationType: 'JWT',
        AuthorizerId: { Ref: authorizerId },
      });
    }
    expect(stack.config.api.auth.mode).toBe('jwt');
  });

  it('tells the api function, and only it, who is an operator among JWT callers', () => {
    const environmentOf = (stage: SynthesizedStage, fn: 'api' | 'worker') =>
      stage.template.findResources('AWS::Lambda::Function')[
        stage.stack.getLogicalId(stage.stack[fn].function.node.defaultChild as CfnElement)
      ]?.['Properties']['Environment']['Variables'] as Record<string, string>;
    expect(JSON.parse(environmentOf(devJwt, 'api')['OPFLOW_API_AUTH']!)).toEqual({
      mode: 'jwt',
      operators: { claim: 'cognito:groups', groups: ['opflow-operators'] },
    });
    expect(environmentOf(devJwt, 'worker')['OPFLOW_API_AUTH']).toBeUndefined();
    expect(JSON.parse(environmentOf(prodTopic, 'api')['OPFLOW_API_AUTH']!)).toEqual({ mode: 'iam' });
  });

  it('subscribes the alarm email to a new SSL-only alarm topic', () => {
    const { template, stack } = devJwt;
    const topicId = stack.getLogicalId(stack.monitoring.topic.node.defaultChild as CfnElement);
    template.hasResourceProperties('AWS::SNS::Subscription', {
      Protocol: 'email',
      Endpoint: 'ops@example.com',
      TopicArn: { Ref: topicId },
    });
    template.hasResourceProperties('AWS::SNS::TopicPolicy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
        ]),
      },
    });
  });

  it('sends alarms to an existing topic without creating one', () => {
    const { template } = prodTopic;
    template.resourceCountIs('AWS::SNS::Topic', 0);
    for (const alarm of Object.values(template.findResources('AWS::CloudWatch::Alarm'))) {
      expect(alarm['Properties']['AlarmActions']).toEqual([ALARM_TOPIC_ARN]);
    }
  });
});

describe('function bundles', () => {
  it('are ES modules with the require banner and a source map, built by the local esbuild', () => {
    const { app, stack, template } = devJwt;
    const assembly = app.synth();
    const resources = template.toJSON()['Resources'] as Record<
      string,
      { Properties: { Code: { S3Key: unknown } } }
    >;
    for (const fn of [stack.worker, stack.api, stack.sweeper]) {
      const s3Key =
        resources[stack.getLogicalId(fn.function.node.defaultChild as CfnElement)]?.Properties.Code.S3Key;
      expect(s3Key).toMatch(/^[0-9a-f]{64}\.zip$/);
      const assetDir = path.join(assembly.directory, `asset.${String(s3Key).replace(/\.zip$/, '')}`);
      const code = readFileSync(path.join(assetDir, 'index.mjs'), 'utf8');
      expect(code.startsWith(ESM_REQUIRE_BANNER)).toBe(true);
      expect(code).toContain('//# sourceMappingURL=index.mjs.map');
      expect(existsSync(path.join(assetDir, 'index.mjs.map'))).toBe(true);
    }
  });

  it('are the bundles scripts/bundle-sizes.ts measures, byte for byte in size', async () => {
    const { app, stack, template } = devJwt;
    const assembly = app.synth();
    const resources = template.toJSON()['Resources'] as Record<
      string,
      { Properties: { Code: { S3Key: unknown } } }
    >;
    const outdir = mkdtempSync(path.join(tmpdir(), 'opflow-bundle-compare-'));
    try {
      for (const [name, fn] of [
        ['worker', stack.worker],
        ['api', stack.api],
        ['sweeper', stack.sweeper],
      ] as const) {
        const s3Key =
          resources[stack.getLogicalId(fn.function.node.defaultChild as CfnElement)]?.Properties.Code.S3Key;
        const assetDir = path.join(assembly.directory, `asset.${String(s3Key).replace(/\.zip$/, '')}`);
        const measured = await measureBundle(name, outdir, new Set());
        expect(statSync(path.join(assetDir, 'index.mjs')).size, name).toBe(measured.bytes);
        // Its chunks too (named by their content's hash): each function's asset is its own build.
        const chunks = (dir: string) => readdirSync(path.join(dir, 'chunks')).sort();
        expect(chunks(assetDir), name).toEqual(chunks(path.join(outdir, name)));
      }
    } finally {
      rmSync(outdir, { recursive: true, force: true });
    }
  });

  it('give the ingest function its document extractors as files beside its bundle, as bundle-sizes builds them', async () => {
    const { app, stack, template } = devJwt;
    const assembly = app.synth();
    const resources = template.toJSON()['Resources'] as Record<
      string,
      { Properties: { Code: { S3Key: unknown } } }
    >;
    const assetOf = (fn: { function: { node: { defaultChild: unknown } } }) => {
      const s3Key =
        resources[stack.getLogicalId(fn.function.node.defaultChild as CfnElement)]?.Properties.Code.S3Key;
      return path.join(assembly.directory, `asset.${String(s3Key).replace(/\.zip$/, '')}`);
    };
    const ingest = assetOf(stack.inbox.ingest);
    const outdir = mkdtempSync(path.join(tmpdir(), 'opflow-extractors-compare-'));
    try {
      const measured = await measureBundle('ingest', outdir, new Set());
      expect(Object.keys(measured.extractors).sort()).toEqual(['mammoth', 'unpdf']);
      for (const [name, bytes] of Object.entries(measured.extractors))
        expect(statSync(path.join(ingest, 'extractors', `${name}.mjs`)).size, name).toBe(bytes);
      // The bundle itself (its entry and chunks) imports them by URL, not by holding them.
      const code = [
        readFileSync(path.join(ingest, 'index.mjs'), 'utf8'),
        ...readdirSync(path.join(ingest, 'chunks'))
          .filter((file) => file.endsWith('.mjs'))
          .map((file) => readFileSync(path.join(ingest, 'chunks', file), 'utf8')),
      ].join('\n');
      expect(code).toContain('extractors/unpdf.mjs');
      expect(code).not.toContain('getTextContent');
    } finally {
      rmSync(outdir, { recursive: true, force: true });
    }
    // The other functions read no documents and get no extractor files.
    expect(existsSync(path.join(assetOf(stack.worker), 'extractors'))).toBe(false);
  });

  it('bundle the AWS SDK instead of taking it from the runtime, minified, with code splitting', () => {
    const options = functionBuildOptions('worker', '/tmp/out');
    expect(options.bundle).toBe(true);
    expect(options.external).toEqual([]);
    expect(options.minify).toBe(true);
    expect(options.sourcemap).toBe(true);
    expect(options.splitting).toBe(true);
    expect(options.format).toBe('esm');
  });

  it('never fall back to Docker', () => {
    expect(() => new LocalEsbuildOnly().run()).toThrow(/local esbuild, never Docker/);
  });
});

describe('invalid config', () => {
  it('stops building the app with an error naming the field', () => {
    const app = new App({ context: { ...cdkJsonContext(), stage: 'prod', alarmEmail: 'not-an-email' } });
    expect(() => buildOpflowApp(app)).toThrow(InvalidStageConfigError);
    expect(() => buildOpflowApp(app)).toThrow(/invalid opflow config for stage "prod": alarms\.email: /);
    expect(app.node.children).toHaveLength(0);
  });

  it(
    'makes the CDK app exit 1 with the field named and no stack trace',
    async () => {
      const tsx = path.join(PROJECT_ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs');
      const run = promisify(execFile)(
        process.execPath,
        [tsx, path.join(PROJECT_ROOT, 'infra/bin/opflow.ts')],
        {
          cwd: PROJECT_ROOT,
          env: {
            ...process.env,
            CDK_CONTEXT_JSON: JSON.stringify({ stage: 'dev', jwtIssuer: 'https://auth.example.com/' }),
          },
        },
      );
      const failure = await run.then(
        () => undefined,
        (error: { code: number; stderr: string }) => error,
      );
      expect(failure?.code).toBe(1);
      expect(failure?.stderr.trim()).toBe(
        'invalid opflow config for stage "dev": api.auth.audience: Too small: expected array to have >=1 items',
      );
    },
    REAL_PROCESS_TIMEOUT_MS,
  );
});

describe('cdk.json and the CDK CLI', () => {
  it('turn off telemetry, notices and version reporting, and run the app with tsx', () => {
    const cdkJson = JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'cdk.json'), 'utf8')) as Record<
      string,
      unknown
    >;
    expect(cdkJson).toMatchObject({
      app: 'npx tsx infra/bin/opflow.ts',
      'cli-telemetry': false,
      notices: false,
      versionReporting: false,
    });
    const manifest = JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8')) as {
      devDependencies: Record<string, string>;
    };
    expect(manifest.devDependencies['aws-cdk']).toMatch(/^\^2\./);
  });
});
