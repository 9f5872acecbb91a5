/** The job API over HTTP (`opflow serve`'s server): bodies, headers, paths and query strings. */
import type { HttpRow } from './types';

const post = (
  name: string,
  body: HttpRow['body'],
  status: number,
  ...names: (string | RegExp)[]
): HttpRow => ({
  name,
  method: 'POST',
  path: '/jobs',
  body,
  status,
  names,
});
const ok = { workflow: 'patent-count', input: { query: 'TTL:(hinge)' } };

/** Per workflow, an input that breaks its schema and the field the message names. */
const inputs: [string, unknown, string][] = [
  ['novelty-check', {}, 'text'],
  ['novelty-check', { text: 1 }, 'text'],
  ['novelty-check', { text: 'x', pbdStart: '2020-13-45' }, 'pbdStart'],
  ['novelty-check', { text: 'x', pbdEnd: '20200230' }, 'pbdEnd'],
  ['novelty-check', { text: 'x', lang: 'fr' }, 'lang'],
  ['technical-disclosure', { text: '' }, 'text'],
  ['find-solution', { problem: 'x'.repeat(600) }, 'problem'],
  ['materials-find-solution', { problem: 3 }, 'problem'],
  ['pre-research-report', { question: '' }, 'question'],
  ['encyclopedia-qa', { question: null }, 'question'],
  ['llm-chat', { model: 'x', query: 'q' }, 'model'],
  ['patent-count', { query: 'x'.repeat(1600) }, 'query'],
  ['patent-count', 'TTL:(hinge)', 'input'],
  ['fto', { text: 'x', markets: ['E1'] }, 'markets'],
  ['fto', { text: 'x', apdEnd: 'last year' }, 'apdEnd'],
  ['fto', { text: 'x', excludeCompanies: [''] }, 'excludeCompanies'],
  ['patent-count', [], 'input'],
  ['technical-qa', { question: '' }, 'question'],
  ['technical-qa', { text: 'x', sources: ['patent', 'tv'] }, 'sources'],
  ['technical-qa', { text: 'x', lang: 'fr' }, 'lang'],
  ['specification-drafting', { text: 'x', title: 'T', claims: '' }, 'claims'],
  ['feasibility-analysis', { text: 'x', logo: 'yes' }, 'logo'],
  ['translation', { text: 'x', source: 'en', target: 'en' }, 'target'],
  ['translation', { text: 'x', engine: 'deepl' }, 'engine'],
  [
    'specification-drafting',
    { disclosure: 'x', title: 'T', claims: '1. A latch.', category: 'Gadget' },
    'category',
  ],
];

const badPaths: [string, string, number, string | RegExp][] = [
  ['GET', '/jobs/not%20an%20id', 400, 'path.id'],
  ['GET', `/jobs/${'a'.repeat(65)}`, 400, 'path.id'],
  ['GET', '/jobs/%E0%A4%A', 400, 'not valid URL encoding'],
  ['GET', '/jobs/01J00000000000000000000000', 404, 'no job 01J00000000000000000000000'],
  ['POST', '/jobs/01J00000000000000000000000/cancel', 404, 'no job'],
  ['POST', '/jobs/bad.id/cancel', 400, 'path.id'],
  ['GET', '/jobs/01J00000000000000000000000/report', 404, 'no job'],
  ['GET', '/nowhere', 404, 'no route /nowhere'],
  ['GET', '/jobs/{job}/nothing', 404, 'no route'],
  ['DELETE', '/jobs', 405, 'DELETE /jobs is not supported'],
  ['PUT', '/jobs/{job}', 405, 'PUT'],
  ['PATCH', '/jobs/{job}/cancel', 405, 'use POST'],
  ['GET', '/jobs/{job}/cancel', 405, 'use POST'],
  ['POST', '/jobs/{job}/report/report.md', 405, 'use GET'],
  ['GET', '/jobs/{job}/report', 409, 'has no report: it is QUEUED'],
  ['GET', '/jobs/{job}/report/report.md', 409, 'has no report'],
  ['GET', '/jobs/{succeeded}/report/..%2F..%2Fopflow.db', 404, 'has no report file'],
  ['GET', '/jobs/{succeeded}/report/steps%2Fx.json', 404, 'has no report file'],
  ['GET', '/jobs/{succeeded}/report/nothing.md', 404, 'has no report file nothing.md'],
  ['GET', '/jobs/{succeeded}/report?file=../x', 400, 'query.file'],
  ['GET', '/jobs/{succeeded}/report?file=nothing.md', 404, 'no report file nothing.md'],
  ['GET', '/jobs/{succeeded}/report?other=1', 400, 'query'],
  ['POST', '/jobs/{job}/selection', 409, /job .* is not waiting|not awaiting|has no selection/i],
  ['POST', '/jobs/{succeeded}/cancel', 409, /finished|SUCCEEDED/],
];

const badQueries: [string, string][] = [
  ['status=DONE', 'query.status'],
  ['status=', 'query.status'],
  ['limit=0', 'query.limit'],
  ['limit=1001', 'query.limit'],
  ['limit=abc', 'query.limit'],
  ['limit=1.5', 'query.limit'],
  ['limit=1&limit=2', 'query.limit'],
  ['cursor=%25%25%25', 'query.cursor'],
  ['cursor=', 'query.cursor'],
  ['colour=red', 'query'],
  [`tenant=${'t'.repeat(65)}`, 'query.tenant'],
  // The same tenant name rule as every entry point, not only its length.
  ['tenant=a%20b', 'query.tenant: letters, digits, dot, dash and underscore only'],
  ['tenant=..%2Fx', 'query.tenant: letters, digits'],
  ['tenant=', 'query.tenant: the tenant name is empty'],
  ['tenant=%E2%80%AEevil', 'query.tenant'],
  [`batchId=${'b'.repeat(101)}`, 'query.batchId'],
];

export const jobApiRows: HttpRow[] = [
  post('an empty body', '', 400, 'body.workflow'),
  post('JSON that does not parse', '{"workflow": }', 400, 'the request body is not JSON'),
  post('JSON cut short', '{"workflow": "patent-count"', 400, 'not JSON'),
  post('a JSON array', [ok], 400, 'body'),
  post('a JSON string', '"patent-count"', 400, 'body'),
  post('JSON null', 'null', 400, 'body'),
  post('a number', '42', 400, 'body'),
  post('no workflow', { input: {} }, 400, 'body.workflow'),
  post('an empty workflow', { workflow: '', input: {} }, 400, 'workflow'),
  post('a workflow that is a number', { workflow: 5, input: {} }, 400, 'body.workflow'),
  post('an unknown workflow', { workflow: 'nope', input: {} }, 400, 'unknown workflow "nope"'),
  post(
    'a workflow misspelt',
    { workflow: 'patent-cont', input: {} },
    400,
    'unknown workflow "patent-cont" (did you mean patent-count?)',
  ),
  post('an unknown field', { ...ok, priority: 1 }, 400, 'priority'),
  post('no input', { workflow: 'patent-count' }, 400, 'input'),
  ...inputs.map(([workflow, input, field]) =>
    post(`${workflow} with input ${JSON.stringify(input).slice(0, 30)}`, { workflow, input }, 400, field),
  ),
  ...['a b', '../x', 't'.repeat(65), ''].map((tenant) =>
    post(`tenant ${JSON.stringify(tenant.slice(0, 10))}`, { ...ok, tenant }, 400, 'tenant'),
  ),
  post('tenant a number', { ...ok, tenant: 5 }, 400, 'tenant'),
  post('selection mode unknown', { ...ok, selection: { mode: 'ask' } }, 400, 'selection'),
  post('selection a string', { ...ok, selection: 'manual' }, 400, 'selection'),
  ...[0, -1, 1.5, 'soon', 9007199254740991, 366 * 86_400_000 + 1, 1e300].map((deadlineMs) =>
    post(`deadlineMs ${deadlineMs}`, { ...ok, deadlineMs }, 400, 'deadlineMs'),
  ),
  post('a label of 201 characters', { ...ok, label: 'l'.repeat(201) }, 400, 'label'),
  post('a label that is a list', { ...ok, label: ['x'] }, 400, 'label'),
  post('a batch id of 101 characters', { ...ok, batchId: 'b'.repeat(101) }, 400, 'batchId'),
  post('a source that is not one', { ...ok, source: 'email' }, 400, 'source'),
  // A job's cost cap origin is set by its schedule or webhook source only, never by a caller.
  post(
    'a costCap (a schedule or webhook source sets it)',
    { ...ok, costCap: { owner: 'schedule', name: 'nightly', maxUnitsPerDay: 1_000_000 } },
    400,
    'body.costCap: unknown field',
  ),
  {
    ...post('an Idempotency-Key with a space', ok, 400, 'header.Idempotency-Key'),
    headers: { 'idempotency-key': 'has space' },
  },
  {
    ...post('an Idempotency-Key of 201 characters', ok, 400, 'header.Idempotency-Key'),
    headers: { 'idempotency-key': 'k'.repeat(201) },
  },
  {
    ...post(
      'an Idempotency-Key reused for another request',
      { ...ok, input: { query: 'TTL:(other)' } },
      409,
      'idempotency key "bad-input-suite-key" was used for job',
    ),
    headers: { 'idempotency-key': 'bad-input-suite-key' },
  },
  post(
    'a body over the limit',
    { ...ok, label: 'x'.repeat(2 * 1024 * 1024) },
    413,
    'the request body is over 1 MiB (1048576 bytes)',
  ),
  post('a body that is not UTF-8', Buffer.from([0x7b, 0xff, 0xfe, 0x7d]), 400, 'not UTF-8'),
  {
    ...post('no Content-Type', JSON.stringify(ok), 415, 'header.Content-Type'),
    headers: { 'content-type': '' },
  },
  {
    ...post('Content-Type text/plain', JSON.stringify(ok), 415, 'header.Content-Type'),
    headers: { 'content-type': 'text/plain' },
  },
  {
    ...post('a form', 'workflow=patent-count', 415, 'header.Content-Type'),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  },
  {
    ...post('multipart', '--x--', 415, 'header.Content-Type'),
    headers: { 'content-type': 'multipart/form-data; boundary=x' },
  },
  { ...post('Origin: null', ok, 403, 'another origin'), headers: { origin: 'null' } },
  {
    ...post('Origin of another site', ok, 403, 'another origin'),
    headers: { origin: 'https://evil.example' },
  },
  {
    ...post(
      'a Host that is not this machine (DNS rebinding)',
      ok,
      421,
      'answers only requests addressed to localhost',
    ),
    headers: { host: 'evil.example' },
  },
  {
    name: 'cancel without Content-Type',
    method: 'POST',
    path: '/jobs/{job}/cancel',
    status: 415,
    names: ['header.Content-Type'],
  },
  {
    name: 'cancel from Origin: null',
    method: 'POST',
    path: '/jobs/{job}/cancel',
    headers: { origin: 'null' },
    body: {},
    status: 403,
    names: ['another origin'],
  },
  ...[
    ['not a list', { selected: 'f1' }],
    ['a list of numbers', { selected: [1] }],
    ['empty ids', { selected: [''] }],
    ['another field', { choose: ['f1'] }],
    ['too many ids', { selected: Array.from({ length: 1001 }, (_, i) => `f${i}`) }],
  ].map(
    ([name, body]): HttpRow => ({
      name: `selection ${name as string}`,
      method: 'POST',
      path: '/jobs/{job}/selection',
      body: body as object,
      status: 400,
      names: ['body'],
    }),
  ),
  ...badPaths.map(
    ([method, path, status, names]): HttpRow => ({
      name: `${method} ${path.slice(0, 60)}`,
      method,
      path,
      status,
      body: method === 'POST' ? (path.endsWith('/selection') ? { selected: ['f1'] } : {}) : undefined,
      names: [names],
    }),
  ),
  ...badQueries.map(
    ([query, names]): HttpRow => ({
      name: `GET /jobs?${query.slice(0, 40)}`,
      method: 'GET',
      path: `/jobs?${query}`,
      status: 400,
      names: [names],
    }),
  ),
];
