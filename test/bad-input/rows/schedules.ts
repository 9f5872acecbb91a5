/**
 * Schedules and webhook sources in the opflow config file: every field a schedule could not fire
 * with, refused when the config loads (`opflow schedules`, `opflow serve`), naming the schedule's
 * index and the field.
 */
import type { CliRow } from './types';

const usage = 2;

const daily = { name: 'daily', cron: '0 9 * * *', workflow: 'patent-count', input: { query: 'x' } };
const withSchedule = (
  name: string,
  fields: Record<string, unknown>,
  args: string[],
  ...names: (string | RegExp)[]
): CliRow => ({
  name: `${args[0]}: ${name}`,
  args,
  files: {
    'opflow.config.json': JSON.stringify({ schedules: [daily, { ...daily, name: 'other', ...fields }] }),
  },
  exit: usage,
  names: ['opflow.config.json: schedules[1].', ...names],
});
const both = (name: string, fields: Record<string, unknown>, ...names: (string | RegExp)[]) => [
  withSchedule(name, fields, ['schedules'], ...names),
  withSchedule(name, fields, ['serve', '--port', '0'], ...names),
];
const source = (name: string, settings: unknown, ...names: string[]): CliRow => ({
  name: `webhook source: ${name}`,
  args: ['serve', '--port', '0'],
  files: { 'opflow.config.json': JSON.stringify({ webhooks: { tracker: settings } }) },
  exit: usage,
  names: ['opflow.config.json: webhooks.tracker', ...names],
});

export const scheduleRows: CliRow[] = [
  ...both(
    'an input its workflow refuses (unknown field)',
    { input: { qury: 'x' } },
    'schedules[1].input',
    'qury',
  ),
  ...both('an input without the required field', { input: {} }, 'schedules[1].input.query'),
  ...both('an input of the wrong type', { input: 'battery' }, 'schedules[1].input'),
  ...both('a query of the wrong type', { input: { query: 42 } }, 'schedules[1].input.query'),
  ...both('an input that is missing', { input: undefined }, 'schedules[1].input'),
  ...both(
    'a callbackUrl over plain http',
    { callbackUrl: 'http://hooks.example.com/x' },
    'schedules[1].callbackUrl',
    'https',
  ),
  ...both(
    'a callbackUrl at a private address',
    { callbackUrl: 'https://10.0.0.7/hook' },
    'schedules[1].callbackUrl',
    '10.0.0.7',
  ),
  ...both(
    'a callbackUrl at the metadata address',
    { callbackUrl: 'https://169.254.169.254/' },
    'schedules[1].callbackUrl',
  ),
  ...both(
    'a callbackUrl with credentials',
    { callbackUrl: 'https://eve:pw@hooks.example.com/' },
    'schedules[1].callbackUrl',
  ),
  ...both('a callbackUrl that is not a URL', { callbackUrl: 'later' }, 'schedules[1].callbackUrl'),
  ...both('a 7-field cron (a year)', { cron: '0 0 9 * * * 2030' }, 'schedules[1].cron', 'it has 7 fields'),
  ...both('a 4-field cron', { cron: '0 9 * *' }, 'schedules[1].cron', 'it has 4 fields'),
  ...both(
    'a cron that never fires (30 February)',
    { cron: '0 0 30 2 *' },
    'schedules[1].cron',
    'names no time',
  ),
  ...both('a jitter of 100000d', { jitter: '100000d' }, 'schedules[1].jitter', 'at most 1d'),
  ...both(
    'a jitter longer than the period',
    { cron: '*/5 * * * *', jitter: '6m' },
    'schedules[1].jitter',
    'at most 5m',
  ),
  ...both(
    'a jitter of 25h on a weekly schedule',
    { cron: '0 9 * * 1', jitter: '25h' },
    'schedules[1].jitter',
    'at most 1d',
  ),
  ...both('a control character in the name', { name: 'bad\u001b[31mname' }, 'schedules[1].name'),
  ...both('a paused reason that is empty', { paused: { reason: '' } }, 'schedules[1].paused.reason'),
  ...both(
    'a paused reason over 500 characters',
    { paused: { reason: 'x'.repeat(501) } },
    'schedules[1].paused.reason',
  ),
  ...both('a name used twice', { name: 'daily' }, 'schedules[1].name', 'used twice'),
  source('a tolerance over 1d', { tolerance: '2d' }, '.tolerance', 'from 1s to 1d'),
  source('a tolerance of 0s', { tolerance: '0s' }, '.tolerance', 'from 1s to 1d'),
  source(
    'a fixed callbackUrl at a loopback address',
    { callbackUrl: 'https://127.0.0.1/x' },
    '.callbackUrl',
    '127.0.0.1',
  ),
  source(
    'a fixed callbackUrl over http',
    { callbackUrl: 'http://hooks.example.com/' },
    '.callbackUrl',
    'https',
  ),
  source('a label over 200 characters', { label: 'x'.repeat(201) }, '.label'),
  source('a body limit over 10 MB', { maxBodyBytes: 11 * 1024 * 1024 }, '.maxBodyBytes'),
];
