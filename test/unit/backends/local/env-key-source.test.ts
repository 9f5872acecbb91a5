// API keys from the environment: the tenant's own variable first, then OPFLOW_API_KEY, then a fallback.
import { describe, expect, it } from 'vitest';
import { EnvKeySource, tenantKeyVariable } from '../../../../shared/backends/local';

describe('EnvKeySource', () => {
  it('names the tenant variable in upper case with underscores', () => {
    expect(tenantKeyVariable('acme-labs.eu')).toBe('OPFLOW_API_KEY_ACME_LABS_EU');
    expect(tenantKeyVariable('default')).toBe('OPFLOW_API_KEY_DEFAULT');
  });

  it("prefers the tenant's key, then the shared key, then the fallback", async () => {
    const env: Record<string, string | undefined> = { OPFLOW_API_KEY: 'shared', OPFLOW_API_KEY_ACME: 'acme' };
    const keys = new EnvKeySource({ env, fallbackKey: 'sandbox' });
    expect(await keys.getKey('acme')).toBe('acme');
    expect(await keys.getKey('globex')).toBe('shared');
    delete env.OPFLOW_API_KEY;
    expect(await keys.getKey('globex')).toBe('sandbox');
  });

  it('treats empty or blank values as unset', async () => {
    const keys = new EnvKeySource({ env: { OPFLOW_API_KEY: '  ', OPFLOW_API_KEY_ACME: '' } });
    expect(await keys.getKey('acme')).toBeUndefined();
  });

  it('reads the environment again on refresh, picking up a rotated key', async () => {
    const env: Record<string, string | undefined> = { OPFLOW_API_KEY: 'old' };
    const keys = new EnvKeySource({ env });
    expect(await keys.getKey('default')).toBe('old');
    env.OPFLOW_API_KEY = 'new';
    expect(await keys.refresh('default')).toBe('new');
  });
});
