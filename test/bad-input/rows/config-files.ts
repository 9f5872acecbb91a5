/**
 * The opflow config file as a file: what `--config`, OPFLOW_CONFIG or ./opflow.config.json names
 * (special files, folders, sizes, encodings, syntax) and the secrets its webhook sources read.
 * Each message names the flag or variable and the path.
 */
import type { CliRow } from './types';

const usage = 2;
const environment = 5;

/** `opflow schedules` with OPFLOW_CONFIG naming `path` (made by `files`). */
const viaVariable = (name: string, path: string, files: CliRow['files'], ...names: string[]): CliRow => ({
  name: `OPFLOW_CONFIG: ${name}`,
  args: ['schedules'],
  env: { OPFLOW_CONFIG: path },
  files,
  exit: usage,
  names: [`OPFLOW_CONFIG: ${path}`, ...names],
});
const viaFlag = (name: string, path: string, files: CliRow['files'], ...names: string[]): CliRow => ({
  name: `--config: ${name}`,
  args: ['schedules', '--config', path],
  files,
  exit: usage,
  names: [`--config: ${path}`, ...names],
});
const bom = Buffer.from([0xef, 0xbb, 0xbf]);

export const configFileReadRows: CliRow[] = [
  viaVariable('/dev/zero (endless)', '/dev/zero', {}, 'not a regular file'),
  viaVariable('/dev/null (a device)', '/dev/null', {}, 'not a regular file'),
  viaVariable('/dev/urandom', '/dev/urandom', {}, 'not a regular file'),
  viaVariable('/proc/self/status', '/proc/self/status', {}, '/proc'),
  viaVariable('a FIFO', 'fifo.json', { 'fifo.json': { fifo: true } }, 'not a regular file'),
  viaFlag('a FIFO', 'fifo.json', { 'fifo.json': { fifo: true } }, 'not a regular file'),
  viaVariable('a folder', 'conf', { conf: { folder: true } }, 'is a folder, not a file'),
  viaFlag('a folder', 'conf', { conf: { folder: true } }, 'is a folder, not a file'),
  viaVariable(
    'a symbolic link to /dev/zero',
    'zero.json',
    { 'zero.json': { symlink: '/dev/zero' } },
    'not a regular file',
  ),
  viaVariable(
    'a symbolic link to nowhere',
    'gone.json',
    { 'gone.json': { symlink: 'nowhere.json' } },
    'no such config file',
  ),
  viaVariable(
    'over 1 MB',
    'big.json',
    { 'big.json': `{"schedules": []${' '.repeat(1024 * 1024)}}` },
    'too large',
    'at most 1 MB',
  ),
  viaFlag('over 1 MB', 'big.json', { 'big.json': `{"webhooks": {}${' '.repeat(1024 * 1024)}}` }, 'too large'),
  viaVariable(
    'UTF-16 with its byte-order mark',
    'wide.json',
    { 'wide.json': Buffer.from('\ufeff{}', 'utf16le') },
    'is not UTF-8 text',
  ),
  viaVariable(
    'invalid UTF-8',
    'latin1.json',
    { 'latin1.json': Buffer.from('{"$schema": "caf\xe9"}', 'latin1') },
    'is not UTF-8 text',
  ),
  viaVariable('empty', 'empty.json', { 'empty.json': '' }, 'not valid JSON'),
  viaVariable('a byte-order mark then nothing', 'bom.json', { 'bom.json': bom }, 'not valid JSON'),
  viaVariable(
    'a byte-order mark then bad JSON',
    'bom-bad.json',
    { 'bom-bad.json': Buffer.concat([bom, Buffer.from('{\n  "schedules": [,]\n}')]) },
    'not valid JSON',
  ),
  viaVariable(
    'a byte-order mark then a wrong field (the field is named)',
    'bom-field.json',
    { 'bom-field.json': Buffer.concat([bom, Buffer.from('{"schedule": []}')]) },
    'bom-field.json: schedule: unknown field',
  ),
  viaVariable('a NUL byte', 'nul.json', { 'nul.json': '{"webhooks": {}}\0' }, 'not valid JSON'),
  {
    name: 'opflow.config.json that is a folder',
    args: ['schedules'],
    files: { 'opflow.config.json': { folder: true } },
    exit: usage,
    names: ['opflow.config.json: cannot be read as the config file: is a folder, not a file'],
  },
  {
    name: 'opflow.config.json that is a FIFO',
    args: ['schedules'],
    files: { 'opflow.config.json': { fifo: true } },
    exit: usage,
    names: ['opflow.config.json: cannot be read as the config file: not a regular file'],
  },
  {
    name: 'two webhook sources that share one secret variable',
    args: ['schedules'],
    files: { 'opflow.config.json': '{"webhooks": {"my-hook": {}, "my_hook": {}}}' },
    exit: usage,
    names: ['webhooks.my_hook', 'OPFLOW_WEBHOOK_SECRET_MY_HOOK', 'webhooks.my-hook'],
  },
];

/** Signing secrets in the environment: checked when read, named, never shown. */
const secret = (variable: string, value: string, rule: string, args = ['list']): CliRow => ({
  name: `${variable}=${JSON.stringify(value.slice(0, 24))}`,
  args,
  env: { [variable]: value },
  exit: environment,
  names: [variable, rule],
  never: value.length >= 8 ? [value] : [],
});

export const signingSecretRows: CliRow[] = [
  secret('OPFLOW_CALLBACK_SECRET', 'abc', 'at least 24 bytes'),
  secret('OPFLOW_CALLBACK_SECRET', 'twenty-three bytes long', 'at least 24 bytes'),
  secret('OPFLOW_CALLBACK_SECRET', 'whsec_', 'at least 24 bytes'),
  secret('OPFLOW_CALLBACK_SECRET', 'whsec_%%%%not-base64%%%%', 'must be base64'),
  secret('OPFLOW_CALLBACK_SECRET_ACME', 'whsec_c2hvcnQga2V5', 'its key has 9 bytes'),
  secret('OPFLOW_WEBHOOK_SECRET_TRACKER', 'short', 'at least 24 bytes', ['serve', '--port', '0']),
  secret('OPFLOW_WEBHOOK_SECRET_TRACKER', 'whsec_!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!', 'must be base64', [
    'serve',
    '--port',
    '0',
  ]),
  secret('OPFLOW_WEBHOOK_SECRET_TRACKER', 'whsec_YWJj=', 'must be base64', ['serve', '--port', '0']),
  {
    name: 'opflow webhooks sign with a malformed secret',
    args: ['webhooks', 'sign', 'tracker', 'body.json'],
    env: { OPFLOW_WEBHOOK_SECRET_TRACKER: 'whsec_***' },
    files: { 'body.json': '{}' },
    exit: usage,
    names: ['OPFLOW_WEBHOOK_SECRET_TRACKER is not a usable signing secret'],
  },
];
