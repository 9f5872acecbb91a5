/** Command-line arguments: commands, flags and their values. */
import type { CliRow } from './types';

const usage = 2;
const notFound = 4;

const row = (name: string, args: string[], exit: number, ...names: (string | RegExp)[]): CliRow => ({
  name,
  args,
  exit,
  names,
});

const unknownId = '01J00000000000000000000000';

export const cliArgRows: CliRow[] = [
  row('no command at all is help, not an error', ['nosuchcommand'], usage, /unknown command 'nosuchcommand'/),
  row('an unknown global option', ['--colour', 'list'], usage, "unknown option '--colour'"),
  row('an unknown run option', ['run', 'patent-count', 'x.json', '--fast'], usage, "unknown option '--fast'"),
  row('run without a workflow', ['run'], usage, "missing required argument 'workflow'"),
  row('run without inputs', ['run', 'patent-count'], usage, "missing required argument 'inputs'"),
  ...['novelty', 'nope', 'NOVELTY-CHECK', 'patent_count', '', '../novelty-check'].map((name) =>
    row(
      `run with the unknown workflow ${JSON.stringify(name)}`,
      ['run', name, 'x.txt'],
      usage,
      `unknown workflow "${name}"`,
    ),
  ),
  ...['x', 'AUTO', '', 'manual2', 'ask'].map((value) =>
    row(
      `--select ${JSON.stringify(value)}`,
      ['run', 'patent-count', 'x.json', '--select', value],
      usage,
      '--select',
    ),
  ),
  ...[
    '0s',
    '-1h',
    '1y',
    'abc',
    '',
    'ms',
    '1.5x',
    '10',
    '100000000d',
    '367d',
    '9007199254740991ms',
    '0.5ms',
  ].map((value) =>
    row(
      `--deadline ${JSON.stringify(value)}`,
      ['run', 'patent-count', 'x.json', '--deadline', value],
      usage,
      '--deadline',
    ),
  ),
  ...['0', '-1', 'abc', 'NaN', 'Infinity', '1e9', '0x10k'].map((value) =>
    row(`--qps ${JSON.stringify(value)}`, ['--qps', value, 'list'], usage, '--qps'),
  ),
  ...['0', '257', '1.5', 'abc', '-3', '1e3'].map((value) =>
    row(`--concurrency ${JSON.stringify(value)}`, ['--concurrency', value, 'list'], usage, '--concurrency'),
  ),
  ...['0', '0.5', 'abc', '1e9', '-2'].map((value) =>
    row(
      `--sandbox-speed ${JSON.stringify(value)}`,
      ['--sandbox-speed', value, 'list'],
      usage,
      '--sandbox-speed',
    ),
  ),
  ...[
    'ftp://example.com',
    'not a url',
    'javascript:alert(1)',
    'http://',
    'file:///etc/passwd',
    'example.com',
  ].map((value) =>
    row(`--base-url ${JSON.stringify(value)}`, ['--base-url', value, 'list'], usage, '--base-url'),
  ),
  {
    ...row(
      '--base-url with a password is refused without showing it',
      ['--base-url', 'ftp://bob:hunter2-pw@x.example/', 'list'],
      usage,
      '--base-url',
      'ftp://***@x.example/',
    ),
    never: ['hunter2-pw'],
  },
  ...['gcp', '', 'LOCAL'].map((value) =>
    row(`--backend ${JSON.stringify(value)}`, ['--backend', value, 'list'], usage, '--backend'),
  ),
  ...['a b', '../x', 'x'.repeat(65), 'ten/ant']
    .map((value) =>
      row(
        `--tenant ${JSON.stringify(value.slice(0, 20))}`,
        ['run', 'patent-count', '{dir}/ok.json', '--tenant', value],
        usage,
        'tenant',
      ),
    )
    .map((r) => ({ ...r, files: { 'ok.json': '{"query": "TTL:(hinge)"}' } })),
  ...['x', 'DONE', '', 'finished'].map((value) =>
    row(
      `list --status ${JSON.stringify(value)}`,
      ['list', '--status', value],
      usage,
      '--status must be one of',
    ),
  ),
  ...['0', '1001', 'abc', '1.5', '-1', ''].map((value) =>
    row(
      `list --limit ${JSON.stringify(value)}`,
      ['list', '--limit', value],
      usage,
      '--limit must be a whole number',
    ),
  ),
  ...['nope', 'novelty', 'NOVELTY-CHECK'].map((value) =>
    row(
      `list --workflow ${JSON.stringify(value)}`,
      ['list', '--workflow', value],
      usage,
      `--workflow: no workflow "${value}"`,
    ),
  ),
  // A misspelt workflow gets the nearest name wherever a command takes one.
  ...[
    ['workflows', 'novely'],
    ['help', 'novely'],
    ['run', 'novely', 'x.txt'],
    ['list', '--workflow', 'novely'],
    ['bulk', 'retry', '--workflow', 'novely', '--dry-run'],
  ].map((args) =>
    row(`${args.join(' ')} suggests novelty-check`, args, usage, '"novely" (did you mean novelty-check?)'),
  ),
  row('status of an unknown job', ['status', unknownId], notFound, `no job ${unknownId}`),
  row('status without a job id', ['status'], usage, "missing required argument 'jobId'"),
  row('cancel of an unknown job', ['cancel', unknownId], notFound, `no job ${unknownId}`),
  row('report of an unknown job', ['report', unknownId], notFound, unknownId),
  row('resume of an unknown job', ['resume', unknownId], notFound, `no job ${unknownId}`),
  row('resume --select without a job', ['resume', '--select', 'f1'], usage, '--select answers one job'),
  row(
    'resume --select with no ids',
    ['resume', unknownId, '--select', ' , '],
    usage,
    '--select needs at least one option id',
  ),
  row(
    'resume --select with --by and --as naming two people',
    ['resume', unknownId, '--select', 'f1', '--by', 'alice', '--as', 'bob'],
    usage,
    '--by and --as name two people',
  ),
  row(
    'resume --select with an empty --as',
    ['resume', unknownId, '--select', 'f1', '--as', ' '],
    usage,
    '--as: give a name',
  ),
  ...['abc', '70000', '-1', '1.5', '', '0x50'].map((value) =>
    row(
      `serve --port ${JSON.stringify(value)}`,
      ['serve', '--port', value],
      usage,
      '--port must be a port number',
    ),
  ),
  row('serve --host empty', ['serve', '--port', '0', '--host', ' '], usage, '--host must name an interface'),
  row(
    'serve on 0.0.0.0 without a token',
    ['serve', '--port', '0', '--host', '0.0.0.0'],
    usage,
    '--host 0.0.0.0 reaches beyond this machine',
    'OPFLOW_SERVE_TOKEN',
  ),
  row(
    'serve on :: without a token',
    ['serve', '--port', '0', '--host', '::'],
    usage,
    '--host :: reaches beyond this machine',
  ),
  row(
    'serve on a LAN address without a token',
    ['serve', '--port', '0', '--host', '192.168.1.20'],
    usage,
    '--host 192.168.1.20',
  ),
  row(
    'serve on the aws backend',
    ['--backend', 'aws', 'serve'],
    usage,
    'opflow serve runs jobs on the local backend',
  ),
];
