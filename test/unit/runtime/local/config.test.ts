// The local runtime's configuration: flags over environment over defaults, and errors that name the culprit.
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../../../shared/runtime/config-error';
import { loadLocalConfig, usesBuiltInSandbox } from '../../../../shared/runtime/local/config';

/** The error `run` throws; fails the test when it throws none. */
function errorOf(run: () => unknown): ConfigError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error('expected a ConfigError, but nothing was thrown');
}

describe('loadLocalConfig', () => {
  it('uses the defaults when nothing is set', () => {
    expect(loadLocalConfig({}, {})).toEqual({
      apiKey: undefined,
      baseUrl: undefined,
      qps: 5,
      concurrency: 8,
      dbPath: '.opflow/opflow.db',
      outDir: 'opflow-out',
      sandboxSpeed: undefined,
    });
  });

  it('reads the environment, and lets flags win over it', () => {
    const env = {
      OPFLOW_API_KEY: ' key-from-env ',
      OPFLOW_BASE_URL: 'https://connect.example.test',
      OPFLOW_QPS: '2.5',
      OPFLOW_CONCURRENCY: '16',
      OPFLOW_DB: '/var/opflow/jobs.db',
      OPFLOW_OUT: '/var/opflow/out',
      OPFLOW_SANDBOX_SPEED: '10',
    };
    expect(loadLocalConfig({}, env)).toEqual({
      apiKey: 'key-from-env',
      baseUrl: 'https://connect.example.test',
      qps: 2.5,
      concurrency: 16,
      dbPath: '/var/opflow/jobs.db',
      outDir: '/var/opflow/out',
      sandboxSpeed: 10,
    });
    const flagged = loadLocalConfig({ qps: '1', concurrency: 2, dbPath: 'x.db', sandboxSpeed: '100' }, env);
    expect(flagged).toMatchObject({ qps: 1, concurrency: 2, dbPath: 'x.db', sandboxSpeed: 100 });
  });

  it('treats an empty variable as unset', () => {
    expect(loadLocalConfig({}, { OPFLOW_QPS: '', OPFLOW_API_KEY: '  ' }).qps).toBe(5);
    expect(loadLocalConfig({}, { OPFLOW_API_KEY: '' }).apiKey).toBeUndefined();
  });

  it('names every wrong value by its flag or variable, and says whether a flag was wrong', () => {
    const error = errorOf(() =>
      loadLocalConfig({ qps: 'fast' }, { OPFLOW_CONCURRENCY: '1.5', OPFLOW_BASE_URL: 'ftp://x' }),
    );
    const message = error.message;
    expect(message).toContain('OPFLOW_BASE_URL: must be an http(s) URL (got "ftp://x")');
    expect(message).toContain('--qps: must be a number (calls per second) (got "fast")');
    expect(message).toContain('OPFLOW_CONCURRENCY: must be a whole number (got "1.5")');
    expect(error.fromFlags).toBe(true);
    expect(() => loadLocalConfig({}, { OPFLOW_CONCURRENCY: '300' })).toThrow(
      /OPFLOW_CONCURRENCY: must be at most 256/,
    );
    expect(errorOf(() => loadLocalConfig({}, { OPFLOW_QPS: '0' })).fromFlags).toBe(false);
  });

  it('takes the API key from the environment only, and never repeats it in an error', () => {
    // A flag for the key is ignored on purpose: it would end up in shell history.
    expect(loadLocalConfig({ apiKey: 'from-flag' } as never, {}).apiKey).toBeUndefined();
    const error = errorOf(() => loadLocalConfig({}, { OPFLOW_API_KEY: 'sk-secret-key', OPFLOW_QPS: 'x' }));
    expect(error.message).toContain('OPFLOW_QPS');
    expect(error.message).not.toContain('sk-secret-key');
  });

  it('uses the built-in sandbox only with neither a key nor a base URL', () => {
    expect(usesBuiltInSandbox({})).toBe(true);
    expect(usesBuiltInSandbox({ apiKey: 'k' })).toBe(false);
    expect(usesBuiltInSandbox({ baseUrl: 'http://127.0.0.1:8787' })).toBe(false);
  });
});
