// SecretsManagerKeySource against the Secrets Manager emulator: both secret formats, the bounded
// cache (time skipped with a fake Date, not slept), refresh after rotation, and no key in errors.
import { CreateSecretCommand, PutSecretValueCommand } from '@aws-sdk/client-secrets-manager';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  type AwsEmulators,
  startAwsEmulators,
  uniqueName,
} from '../../../../scripts/emulators/aws-emulators';
import { InvalidSecretError, SecretsManagerKeySource } from '../../../../shared/backends/aws';

let emulators: AwsEmulators;
beforeAll(async () => {
  emulators = await startAwsEmulators({ dynamoDb: false, sqsAndS3: false });
});
afterAll(async () => {
  await emulators?.stop();
});
afterEach(() => {
  vi.useRealTimers();
});

function setup(maxAgeSeconds?: number) {
  const prefix = `${uniqueName('opflow')}/api-key/`;
  const keys = new SecretsManagerKeySource({
    client: emulators.clients.secretsManager,
    prefix,
    maxAgeSeconds,
  });
  return { prefix, keys, reads: (tenant: string) => emulators.secretsManager!.reads(prefix + tenant) };
}

describe('SecretsManagerKeySource', () => {
  it('reads a plain key and a JSON {"apiKey"} secret, through the SDK', async () => {
    const { prefix, keys } = setup();
    await emulators.clients.secretsManager.send(
      new CreateSecretCommand({ Name: `${prefix}plain`, SecretString: '  sk-plain-123\n' }),
    );
    await emulators.clients.secretsManager.send(
      new CreateSecretCommand({ Name: `${prefix}json`, SecretString: '{"apiKey":"sk-json-456","note":"x"}' }),
    );
    expect(await keys.getKey('plain')).toBe('sk-plain-123');
    expect(await keys.getKey('json')).toBe('sk-json-456');
  });

  it('answers undefined for a tenant without a secret', async () => {
    const { keys } = setup();
    expect(await keys.getKey('nobody')).toBeUndefined();
  });

  it('answers undefined for a secret the stack created without a value, and for an empty one', async () => {
    const { prefix, keys } = setup();
    // What the CDK stack creates: a secret with no version until the deployer puts the key.
    await emulators.clients.secretsManager.send(new CreateSecretCommand({ Name: `${prefix}unset` }));
    emulators.secretsManager!.setSecret(`${prefix}blank`, '  \n');
    emulators.secretsManager!.setSecret(`${prefix}blank-json`, '{"apiKey": " "}');
    for (const tenant of ['unset', 'blank', 'blank-json']) {
      expect(await keys.getKey(tenant)).toBeUndefined();
      expect(await keys.refresh(tenant)).toBeUndefined();
    }
  });

  it('reuses a key for maxAge seconds, then reads it again', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2026-01-01T00:00:00Z'));
    const { prefix, keys, reads } = setup(60);
    emulators.secretsManager!.setSecret(`${prefix}t`, 'sk-1');
    expect(await keys.getKey('t')).toBe('sk-1');
    emulators.secretsManager!.setSecret(`${prefix}t`, 'sk-2');
    vi.setSystemTime(new Date('2026-01-01T00:00:59Z'));
    expect(await keys.getKey('t')).toBe('sk-1');
    expect(reads('t')).toBe(1);
    vi.setSystemTime(new Date('2026-01-01T00:01:01Z'));
    expect(await keys.getKey('t')).toBe('sk-2');
    expect(reads('t')).toBe(2);
  });

  it('picks up a rotated key on refresh, and keeps it cached afterwards', async () => {
    const { prefix, keys, reads } = setup();
    await emulators.clients.secretsManager.send(
      new CreateSecretCommand({ Name: `${prefix}t`, SecretString: 'old' }),
    );
    expect(await keys.getKey('t')).toBe('old');
    await emulators.clients.secretsManager.send(
      new PutSecretValueCommand({ SecretId: `${prefix}t`, SecretString: '{"apiKey":"new"}' }),
    );
    expect(await keys.getKey('t')).toBe('old');
    expect(await keys.refresh('t')).toBe('new');
    expect(await keys.getKey('t')).toBe('new');
    expect(reads('t')).toBe(2);
  });

  it('reads once for many concurrent refreshes', async () => {
    const { prefix, keys, reads } = setup();
    emulators.secretsManager!.setSecret(`${prefix}t`, 'k');
    const answers = await Promise.all(Array.from({ length: 20 }, () => keys.refresh('t')));
    expect(new Set(answers)).toEqual(new Set(['k']));
    expect(reads('t')).toBe(1);
  });

  it('says what is wrong with a malformed secret without showing its value', async () => {
    const { prefix, keys } = setup();
    emulators.secretsManager!.setSecret(`${prefix}a`, '{"apiKey": "sk-secret-a", ');
    emulators.secretsManager!.setSecret(`${prefix}b`, '{"key":"sk-secret-b"}');
    for (const tenant of ['a', 'b']) {
      const error = await keys.getKey(tenant).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(InvalidSecretError);
      expect((error as Error).message).toContain(`${prefix}${tenant}`);
      expect((error as Error).message).not.toContain('sk-secret');
    }
  });

  it('refuses tenants and prefixes that cannot form a secret name', () => {
    expect(
      () => new SecretsManagerKeySource({ client: emulators.clients.secretsManager, prefix: 'bad prefix' }),
    ).toThrow(/prefix/);
    const { keys } = setup();
    return expect(keys.getKey('a b')).rejects.toThrow(/tenant "a b"/);
  });
});
