/**
 * Stack settings from a file (opflow.stack.json) or the `opflowStack` context: any stage name, any
 * setting, laid over a built-in stage, and every mistake refused with the source and the field named.
 * The example file in examples/ validates as shipped. No synthesis here but the app's own reading of
 * the context (which validates before building anything).
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { App } from 'aws-cdk-lib';
import { describe, expect, it } from 'vitest';
import {
  InvalidStackSettingsError,
  loadStageConfig,
  parseStackSettings,
  physicalPrefix,
  stageDefaults,
} from '../../infra/config';
import { PROJECT_ROOT } from '../../infra/lib/function-bundling';
import { stackSettingsFromContext, stageConfigFromContext } from '../../infra/lib/opflow-app';

/** The error parseStackSettings throws for `value`, failing the test when it does not throw. */
function refusal(value: unknown, source = 'opflow.stack.json'): InvalidStackSettingsError {
  try {
    parseStackSettings(value, source);
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidStackSettingsError);
    return error as InvalidStackSettingsError;
  }
  throw new Error('expected the settings to be refused');
}

describe('stack settings', () => {
  it('adds a stage of any name over dev, named opflow-<stage>, with only the settings it changes', () => {
    const settings = parseStackSettings(
      { stages: { qa: { tenants: ['default', 'acme'], worker: { maxConcurrency: 3 } } } },
      'opflow.stack.json',
    );
    const qa = loadStageConfig('qa', {}, settings);
    expect(qa.stage).toBe('qa');
    expect(qa.names).toEqual({ stackName: 'opflow-qa', resourcePrefix: 'opflow-qa', generation: 1 });
    expect(qa.tenants).toEqual(['default', 'acme']);
    expect(qa.worker).toEqual({ ...stageDefaults.dev.worker, maxConcurrency: 3 });
    expect(qa.removalPolicy).toBe('destroy');
    // The built-in stages stay known, as they are.
    expect(loadStageConfig('prod', {}, settings)).toEqual(loadStageConfig('prod'));
  });

  it('starts a stage from prod when it says so, and changes a built-in stage in place', () => {
    const settings = parseStackSettings(
      {
        stages: {
          staging: { base: 'prod', openPlatform: { qps: 3 } },
          prod: { alarms: { email: 'ops@example.com' }, names: { generation: 2 } },
        },
      },
      'opflow.stack.json',
    );
    const staging = loadStageConfig('staging', {}, settings);
    expect(staging.removalPolicy).toBe('retain');
    expect(staging.openPlatform).toEqual({ baseUrl: 'https://connect.patsnap.com', qps: 3 });
    const prod = loadStageConfig('prod', {}, settings);
    expect(prod.alarms.email).toBe('ops@example.com');
    expect(physicalPrefix(prod.names)).toBe('opflow-prod-g2');
    expect(prod.worker).toEqual(loadStageConfig('prod').worker);
  });

  it('removes a setting given as null, and applies command-line overrides last', () => {
    // null takes the base's value away: for a required setting, that is an error naming it.
    expect(refusal({ stages: { qa: { logLevel: null } } }).message).toMatch(
      /^opflow\.stack\.json: stages\.qa\.logLevel: Invalid option/,
    );
    const settings = parseStackSettings(
      { stages: { qa: { alarms: { email: 'qa@example.com' } } } },
      'opflow.stack.json',
    );
    expect(loadStageConfig('qa', {}, settings).alarms.email).toBe('qa@example.com');
    expect(loadStageConfig('qa', { alarmEmail: 'ops@example.com' }, settings).alarms.email).toBe(
      'ops@example.com',
    );
    expect(() => loadStageConfig('qa', { alarmEmail: 'nope' }, settings)).toThrow(
      'invalid opflow config for stage "qa": alarms.email: ',
    );
  });

  it.each([
    [
      { stages: { qa: { worker: { timeoutSeconds: 60 } } } },
      'stages.qa.worker.timeoutSeconds: must be at least 150',
    ],
    [
      { stages: { qa: { worker: { timeoutSecond: 200 } } } },
      'stages.qa.worker: Unrecognized key: "timeoutSecond"',
    ],
    [{ stages: { QA: {} } }, 'stages.QA: must be 1-24 lowercase letters'],
    [{ stages: { qa: { base: 'staging' } } }, 'stages.qa.base: Invalid option'],
    [{ stages: { qa: { stage: 'dev' } } }, 'stages.qa.stage: must be "qa"'],
    [
      { stages: { prod: { removalPolicy: 'destroy' } } },
      'stages.prod.removalPolicy: must be "retain" for prod',
    ],
    [{ stages: { qa: { names: { generation: 0 } } } }, 'stages.qa.names.generation: Too small'],
    [{ stage: { qa: {} } }, 'opflow.stack.json: Unrecognized key: "stage"'],
    [{ stages: { qa: { tenants: [] } } }, 'stages.qa.tenants: Too small'],
  ])('names the file and field of %j', (value, message) => {
    const error = refusal(value);
    expect(error.message).toContain(message);
    for (const line of error.message.split('\n')) expect(line).toMatch(/^opflow\.stack\.json: /);
  });

  it('lists every problem, one line each, across stages', () => {
    const error = refusal(
      { stages: { qa: { logLevel: 'TRACE' }, uat: { queue: { retentionDays: 30 } } } },
      'team/opflow.stack.json',
    );
    expect(error.message.split('\n')).toEqual([
      expect.stringMatching(/^team\/opflow\.stack\.json: stages\.qa\.logLevel: /),
      expect.stringMatching(/^team\/opflow\.stack\.json: stages\.uat\.queue\.retentionDays: Too big/),
    ]);
  });

  it('refuses two stages that would share a stack name or a physical prefix in one account', () => {
    const prefix = refusal({ stages: { qa: { names: { resourcePrefix: 'opflow-dev' } } } });
    expect(prefix.message).toBe(
      'opflow.stack.json: stages.qa.names.resourcePrefix: "opflow-dev" is also the physical prefix ' +
        '(resourcePrefix and generation) of stage "dev": two stacks in one account would collide; give each stage its own',
    );
    const stack = refusal({ stages: { qa: { names: { stackName: 'opflow-prod' } } } });
    expect(stack.message).toContain(
      'stages.qa.names.stackName: "opflow-prod" is also the stack name of stage "prod"',
    );
    // A generation makes a prefix its own: opflow-a at generation 2 is opflow-a-g2.
    const generation = refusal({ stages: { a: { names: { generation: 2 } }, 'a-g2': {} } });
    expect(generation.message).toContain('stages.a-g2.names.resourcePrefix: "opflow-a-g2"');
  });

  it('names an unknown stage with the stages the settings know', () => {
    const settings = parseStackSettings({ stages: { qa: {} } }, 'opflow.stack.json');
    expect(() => loadStageConfig('uat', {}, settings)).toThrow(
      'invalid opflow config for stage "uat": stage: unknown stage; expected one of dev, prod, qa (the built-in ones and those of opflow.stack.json)',
    );
  });

  it('ships an example that validates, with a stage of its own', () => {
    const example = 'examples/opflow.stack.json';
    const settings = parseStackSettings(
      JSON.parse(readFileSync(path.join(PROJECT_ROOT, example), 'utf8')),
      example,
    );
    expect(Object.keys(settings.stages).length).toBeGreaterThan(2);
    for (const stage of Object.keys(settings.stages))
      expect(loadStageConfig(stage, {}, settings).stage).toBe(stage);
  });
});

describe('stack settings in the app', () => {
  const appWith = (context: Record<string, unknown>) => new App({ context });

  it('reads the file -c config names, and names that file in errors', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'opflow-stack-settings-'));
    const file = path.join(dir, 'team.json');
    writeFileSync(file, JSON.stringify({ stages: { qa: { logLevel: 'WARN' } } }));
    expect(stageConfigFromContext(appWith({ config: file, stage: 'qa' })).logLevel).toBe('WARN');
    writeFileSync(file, '{"stages": {"qa": {"logLevel": "WARN",}}}');
    expect(() => stackSettingsFromContext(appWith({ config: file }))).toThrow(
      new RegExp(`^${file.replaceAll('/', '\\/')}: not valid JSON: `),
    );
    expect(() => stackSettingsFromContext(appWith({ config: path.join(dir, 'missing.json') }))).toThrow(
      /missing\.json: cannot read: ENOENT/,
    );
  });

  it('takes the same document from the opflowStack context, as an object or as JSON text', () => {
    const document = { stages: { qa: { worker: { memoryMb: 768 } } } };
    expect(stageConfigFromContext(appWith({ opflowStack: document, stage: 'qa' })).worker.memoryMb).toBe(768);
    expect(
      stageConfigFromContext(appWith({ opflowStack: JSON.stringify(document), stage: 'qa' })).worker.memoryMb,
    ).toBe(768);
    expect(() =>
      stageConfigFromContext(appWith({ opflowStack: { stages: { qa: { logLevel: 1 } } } })),
    ).toThrow(/^context "opflowStack": stages\.qa\.logLevel: /);
    expect(() => stackSettingsFromContext(appWith({ opflowStack: document, config: 'x.json' }))).toThrow(
      'context "opflowStack": give the settings either in this context or in a file (-c config=x.json), not both',
    );
  });

  it('knows only dev and prod without a file', () => {
    expect(stackSettingsFromContext(appWith({}))).toBeUndefined();
    expect(stageConfigFromContext(appWith({ stage: 'prod' }))).toEqual(loadStageConfig('prod'));
  });
});
