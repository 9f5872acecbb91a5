/**
 * The stage config: both stages validate as written, and every kind of mistake is refused with a
 * message naming the field. No synthesis here.
 */
import { describe, expect, it } from 'vitest';
import {
  InvalidStageConfigError,
  loadStageConfig,
  MIN_WORKER_TIMEOUT_SECONDS,
  OPEN_PLATFORM_CALL_LIMIT_SECONDS,
  parseStageConfig,
  type StageConfigInput,
  stageDefaults,
  visibilityTimeoutSeconds,
} from '../../infra/config';

/** The dev config with `change` applied to a deep copy. */
function devWith(change: (config: StageConfigInput) => void): StageConfigInput {
  const config = structuredClone(stageDefaults.dev);
  change(config);
  return config;
}

/** Sets the value at a dotted path (`worker.batchSize`, `tenants.0`) of a plain object. */
function setAt(target: object, dottedPath: string, value: unknown): void {
  const keys = dottedPath.split('.');
  const last = keys.pop() as string;
  let node = target as Record<string, unknown>;
  for (const key of keys) node = node[key] as Record<string, unknown>;
  node[last] = value;
}

/** The message parseStageConfig throws for `input`, failing the test when it does not throw. */
function errorFor(input: unknown): InvalidStageConfigError {
  try {
    parseStageConfig(input);
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidStageConfigError);
    return error as InvalidStageConfigError;
  }
  throw new Error('expected the config to be refused');
}

describe('stage config', () => {
  it('validates dev and prod as written', () => {
    expect(loadStageConfig('dev').stage).toBe('dev');
    expect(loadStageConfig('prod').removalPolicy).toBe('retain');
    expect(loadStageConfig('dev').removalPolicy).toBe('destroy');
  });

  it('sizes the visibility timeout at six times the worker timeout plus the batching window', () => {
    expect(visibilityTimeoutSeconds({ timeoutSeconds: 60, maxBatchingWindowSeconds: 1 })).toBe(361);
    const prod = loadStageConfig('prod');
    expect(visibilityTimeoutSeconds(prod.worker)).toBeGreaterThanOrEqual(6 * prod.worker.timeoutSeconds);
  });

  it.each([
    ['worker.batchSize', 0],
    ['worker.maxConcurrency', 1],
    ['worker.maxBatchingWindowSeconds', 301],
    ['queue.maxReceiveCount', 0],
    ['openPlatform.qps', -1],
    ['openPlatform.baseUrl', 'connect.patsnap.com'],
    ['retention.logDays', 15],
    ['retention.reportTransitionDays', 7],
    ['api.throttle.burstLimit', 0],
    ['api.timeoutSeconds', 60],
    ['names.resourcePrefix', 'Opflow Dev'],
    ['tenants.0', 'a/b'],
    ['alarms.email', 'not-an-email'],
    ['alarms.snsTopicArn', 'my-topic'],
    ['logLevel', 'TRACE'],
    // Below one Open Platform call (120 s) plus room for the step around it.
    ['worker.timeoutSeconds', 120],
    // Lambda runs a function for at most 15 minutes, and API Gateway waits for one at most 30 s.
    ['sweeper.timeoutSeconds', 901],
    ['api.timeoutSeconds', 31],
    // Not above the visibility timeout (6 x 180 + 1 = 1081 s): one redelivery would alarm.
    ['alarms.oldestMessageAgeSeconds', 1081],
  ])('names %s when it is %j', (field, value) => {
    const error = errorFor(devWith((config) => setAt(config, field, value)));
    expect(error.message).toMatch(/^invalid opflow config for stage "dev": /);
    expect(error.message).toContain(`${field}: `);
    expect(error.issues.map((i) => i.path)).toEqual([field]);
  });

  it('gives the worker room for one Open Platform call at its limit in both stages', () => {
    for (const stage of ['dev', 'prod']) {
      const { worker, alarms } = loadStageConfig(stage);
      expect(worker.timeoutSeconds).toBeGreaterThanOrEqual(MIN_WORKER_TIMEOUT_SECONDS);
      expect(MIN_WORKER_TIMEOUT_SECONDS).toBeGreaterThan(OPEN_PLATFORM_CALL_LIMIT_SECONDS);
      expect(alarms.oldestMessageAgeSeconds).toBeGreaterThan(visibilityTimeoutSeconds(worker));
    }
    const error = errorFor(devWith((c) => Object.assign(c.worker, { timeoutSeconds: 60 })));
    expect(error.message).toContain(
      'worker.timeoutSeconds: must be at least 150: one Open Platform call may take up to 120 s',
    );
  });

  it('names an unknown key instead of ignoring a typo', () => {
    const error = errorFor(devWith((c) => Object.assign(c.worker, { batchsize: 5 })));
    expect(error.message).toContain('worker: Unrecognized key: "batchsize"');
  });

  it('requires a batching window above ten messages per batch', () => {
    const error = errorFor(
      devWith((c) => {
        c.worker.batchSize = 20;
        c.worker.maxBatchingWindowSeconds = 0;
      }),
    );
    expect(error.message).toContain(
      'worker.maxBatchingWindowSeconds: must be at least 1 when worker.batchSize',
    );
  });

  it('requires JWT auth to name an https issuer and at least one audience', () => {
    const error = errorFor(
      devWith((c) => {
        c.api.auth = { mode: 'jwt', issuer: 'http://issuer.example.com', audience: [] };
      }),
    );
    expect(error.issues.map((i) => i.path)).toEqual(['api.auth.issuer', 'api.auth.audience']);
  });

  it('takes an operator grant for JWT callers, and refuses one that grants nothing or is misplaced', () => {
    const jwt = { mode: 'jwt' as const, issuer: 'https://auth.example.com/', audience: ['opflow-api'] };
    const config = parseStageConfig(
      devWith((c) => {
        c.api.auth = { ...jwt, operators: { groups: ['opflow-operators'] } };
      }),
    );
    expect(config.api.auth).toEqual({
      ...jwt,
      operators: { claim: 'cognito:groups', groups: ['opflow-operators'] },
    });
    const empty = errorFor(
      devWith((c) => {
        c.api.auth = { ...jwt, operators: { groups: [] } };
      }),
    );
    expect(empty.issues.map((i) => i.path)).toEqual(['api.auth.operators.groups']);
    const typo = errorFor(
      devWith((c) => {
        c.api.auth = { ...jwt, operators: { group: 'opflow-operators' } } as unknown as typeof c.api.auth;
      }),
    );
    expect(typo.message).toContain('api.auth.operators');
    expect(() => loadStageConfig('dev', { jwtOperatorGroups: 'opflow-operators' })).toThrow(
      /api\.auth\.operators: operator groups apply to JWT callers only/,
    );
  });

  it('takes fair shares as OPFLOW_SHARES says them, naming the field and the part that is wrong', () => {
    const weighted = devWith((c) => {
      c.tenants = ['default', 'acme'];
      c.openPlatform.shares = 'acme=3, default=0.5';
    });
    expect(parseStageConfig(weighted).openPlatform.shares).toBe('acme=3, default=0.5');
    expect(parseStageConfig(devWith((c) => (c.openPlatform.shares = 'off'))).openPlatform.shares).toBe('off');
    expect(parseStageConfig(stageDefaults.dev).openPlatform.shares).toBeUndefined();
    const refused = (shares: string) => errorFor(devWith((c) => (c.openPlatform.shares = shares))).issues;
    expect(refused('acme')).toEqual([
      { path: 'openPlatform.shares', message: '"acme" is not tenant=weight (e.g. acme=3,beta=1), or off' },
    ]);
    expect(refused('default=0')).toEqual([
      { path: 'openPlatform.shares', message: 'default must be a number above 0' },
    ]);
    expect(refused('default=1,default=2')[0]?.message).toBe('tenant "default" is named twice');
    expect(refused('acme=2')).toEqual([
      {
        path: 'openPlatform.shares',
        message:
          'tenant "acme" is not one of the stage\'s tenants (default): add it to tenants, or correct its name',
      },
    ]);
  });

  it('refuses both an alarm email and an existing topic', () => {
    const error = errorFor(
      devWith((c) => {
        c.alarms.email = 'ops@example.com';
        c.alarms.snsTopicArn = 'arn:aws:sns:eu-west-1:123456789012:ops';
      }),
    );
    expect(error.issues).toEqual([
      { path: 'alarms.email', message: expect.stringContaining('not both') as unknown as string },
    ]);
  });

  it('refuses a prod stage that would delete its data with the stack', () => {
    const config = structuredClone(stageDefaults.prod);
    config.removalPolicy = 'destroy';
    expect(errorFor(config).message).toContain('removalPolicy: must be "retain" for prod');
  });

  it('applies command-line overrides before validating them', () => {
    const config = loadStageConfig('prod', {
      alarmEmail: 'ops@example.com',
      jwtIssuer: 'https://auth.example.com/',
      jwtAudience: 'opflow-api, opflow-cli',
    });
    expect(config.alarms.email).toBe('ops@example.com');
    expect(config.api.auth).toEqual({
      mode: 'jwt',
      issuer: 'https://auth.example.com/',
      audience: ['opflow-api', 'opflow-cli'],
    });
    expect(
      loadStageConfig('prod', {
        jwtIssuer: 'https://auth.example.com/',
        jwtAudience: 'opflow-api',
        jwtOperatorGroups: 'opflow-operators, opflow-admins',
        jwtOperatorClaim: 'groups',
      }).api.auth,
    ).toMatchObject({ operators: { claim: 'groups', groups: ['opflow-operators', 'opflow-admins'] } });
    expect(() => loadStageConfig('prod', { jwtIssuer: 'https://auth.example.com/' })).toThrow(
      /api\.auth\.audience: /,
    );
    expect(() => loadStageConfig('dev', { alarmTopicArn: 'nope' })).toThrow(
      /alarms\.snsTopicArn: must be an SNS topic ARN/,
    );
  });

  it('names the stage field for an unknown stage', () => {
    expect(() => loadStageConfig('qa')).toThrow('invalid opflow config for stage "qa": stage: unknown stage');
  });
});
