/**
 * The client against the sandbox, started in-process on a free port with its clock injected (so
 * hours of upstream work pass instantly): every catalogue operation with a valid body, both ways
 * of sending the key, the key and permission answers, and every fault the sandbox can inject.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  type CallUsage,
  createOpenPlatformClient,
  type HttpTransport,
  nodeHttpTransport,
  type OpenPlatformClient,
  type OpenPlatformClientOptions,
  OpenPlatformError,
  type RequestOf,
  type StreamOperationId,
} from '../../../shared/openplatform';
import {
  type FaultRule,
  SANDBOX_API_KEY,
  type Sandbox,
  startSandbox,
  streamVariants,
} from '../../../shared/sandbox';

const HOUR = 60 * 60 * 1000;
const NOVELTY_ONLY_KEY = 'key-novelty-only';
const QPS_KEY = 'key-one-per-second';
const QPS_429_KEY = 'key-one-per-second-429';
const QUOTA_KEY = 'key-quota-one';

let clock = Date.parse('2025-06-02T08:00:00Z');
let sandbox: Sandbox;
let client: OpenPlatformClient;
const usages: CallUsage[] = [];
const extraClients: OpenPlatformClient[] = [];

beforeAll(async () => {
  sandbox = await startSandbox({
    now: () => clock,
    seed: 11,
    streamChunkDelayMs: 0,
    keys: [
      { key: SANDBOX_API_KEY },
      { key: NOVELTY_ONLY_KEY, groups: ['Novelty Search'] },
      { key: QPS_KEY, qps: 1 },
      { key: QPS_429_KEY, qps: 1, qpsExceededAs: 'http-429' },
      { key: QUOTA_KEY, quota: 1 },
    ],
  });
  client = createOpenPlatformClient({
    baseUrl: sandbox.url,
    apiKey: SANDBOX_API_KEY,
    onUsage: (usage) => usages.push(usage),
    now: () => clock,
  });
});

afterAll(async () => {
  await client.close();
  await sandbox.close();
});

afterEach(async () => {
  sandbox.faults.clear();
  await Promise.all(extraClients.splice(0).map((extra) => extra.close()));
});

function clientWith(options: OpenPlatformClientOptions) {
  const extra = createOpenPlatformClient({ baseUrl: sandbox.url, apiKey: SANDBOX_API_KEY, ...options });
  extraClients.push(extra);
  return extra;
}

/** Let the sandbox's upstream work finish (its clock jumps; nothing sleeps). */
function workFinishes() {
  clock += 2 * HOUR;
}

async function failureOf(promise: Promise<unknown>): Promise<OpenPlatformError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(OpenPlatformError);
    return error as OpenPlatformError;
  }
  throw new Error('expected the call to fail');
}

function expectBilledSuccess(usage: CallUsage, operationId: string) {
  expect(usage).toMatchObject({ operationId, ok: true, httpStatus: 200 });
  expect(usage.correlationId).toMatch(/^[0-9a-f-]{36}$/);
  expect(usage.billedUnits).toBeGreaterThan(0);
}

const HEX_ID = /^[0-9a-f]{32}$/;
const nodeIdsIn = (value: unknown) =>
  [...JSON.stringify(value).matchAll(/"node_id":"([0-9a-f]{32})"/g)].map((m) => m[1] as string);

describe('novelty search (ai35-1 … ai35-12)', () => {
  const state: { taskId: string; elements?: unknown } = { taskId: '' };

  it('ai35-1 submits a task', async () => {
    const result = await client.call('ai35-1NoveltySearchSubmit', {
      input:
        'A folding bicycle frame with a magnetic hinge lock. The lock engages automatically when unfolded.',
      lang: 'en',
    });
    expect(result.data.task_id).toMatch(HEX_ID);
    expectBilledSuccess(result.usage, 'ai35-1NoveltySearchSubmit');
    state.taskId = result.data.task_id as string;
  });

  it('ai35-2 answers the summary once the work is done', async () => {
    const running = await client.call('ai35-2TechSolutionGet', { task_id: state.taskId });
    expect(running.data.status).toBe(1);
    workFinishes();
    const done = await client.call('ai35-2TechSolutionGet', { task_id: state.taskId });
    expect(done.data.status).toBe(2);
    expect(done.data.tech_solution).toContain('hinge');
  });

  it('ai35-3 confirms the summary', async () => {
    const result = await client.call('ai35-3TechSolutionUpdate', { task_id: state.taskId });
    expect(result.data.task_id).toBe(state.taskId);
  });

  it('ai35-4 extracts features', async () => {
    workFinishes();
    const result = await client.call('ai35-4FeatureExtract', { task_id: state.taskId });
    expect(result.data.status).toBe(2);
    expect(JSON.stringify(result.data)).toContain('feature_text');
  });

  it('ai35-5 confirms the features', async () => {
    const result = await client.call('ai35-5FeatureConfirm', { task_id: state.taskId });
    expect(result.data.task_id).toBe(state.taskId);
  });

  it('ai35-6 answers search elements', async () => {
    workFinishes();
    const result = await client.call('ai35-6RetrievalElements', { task_id: state.taskId });
    expect(result.data.status).toBe(2);
    expect(result.data.elements?.list?.length).toBeGreaterThan(0);
    state.elements = result.data.elements;
  });

  it('ai35-7 starts the agent search with the elements', async () => {
    const result = await client.call('ai35-7NoveltySearchAgentSearch', {
      task_id: state.taskId,
      elements: state.elements as RequestOf<'ai35-7NoveltySearchAgentSearch'>['elements'],
    });
    expect(result.data.task_id).toBe(state.taskId);
  });

  it('ai35-8 answers the agent result', async () => {
    workFinishes();
    const result = await client.call('ai35-8NoveltySearchAgentResult', { task_id: state.taskId });
    expect(result.data.task_status).toBe('success');
    expect(result.data.final_result?.length).toBeGreaterThan(0);
  });

  it('ai35-9 confirms the comparison', async () => {
    const result = await client.call('ai35-9ComparisonConfirm', { task_id: state.taskId });
    expect(result.data.task_id).toBe(state.taskId);
  });

  it('ai35-10 exports the report', async () => {
    const result = await client.call('ai35-10NoveltySearchExport', {
      task_id: state.taskId,
      title: 'Hinge lock',
    });
    expect(result.data.task_id).toBe(state.taskId);
  });

  it('ai35-11 answers a report link whose PDF can be fetched', async () => {
    workFinishes();
    const result = await client.call('ai35-11ReportGet', { task_id: state.taskId });
    expect(result.data.status).toBe(2);
    const document = await client.fetchDocument(result.data.report_url as string);
    expect(document.contentType).toBe('application/pdf');
    expect(Buffer.from(document.body.subarray(0, 5)).toString()).toBe('%PDF-');
    expect(document.fileName).toMatch(/^novelty-report-.*\.pdf$/);
  });

  it('ai35-12 compares a given patent with given features', async () => {
    const result = await client.call('ai35-12ComparisonGenerate', {
      request: { pn: 'US1234567B2' },
      tech_features: [{ feature_text: 'a magnetic hinge lock', selected: true }],
    });
    expect(JSON.stringify(result.data)).toContain('US1234567B2');
  });
});

describe('find-solution (ai33-1 … ai33-6)', () => {
  const state = { taskId: '' };

  it('ai33-1 creates a task', async () => {
    const result = await client.call('ai33-1Step1V3', {
      lang: 'en',
      solution_issues: 'Battery packs overheat during fast charging in hot climates.',
    });
    expect(result.data.task_id).toMatch(HEX_ID);
    state.taskId = result.data.task_id as string;
  });

  it('ai33-2 answers recommendations', async () => {
    workFinishes();
    const result = await client.call('ai33-2Step2V3', { task_id: state.taskId });
    expect(result.data.status).toBe('SUCCEED');
    expect(result.data.recommend?.length).toBeGreaterThanOrEqual(3);
  });

  it('ai33-3 submits the recommendations', async () => {
    const result = await client.call('ai33-3Step3SubmitV3', { task_id: state.taskId, lang: 'en' });
    expect(result.data.task_id).toBe(state.taskId);
  });

  it('ai33-4 answers directions', async () => {
    workFinishes();
    const result = await client.call('ai33-4Step3QueryV3', { task_id: state.taskId });
    expect(result.data.status).toBe('SUCCEED');
    expect(result.data.directions?.length).toBeGreaterThan(0);
  });

  it('ai33-5 submits the ticked directions', async () => {
    const result = await client.call('ai33-5Step4V3', { task_id: state.taskId, lang: 'en' });
    expect(result.data.task_id).toBe(state.taskId);
  });

  it('ai33-6 answers the solution mind map', async () => {
    workFinishes();
    const result = await client.call('ai33-6Step5V3', { task_id: state.taskId });
    expect(result.data.status).toBe('SUCCEED');
    expect(nodeIdsIn(result.data.solution).length).toBeGreaterThan(1);
  });
});

describe('materials find-solution (ai73-1 … ai73-9)', () => {
  const state = { taskId: '', boardId: '', nodeId: '' };
  const node = () => ({ task_id: state.taskId, board_id: state.boardId, node_id: state.nodeId });

  it('ai73-1 submits a problem', async () => {
    const result = await client.call('ai73-1FindSolutionSubmit', {
      input: 'Polymer coatings crack under repeated thermal cycling.',
      lang: 'en',
    });
    expect(result.data.task_id).toMatch(HEX_ID);
    state.taskId = result.data.task_id as string;
  });

  it('ai73-2 answers recommended solutions', async () => {
    workFinishes();
    const result = await client.call('ai73-2FindSolutionRecommend', { task_id: state.taskId });
    expect(result.data.status).toBe('SUCCEED');
    expect(result.data.recommend?.length).toBeGreaterThan(0);
  });

  it('ai73-3 confirms the recommendations', async () => {
    const result = await client.call('ai73-3FindSolutionConfirmRecommend', { task_id: state.taskId });
    expect(result.data.task_id).toBe(state.taskId);
  });

  it('ai73-4 answers the thinking with a board id', async () => {
    workFinishes();
    const result = await client.call('ai73-4FindSolutionThinking', { task_id: state.taskId });
    expect(result.data.status).toBe('SUCCEED');
    expect(result.data.board_id).toMatch(HEX_ID);
    state.boardId = result.data.board_id as string;
  });

  it('ai73-5 answers the mind map', async () => {
    const result = await client.call('ai73-5FindSolutionMind', { task_id: state.taskId });
    expect(result.data.status).toBe('SUCCEED');
    const ids = nodeIdsIn(result.data.solution);
    expect(ids.length).toBeGreaterThan(1);
    state.nodeId = ids.at(-1) as string;
  });

  it('ai73-6 pages through citations of a node', async () => {
    const result = await client.call('ai73-6FindSolutionCitationReferenceList', {
      ...node(),
      page: 1,
      limit: 5,
    });
    expect(result.data.records?.length).toBeLessThanOrEqual(5);
    expect(result.data.total).toBeGreaterThan(0);
  });

  it('ai73-7 answers a node reference', async () => {
    const result = await client.call('ai73-7FindSolutionNodeReference', node());
    expect(result.data.technical_principle?.length).toBeGreaterThan(0);
  });

  it('ai73-8 starts an implementation plan', async () => {
    const result = await client.call('ai73-8FindSolutionImplementation', node());
    expect(result.data.task_id).toBe(state.taskId);
  });

  it('ai73-9 answers the implementation plan', async () => {
    workFinishes();
    const result = await client.call('ai73-9FindSolutionImplementationResponse', node());
    expect(result.data.status).toBe('SUCCEED');
    expect(result.data.markdown_message).toContain('# Implementation plan');
  });
});

describe('technical disclosure (ai32-1 … ai32-3)', () => {
  const state = { jobId: '' };
  const idea =
    'A dishwasher that measures water hardness with a conductivity sensor. It doses softener salt to match. This saves salt and energy.';

  it('ai32-1 extracts the key elements', async () => {
    const result = await client.call('ai32-1PatentDisclosureTechMeans', { tech_solution: idea });
    expect(result.data.status).toBe('1');
    expect(result.data.mechanism).toBeTruthy();
  });

  it('ai32-2 starts generating the disclosure', async () => {
    const result = await client.call('ai32-2PatentDisclosureGenerate', {
      tech_solution: idea,
      mechanism: 'conductivity-based hardness measurement',
      language: 'en',
    });
    expect(result.data.job_id).toMatch(HEX_ID);
    state.jobId = result.data.job_id as string;
  });

  it('ai32-3 answers a download link to a .docx', async () => {
    workFinishes();
    const result = await client.call('ai32-3PatentDisclosureDownload', { job_id: state.jobId });
    expect(result.data.job_status).toBe(2);
    const document = await client.fetchDocument(result.data.download_url as string);
    expect(document.fileName).toMatch(/\.docx$/);
    expect(Buffer.from(document.body.subarray(0, 2)).toString()).toBe('PK');
  });
});

describe('pre-research report (ai34-1 … ai34-3)', () => {
  const state = { reportId: '', directory: [] as { key: string; name: string; source_type: string }[] };

  it('ai34-1 creates a report waiting for its directory', async () => {
    const result = await client.call('ai34-1QuickSearchReportCreation', {
      technical_issues: 'Solid-state electrolytes for lithium metal batteries',
      auto_directory: false,
    });
    expect(result.data.report_id).toMatch(/^[0-9a-f-]{36}$/);
    state.reportId = result.data.report_id as string;
    state.directory = (result.data.analysis_directory ?? []) as typeof state.directory;
    expect(state.directory.length).toBeGreaterThan(0);
  });

  it('ai34-2 supplies the directory', async () => {
    const result = await client.call('ai34-2CreationCustomDir', {
      report_id: state.reportId,
      technical_issues: 'Solid-state electrolytes for lithium metal batteries',
      analysis_directory: state.directory,
    });
    expect(result.data.report_id).toBe(state.reportId);
  });

  it('ai34-3 (the GET) answers the report link', async () => {
    workFinishes();
    const result = await client.call('ai34-3QuickSearchReportQuery', { report_id: state.reportId });
    expect(result.data.report_status).toBe('SUCCEED');
    const document = await client.fetchDocument(result.data.report_url as string);
    expect(document.contentType).toContain('text/html');
  });
});

describe('chat and count', () => {
  const streams: [StreamOperationId, RequestOf<StreamOperationId>][] = [
    ['ai07ChatCcGptStream', { prompt: 'What is a heat pipe?' }],
    ['ai50ChatPatGptStream', { query: 'Patents on heat pipes for laptops?' }],
    ['ai20ChatPharmGptStream', { query: 'Mechanism of action of metformin?' }],
  ];

  it.each(streams)('%s streams an answer with tokens', async (operationId, body) => {
    const pieces: string[] = [];
    const result = await client.stream(operationId, body, { onText: (delta) => pieces.push(delta) });
    expect(result.text.length).toBeGreaterThan(20);
    expect(pieces.join('')).toBe(result.text);
    expect(pieces.length).toBeGreaterThan(1);
    expect(result.tokens.total).toBeGreaterThan(0);
    expect(result.usage).toMatchObject({ operationId, ok: true, httpStatus: 200 });
  });

  it.each([
    ['ai07ChatCcGptStream', { prompt: 'What is a heat pipe?', stream: false }],
    ['ai50ChatPatGptStream', { query: 'Patents on heat pipes for laptops?', stream: false }],
  ] as const)('%s answers one envelope through call() with stream: false', async (operationId, body) => {
    const result = await client.call(operationId, body);
    expect(result.data.output?.status).toBe('finished');
    expect(result.data.output?.content?.length).toBeGreaterThan(20);
    const streamed = await client.stream(operationId, { ...body, stream: true });
    expect(streamed.text).toBe(result.data.output?.content);
  });

  const chat = { chatId: '', chatItemId: '' };

  it('ai68-1 creates an encyclopedia chat with reference documents', async () => {
    const result = await client.call('ai68-1ChatAiLsChat', {
      query: 'What is known about GLP-1 agonists and kidney function?',
      deep_search: false,
      long_think: false,
      search_website: false,
    });
    expect(result.data.ref_doc?.length).toBe(3);
    chat.chatId = result.data.chat_id as string;
    chat.chatItemId = result.data.chat_item_id as string;
  });

  it('ai68-2 streams the encyclopedia answer', async () => {
    const result = await client.stream('ai68-2ChatAiLsStream', {
      chat_id: chat.chatId,
      chat_item_id: chat.chatItemId,
    });
    expect(result.text.length).toBeGreaterThan(20);
    expect(result.ids).toMatchObject({ chat_id: chat.chatId, chat_item_id: chat.chatItemId });
  });

  it('p001 counts patents', async () => {
    const result = await client.call('p001PatentQuerySearchCount', {
      query_text: 'TACD:(heat pipe)',
      collapse_type: 'DOCDB',
    });
    expect(result.data.total_search_result_count).toBeGreaterThan(0);
  });

  it.each(streamVariants)('reads the %s frame variant to the same text', async (variant) => {
    const body = { prompt: 'Explain capillary action in heat pipes.' };
    const plain = await client.stream('ai07ChatCcGptStream', body);
    sandbox.faults.set([{ kind: 'stream-variant', streamVariant: variant, operation: 'ai07', times: 1 }]);
    const varied = await client.stream('ai07ChatCcGptStream', body);
    expect(varied.text).toBe(plain.text);
    expect(varied.tokens).toEqual(plain.tokens);
    // The OpenAI-like encodings announce a chunk id and finish with finish_reason "stop".
    const openAiLike = variant.startsWith('openai');
    expect(varied.ids['id'] !== undefined).toBe(openAiLike);
    expect(varied.finishReason).toBe(openAiLike ? 'stop' : plain.finishReason);
  });
});

describe('authentication and permissions', () => {
  it('accepts the key as apikey= as well, also beside the query of the GET operation', async () => {
    const byQuery = clientWith({ auth: 'query' });
    const result = await byQuery.call('p001PatentQuerySearchCount', { query_text: 'TTL:(hinge)' });
    expect(result.data.total_search_result_count).toBeGreaterThan(0);
    const report = await byQuery.call('ai34-1QuickSearchReportCreation', { technical_issues: 'Heat pipes' });
    const query = await byQuery.call('ai34-3QuickSearchReportQuery', {
      report_id: report.data.report_id as string,
    });
    expect(query.data.report_status).toBe('RUNNING');
    const streamed = await byQuery.stream('ai50ChatPatGptStream', { query: 'Heat pipe patents?' });
    expect(streamed.text.length).toBeGreaterThan(20);
  });

  it('answers an unknown key with 401 (auth, 67200202)', async () => {
    const error = await failureOf(
      client.call(
        'p001PatentQuerySearchCount',
        { query_text: 'TTL:(hinge)' },
        { apiKey: 'not-a-sandbox-key' },
      ),
    );
    expect(error).toMatchObject({ kind: 'auth', httpStatus: 401, code: 67200202, retryable: false });
  });

  it('answers a request that lost its key on the way with 401 (auth, 67200008)', async () => {
    // A proxy that drops the Authorization header: the client itself never sends a call without a key.
    const inner = nodeHttpTransport({ connections: 1, connectTimeoutMs: 10_000 });
    const stripping: HttpTransport = {
      request: (options) => {
        const { authorization: _dropped, ...headers } = options.headers;
        return inner.request({ ...options, headers });
      },
      close: () => inner.close(),
    };
    const error = await failureOf(
      clientWith({ transport: stripping }).call('p001PatentQuerySearchCount', { query_text: 'TTL:(hinge)' }),
    );
    expect(error).toMatchObject({ kind: 'auth', httpStatus: 401, code: 67200008 });
    await stripping.close();
  });

  it('answers a key without the operation group with 403 (forbidden, 67200004)', async () => {
    const error = await failureOf(
      client.call('p001PatentQuerySearchCount', { query_text: 'TTL:(hinge)' }, { apiKey: NOVELTY_ONLY_KEY }),
    );
    expect(error).toMatchObject({ kind: 'forbidden', httpStatus: 403, code: 67200004, retryable: false });
    const allowed = await client.call(
      'ai35-12ComparisonGenerate',
      { request: { pn: 'EP1' }, tech_features: [] },
      {
        apiKey: NOVELTY_ONLY_KEY,
      },
    );
    expect(allowed.usage.ok).toBe(true);
  });

  it('never sends an invalid body: the sandbox sees no call', async () => {
    const before = sandbox.ledger.count();
    const error = await failureOf(client.call('p001PatentQuerySearchCount', { query_text: '' }));
    expect(error.kind).toBe('invalid-request');
    expect(sandbox.ledger.count()).toBe(before);
  });
});

describe('limits', () => {
  const count = (apiKey: string) =>
    client.call('p001PatentQuerySearchCount', { query_text: 'TTL:(hinge)' }, { apiKey });

  it('maps calls over the key QPS to throttled (67200002 in a 200, or a 429)', async () => {
    await count(QPS_KEY);
    expect(await failureOf(count(QPS_KEY))).toMatchObject({
      kind: 'throttled',
      httpStatus: 200,
      code: 67200002,
      retryable: true,
    });
    await count(QPS_429_KEY);
    expect(await failureOf(count(QPS_429_KEY))).toMatchObject({
      kind: 'throttled',
      httpStatus: 429,
      retryable: true,
    });
    clock += 1_500;
    await expect(count(QPS_KEY)).resolves.toBeDefined();
  });

  it('maps an exhausted quota to quota-exhausted (67200001), not retryable', async () => {
    await count(QUOTA_KEY);
    expect(await failureOf(count(QUOTA_KEY))).toMatchObject({
      kind: 'quota-exhausted',
      code: 67200001,
      retryable: false,
    });
  });
});

describe('injected faults', () => {
  const submit = () =>
    client.call('ai35-1NoveltySearchSubmit', { input: 'A self-locking hinge.', lang: 'en' });
  const count = () => client.call('p001PatentQuerySearchCount', { query_text: 'TTL:(hinge)' });
  const inject = (rule: FaultRule) => sandbox.faults.set([{ times: 1, ...rule }]);

  it('throttling as HTTP 429 with Retry-After', async () => {
    inject({ kind: 'throttle-429', operation: 'p001', retryAfterSeconds: 3 });
    expect(await failureOf(count())).toMatchObject({
      kind: 'throttled',
      httpStatus: 429,
      code: 67200002,
      retryAfterMs: 3000,
      retryable: true,
    });
  });

  it('throttling as 67200002 in a 200', async () => {
    inject({ kind: 'throttle-200', operation: 'p001' });
    expect(await failureOf(count())).toMatchObject({ kind: 'throttled', httpStatus: 200, code: 67200002 });
  });

  it('busy (68300008)', async () => {
    inject({ kind: 'busy', operation: 'ai35-1' });
    expect(await failureOf(submit())).toMatchObject({ kind: 'busy', code: 68300008, retryable: true });
  });

  it('a gateway 5xx', async () => {
    inject({ kind: 'http-5xx', operation: 'p001', httpStatus: 502 });
    const error = await failureOf(count());
    expect(error).toMatchObject({ kind: 'server', httpStatus: 502, retryable: true });
  });

  it('a connection reset: retryable for a read, not for a create', async () => {
    inject({ kind: 'reset', operation: 'ai35-1', when: 'after' });
    expect(await failureOf(submit())).toMatchObject({ kind: 'network', retryable: false });
    inject({ kind: 'reset', operation: 'p001' });
    expect(await failureOf(count())).toMatchObject({ kind: 'network', retryable: true });
  });

  it('a truncated body', async () => {
    inject({ kind: 'truncated', operation: 'ai35-1' });
    expect(await failureOf(submit())).toMatchObject({ kind: 'protocol', httpStatus: 200, retryable: false });
  });

  it('a malformed body', async () => {
    inject({ kind: 'malformed', operation: 'p001' });
    expect(await failureOf(count())).toMatchObject({ kind: 'protocol', httpStatus: 200 });
  });

  it('latency beyond the call time limit', async () => {
    inject({ kind: 'latency', operation: 'p001', minMs: 400, maxMs: 400 });
    expect(
      await failureOf(client.call('p001PatentQuerySearchCount', { query_text: 'x' }, { timeoutMs: 100 })),
    ).toMatchObject({
      kind: 'timeout',
      retryable: true,
    });
  });

  const chatBody = { prompt: 'Why do heat pipes fail?' };

  it('a stalled stream', async () => {
    inject({ kind: 'stall-stream', operation: 'ai07', afterChunks: 2 });
    const error = await failureOf(
      clientWith({ streamIdleTimeoutMs: 200 }).stream('ai07ChatCcGptStream', chatBody),
    );
    expect(error).toMatchObject({ kind: 'timeout', retryable: false });
  });

  it('a stream that ends early', async () => {
    inject({ kind: 'early-end-stream', operation: 'ai07', afterChunks: 2 });
    const error = await failureOf(client.stream('ai07ChatCcGptStream', chatBody));
    expect(error.kind).toBe('protocol');
    expect(error.message).toContain('stream ended before finishing');
  });

  it('a stream with a cut frame', async () => {
    inject({ kind: 'truncated', operation: 'ai07', afterChunks: 2 });
    expect((await failureOf(client.stream('ai07ChatCcGptStream', chatBody))).kind).toBe('protocol');
  });

  it('a stream with a frame that is not JSON', async () => {
    inject({ kind: 'malformed', operation: 'ai07', afterChunks: 1 });
    const error = await failureOf(client.stream('ai07ChatCcGptStream', chatBody));
    expect(error.kind).toBe('protocol');
    expect(error.message).toContain('not JSON');
  });

  it('a truncated download and an expired link', async () => {
    const job = await client.call('ai32-2PatentDisclosureGenerate', {
      tech_solution: 'A kettle that learns when you want tea.',
      mechanism: 'usage prediction',
      language: 'en',
    });
    workFinishes();
    const ready = await client.call('ai32-3PatentDisclosureDownload', { job_id: job.data.job_id as string });
    const url = ready.data.download_url as string;
    inject({ kind: 'truncated', operation: 'download' });
    expect((await failureOf(client.fetchDocument(url))).kind).toBe('protocol');
    clock += 4 * HOUR;
    const expired = await failureOf(client.fetchDocument(url));
    expect(expired).toMatchObject({ kind: 'not-found', httpStatus: 403 });
    expect(expired.message).toContain('expired');
  });
});

describe('download faults', () => {
  let url = '';

  beforeAll(async () => {
    const report = await client.call('ai34-1QuickSearchReportCreation', {
      technical_issues: 'Graphene heat spreaders',
    });
    workFinishes();
    const ready = await client.call('ai34-3QuickSearchReportQuery', {
      report_id: report.data.report_id as string,
    });
    url = ready.data.report_url as string;
  });

  it.each([
    [
      { kind: 'throttle-429', retryAfterSeconds: 2 },
      { kind: 'throttled', httpStatus: 429, retryAfterMs: 2000 },
    ],
    [
      { kind: 'http-5xx', httpStatus: 503 },
      { kind: 'server', httpStatus: 503, retryable: true },
    ],
    [{ kind: 'reset' }, { kind: 'network', retryable: true }],
  ] as const)('maps %j on a download link', async (rule, expected) => {
    sandbox.faults.set([{ ...rule, operation: 'download', times: 1 } as FaultRule]);
    expect(await failureOf(client.fetchDocument(url))).toMatchObject(expected);
    const document = await client.fetchDocument(url);
    expect(document.body.byteLength).toBeGreaterThan(0);
  });
});

describe('usage accounting against the sandbox', () => {
  it('reports for every answered call the correlation id and billed units the sandbox recorded', () => {
    const ledger = new Map(sandbox.ledger.entries().map((entry) => [entry.correlationId, entry]));
    const answered = usages.filter((usage) => usage.correlationId !== undefined);
    expect(answered.length).toBeGreaterThan(39);
    for (const usage of answered) {
      const entry = ledger.get(usage.correlationId as string);
      expect(entry, usage.correlationId).toBeDefined();
      expect(usage.billedUnits, usage.operationId).toBe(entry?.billedUnits);
      expect(usage.httpStatus, usage.operationId).toBe(entry?.httpStatus);
    }
    expect(usages.some((usage) => !usage.ok && usage.errorKind === 'network')).toBe(true);
  });
});
