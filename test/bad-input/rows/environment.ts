/** Environment variables and configuration files (local and aws backends). */
import type { CliRow } from './types';

const usage = 2;
const environment = 5;

const env = (variable: string, value: string, args: string[] = ['list'], exit = environment): CliRow => ({
  name: `${variable}=${JSON.stringify(value.slice(0, 30))}`,
  args,
  env: { [variable]: value },
  exit,
  names: [variable],
});

/** The aws backend, configured well enough that only the variable under test is wrong. */
const awsBase = {
  OPFLOW_TABLE_NAME: 'opflow-jobs',
  OPFLOW_QUEUE_URL: 'http://127.0.0.1:9/000000000000/opflow-work',
  OPFLOW_BUCKET_NAME: 'opflow-reports',
  OPFLOW_API_KEY_SECRET_PREFIX: 'opflow/api-key/',
  AWS_REGION: 'us-east-1',
  AWS_ACCESS_KEY_ID: 'test',
  AWS_SECRET_ACCESS_KEY: 'test',
};
const aws = (
  name: string,
  extra: Record<string, string | undefined>,
  ...names: (string | RegExp)[]
): CliRow => {
  const merged: Record<string, string> = {};
  for (const [key, value] of Object.entries({ ...awsBase, ...extra }))
    if (value !== undefined) merged[key] = value;
  return { name: `aws: ${name}`, args: ['--backend', 'aws', 'list'], env: merged, exit: environment, names };
};

export const environmentRows: CliRow[] = [
  ...['0', '-1', 'abc', 'NaN', '1e9'].map((value) => env('OPFLOW_QPS', value)),
  ...['0', '257', '1.5', 'many'].map((value) => env('OPFLOW_CONCURRENCY', value)),
  ...['0.5', 'fast', '1e9'].map((value) => env('OPFLOW_SANDBOX_SPEED', value)),
  ...['ftp://example.com', 'not a url', 'file:///etc/passwd'].map((value) => env('OPFLOW_BASE_URL', value)),
  {
    ...env('OPFLOW_BASE_URL', 'gopher://eve:s3cret-in-url@example.com/'),
    never: ['s3cret-in-url'],
  },
  ...['short', 'has spaces in the middle of it', 'naïve-token-with-accent-0123'].map((value) => ({
    ...env('OPFLOW_SERVE_TOKEN', value, ['serve', '--port', '0'], usage),
    never: [value],
  })),
  {
    name: 'OPFLOW_DB naming a folder',
    args: ['list'],
    env: { OPFLOW_DB: '{dir}/dbfolder' },
    files: { dbfolder: { folder: true } },
    exit: environment,
    names: ['OPFLOW_DB', '{dir}/dbfolder is a folder', '{dir}/dbfolder/opflow.db'],
  },
  {
    name: '--db naming a folder',
    args: ['--db', '{dir}/dbfolder', 'list'],
    files: { dbfolder: { folder: true } },
    exit: usage,
    names: ['--db', 'is a folder'],
  },
  {
    name: '--db under a regular file',
    args: ['--db', '{dir}/plain/opflow.db', 'list'],
    files: { plain: 'a file' },
    exit: usage,
    names: ['--db', '{dir}/plain is a file'],
  },
  {
    name: 'OPFLOW_DB under a regular file, deeper',
    args: ['list'],
    env: { OPFLOW_DB: '{dir}/plain/a/b/opflow.db' },
    files: { plain: 'a file' },
    exit: environment,
    names: ['OPFLOW_DB', '{dir}/plain is a file'],
  },
  {
    name: '--db naming a FIFO',
    args: ['--db', '{dir}/db.fifo', 'list'],
    files: { 'db.fifo': { fifo: true } },
    exit: usage,
    names: ['--db', 'not a regular file'],
  },
  {
    name: '--out naming a file, before any call',
    args: ['--out', '{dir}/out.txt', 'run', 'patent-count', '{dir}/ok.json'],
    files: { 'out.txt': 'not a folder', 'ok.json': '{"query": "TTL:(hinge)"}' },
    exit: usage,
    names: ['--out', '{dir}/out.txt is a file, not a folder'],
  },
  {
    name: 'OPFLOW_OUT under a regular file, before any call',
    args: ['run', 'patent-count', '{dir}/ok.json'],
    env: { OPFLOW_OUT: '{dir}/out.txt/reports' },
    files: { 'out.txt': 'not a folder', 'ok.json': '{"query": "TTL:(hinge)"}' },
    exit: environment,
    names: ['OPFLOW_OUT', '{dir}/out.txt is a file'],
  },
  {
    name: '--out naming /dev/null',
    args: ['--out', '/dev/null', 'run', 'patent-count', '{dir}/ok.json'],
    files: { 'ok.json': '{"query": "TTL:(hinge)"}' },
    exit: usage,
    names: ['--out', '/dev/null is a file, not a folder'],
  },
  aws(
    'nothing configured',
    {
      OPFLOW_TABLE_NAME: undefined,
      OPFLOW_QUEUE_URL: undefined,
      OPFLOW_BUCKET_NAME: undefined,
      OPFLOW_API_KEY_SECRET_PREFIX: undefined,
    },
    'OPFLOW_TABLE_NAME',
    'OPFLOW_QUEUE_URL',
    'OPFLOW_BUCKET_NAME',
  ),
  aws('a queue URL that is not a URL', { OPFLOW_QUEUE_URL: 'opflow-work' }, 'OPFLOW_QUEUE_URL'),
  aws('a blank table name', { OPFLOW_TABLE_NAME: '   ' }, 'OPFLOW_TABLE_NAME: is not set'),
  aws(
    'a secret prefix with spaces',
    { OPFLOW_API_KEY_SECRET_PREFIX: 'my keys/' },
    'OPFLOW_API_KEY_SECRET_PREFIX',
  ),
  aws('an endpoint that is not a URL', { AWS_ENDPOINT_URL: 'localhost:4566' }, 'AWS_ENDPOINT_URL'),
  aws('a service endpoint that is not a URL', { AWS_ENDPOINT_URL_SQS: 'sqs' }, 'AWS_ENDPOINT_URL_SQS'),
  {
    ...aws('an endpoint with a password', { AWS_ENDPOINT_URL: 'ftp://u:endpoint-pw@x/' }, 'AWS_ENDPOINT_URL'),
    never: ['endpoint-pw'],
  },
  aws('a base URL that is not http', { OPFLOW_BASE_URL: 'ws://x' }, 'OPFLOW_BASE_URL'),
  aws('a negative qps', { OPFLOW_QPS: '-5' }, 'OPFLOW_QPS'),
  aws('a key cache of a week', { OPFLOW_KEY_CACHE_SECONDS: '604800' }, 'OPFLOW_KEY_CACHE_SECONDS'),
  aws('a fractional key cache', { OPFLOW_KEY_CACHE_SECONDS: '1.5' }, 'OPFLOW_KEY_CACHE_SECONDS'),
];

/** Configuration files: the CDK outputs file the aws backend reads its settings from. */
const outputs = (
  name: string,
  content: string | undefined,
  extra: Record<string, string> = {},
  ...names: (string | RegExp)[]
): CliRow => ({
  name: `stack outputs file: ${name}`,
  args: ['--backend', 'aws', 'list'],
  env: {
    OPFLOW_STACK_OUTPUTS: '{dir}/outputs.json',
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'test',
    AWS_SECRET_ACCESS_KEY: 'test',
    ...extra,
  },
  files: content === undefined ? {} : { 'outputs.json': content },
  exit: environment,
  names: ['OPFLOW_STACK_OUTPUTS', ...names],
});

export const configFileRows: CliRow[] = [
  outputs('missing', undefined, {}, '{dir}/outputs.json'),
  outputs('not JSON', '{"Opflow": ', {}, 'cannot read {dir}/outputs.json as JSON'),
  outputs('empty', '', {}, 'as JSON'),
  outputs('a list', '[1, 2]', {}, 'is not what cdk deploy --outputs-file writes'),
  outputs(
    'a stack that is not an object',
    '{"Opflow": 5}',
    {},
    'is not what cdk deploy --outputs-file writes',
  ),
  { ...outputs('two stacks, none named', '{"A": {}, "B": {}}'), names: ['OPFLOW_STACK_NAME', '2 stacks'] },
  {
    ...outputs('the named stack absent', '{"A": {}}', { OPFLOW_STACK_NAME: 'Prod' }),
    names: ['OPFLOW_STACK_NAME', 'no stack "Prod"'],
  },
  {
    ...outputs('a stack without the outputs', '{"A": {"Other": "x"}}'),
    names: ['OPFLOW_TABLE_NAME', 'nor TableName in {dir}/outputs.json'],
  },
  {
    ...outputs(
      'a queue URL output that is not a URL',
      '{"A": {"TableName": "t", "QueueUrl": "q", "BucketName": "b", "ApiKeySecretPrefix": "p/"}}',
    ),
    names: ['OPFLOW_QUEUE_URL'],
  },
  outputs('a folder', undefined, { OPFLOW_STACK_OUTPUTS: '{dir}' }, 'as JSON'),
];

/** The opflow config file (opflow.config.json, --config, OPFLOW_CONFIG): schedules and webhook sources. */
const config = (name: string, content: string, ...names: (string | RegExp)[]): CliRow => ({
  name: `opflow.config.json: ${name}`,
  args: ['schedules'],
  files: { 'opflow.config.json': content },
  exit: usage,
  names: ['opflow.config.json', ...names],
});
const schedule = (fields: Record<string, unknown>) =>
  JSON.stringify({
    schedules: [
      { name: 'daily', cron: '0 9 * * *', workflow: 'patent-count', input: { query: 'x' }, ...fields },
    ],
  });

configFileRows.push(
  config('cut short', '{"schedules": [', 'not valid JSON'),
  config('a list', '[]', 'expected object'),
  config('an unknown key', '{"colour": 1}', 'colour'),
  config('a schedule name with capitals', schedule({ name: 'Bad Name' }), 'schedules[0].name'),
  config('a cron that is not one', schedule({ cron: 'not cron' }), 'schedules[0].cron'),
  config(
    'an unknown time zone',
    schedule({ timezone: 'Mars/Olympus' }),
    'schedules[0].timezone',
    'Mars/Olympus',
  ),
  config('an unknown overlap policy', schedule({ overlap: 'queue' }), 'schedules[0].overlap'),
  config('a jitter that is not a duration', schedule({ jitter: 'a bit' }), 'schedules[0].jitter'),
  config('a bad tenant', schedule({ tenant: 'a b' }), 'schedules[0].tenant'),
  config('an unknown field in a schedule', schedule({ every: '1h' }), 'every'),
  config('a webhook source name with a space', '{"webhooks": {"Bad Source": {}}}', 'webhooks.Bad Source'),
  config(
    'a webhook mapping pointer without a slash',
    '{"webhooks": {"gh": {"input": {"$from": "no-slash"}}}}',
    'webhooks.gh.input.$from',
  ),
  config(
    'a webhook tolerance that is not a duration',
    '{"webhooks": {"gh": {"tolerance": "soon"}}}',
    'webhooks.gh.tolerance',
  ),
  config(
    'a webhook body limit of 0',
    '{"webhooks": {"gh": {"maxBodyBytes": 0}}}',
    'webhooks.gh.maxBodyBytes',
  ),
  {
    name: '--config naming a file that is not there',
    args: ['schedules', '--config', '{dir}/none.json'],
    exit: usage,
    names: ['{dir}/none.json: no such config file'],
  },
  {
    name: 'OPFLOW_CONFIG naming a file that is not there',
    args: ['schedules'],
    env: { OPFLOW_CONFIG: '{dir}/none.json' },
    exit: usage,
    names: ['{dir}/none.json'],
  },
);
