// The config file: valid files load with their defaults; every problem names the file and field,
// a JSON syntax error its line.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigFileError, loadOpflowConfig, parseOpflowConfig } from '../../../shared/config/opflow-config';

const workflows = new Set(['patent-count', 'novelty-check']);
const problems = (value: unknown) => {
  try {
    parseOpflowConfig(value, 'opflow.config.json', workflows);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigFileError);
    return (error as Error).message;
  }
  throw new Error('accepted');
};

describe('opflow config file', () => {
  it('loads schedules and webhooks with their defaults', () => {
    const config = parseOpflowConfig(
      {
        schedules: [
          {
            name: 'weekly-batteries',
            cron: '0 6 * * 1',
            workflow: 'patent-count',
            input: { query: 'battery' },
          },
        ],
        webhooks: { tracker: { workflow: 'patent-count', input: { query: { $from: '/title' } } } },
      },
      'opflow.config.json',
      workflows,
    );
    expect(config.schedules[0]).toMatchObject({
      timezone: 'UTC',
      overlap: 'skip',
      catchUp: 'one',
      tenant: 'default',
    });
    expect(config.webhooks.tracker).toMatchObject({
      tenant: 'default',
      tolerance: '5m',
      maxBodyBytes: 262144,
    });
  });

  it.each([
    [
      { schedules: [{ name: 'a', cron: 'every day', workflow: 'patent-count', input: {} }] },
      /schedules\[0\]\.cron: is not a cron expression/,
    ],
    [
      {
        schedules: [
          { name: 'a', cron: '0 6 * * *', timezone: 'Mars/Olympus', workflow: 'patent-count', input: {} },
        ],
      },
      /schedules\[0\]\.timezone: "Mars\/Olympus" is not an IANA time zone/,
    ],
    [
      { schedules: [{ name: 'a', cron: '0 6 * * *', workflow: 'nope', input: {} }] },
      /schedules\[0\]\.workflow: unknown workflow "nope"/,
    ],
    [
      { schedules: [{ name: 'a', cron: '0 6 * * *', workflow: 'patent-cont', input: {} }] },
      /schedules\[0\]\.workflow: unknown workflow "patent-cont" \(did you mean patent-count\?\)/,
    ],
    [
      { schedules: [{ name: 'Bad Name', cron: '0 6 * * *', workflow: 'patent-count', input: {} }] },
      /schedules\[0\]\.name: must be/,
    ],
    [
      {
        schedules: [{ name: 'a', cron: '0 6 * * *', workflow: 'patent-count', input: {}, overlap: 'queue' }],
      },
      /schedules\[0\]\.overlap/,
    ],
    [
      {
        schedules: [
          { name: 'a', cron: '0 6 * * *', workflow: 'patent-count', input: {}, jitter: '5 minutes' },
        ],
      },
      /schedules\[0\]\.jitter: must be a duration/,
    ],
    [
      {
        schedules: [0, 1].map(() => ({ name: 'a', cron: '0 6 * * *', workflow: 'patent-count', input: {} })),
      },
      /schedules\[1\]\.name: "a" is used twice/,
    ],
    [
      {
        reviewers: {
          channels: { ops: { type: 'slack' } },
          rules: ['a', 'b', 'a'].map((name) => ({ name, notify: ['ops'] })),
        },
      },
      /reviewers\.rules\[2\]\.name: "a" is used twice/,
    ],
    [
      { webhooks: { tracker: { workflow: 'patent-count', input: { q: { $from: 'title' } } } } },
      /webhooks\.tracker\.input/,
    ],
    [{ webhooks: { tracker: { workflow: 'nope' } } }, /webhooks\.tracker\.workflow: unknown workflow "nope"/],
    [
      { webhooks: { tracker: { workflow: 'novely' } } },
      /webhooks\.tracker\.workflow: unknown workflow "novely" \(did you mean novelty-check\?\)/,
    ],
    [{ webhooks: { tracker: { tenant: 'a b' } } }, /webhooks\.tracker\.tenant/],
    [{ schedule: [] }, /opflow\.config\.json: schedule: unknown field/],
  ])('names the file and field: %j', (value, pattern) => {
    const message = problems(value);
    expect(message).toMatch(/^opflow\.config\.json: /);
    expect(message).toMatch(pattern);
  });

  it('names the line of a JSON syntax error, and a missing named file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'opflow-config-'));
    writeFileSync(join(dir, 'opflow.config.json'), '{\n  "schedules": [\n    {,}\n  ]\n}\n');
    await expect(loadOpflowConfig({ env: {}, cwd: dir })).rejects.toThrow(
      /opflow\.config\.json: not valid JSON at line 3/,
    );
    await expect(loadOpflowConfig({ env: { OPFLOW_CONFIG: 'other.json' }, cwd: dir })).rejects.toThrow(
      /OPFLOW_CONFIG: other\.json: no such config file/,
    );
    expect((await loadOpflowConfig({ env: {}, cwd: `${tmpdir()}/does-not-exist` })).config.schedules).toEqual(
      [],
    );
  });

  it('reads a file that starts with a byte-order mark, and refuses one that is not UTF-8', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'opflow-config-'));
    writeFileSync(join(dir, 'bom.json'), Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{}')]));
    expect((await loadOpflowConfig({ explicit: 'bom.json', env: {}, cwd: dir })).config.schedules).toEqual(
      [],
    );
    writeFileSync(join(dir, 'utf16.json'), Buffer.from('\ufeff{}', 'utf16le'));
    await expect(loadOpflowConfig({ explicit: 'utf16.json', env: {}, cwd: dir })).rejects.toThrow(
      '--config: utf16.json: is not UTF-8 text',
    );
  });
});
