/**
 * Every answer the sandbox gives is shaped like the reference: it parses with the response schemas
 * of shared/openplatform, and uses no field those schemas do not define (the schemas are loose, so
 * a misspelt field would otherwise go unnoticed). One pass through every workflow collects them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findOperation, type OperationId, operationIds } from '../../../../shared/openplatform/catalogue';
import { responseDataSchemas } from '../../../../shared/openplatform/schemas/responses';
import { embodimentsOf } from '../../../../shared/workflows/specification-drafting/workflow';
import { dataFrames, startTestSandbox, type TestSandbox } from '../sandbox-harness';

/** Paths in `value` that `schema` does not define (a walk over zod 4's definitions). */
function undefinedFields(schema: unknown, value: unknown, path = 'data'): string[] {
  // biome-ignore lint/suspicious/noExplicitAny: walking zod's internal definitions.
  const def = (schema as any)._zod.def;
  switch (def.type) {
    case 'optional':
    case 'nullable':
    case 'default':
      return value === undefined || value === null ? [] : undefinedFields(def.innerType, value, path);
    case 'pipe':
      return undefinedFields(def.out, value, path);
    case 'array':
      return Array.isArray(value)
        ? value.flatMap((item, i) => undefinedFields(def.element, item, `${path}[${i}]`))
        : [];
    case 'object': {
      if (value === null || typeof value !== 'object') return [];
      return Object.entries(value).flatMap(([key, item]) =>
        key in def.shape ? undefinedFields(def.shape[key], item, `${path}.${key}`) : [`${path}.${key}`],
      );
    }
    default:
      return [];
  }
}

const collected = new Map<OperationId, unknown[]>();
let harness: TestSandbox;

const keep = (ref: string, data: unknown) => {
  const id = findOperation(ref)?.operationId as OperationId;
  collected.set(id, [...(collected.get(id) ?? []), data]);
  return data;
};
// biome-ignore lint/suspicious/noExplicitAny: loose JSON
const ok = async (ref: string, body: unknown): Promise<any> => keep(ref, await harness.ok(ref, body));
const streamed = async (ref: string, body: unknown, variant: string) => {
  const answer = await harness.call(ref, body, { headers: { 'x-sandbox-stream-variant': variant } });
  for (const frame of dataFrames(answer.text)) if (frame !== '[DONE]') keep(ref, JSON.parse(frame).data);
};

beforeAll(async () => {
  harness = await startTestSandbox({ defaultTaskDuration: { meanMs: 1_000, spreadMs: 0 } });
  const wait = () => harness.advance(1_000);
  const text =
    'A sunscreen with doped zinc oxide. The particles absorb UVA light. A silane coating keeps them dispersed.';

  await ok('p001', { query_text: 'TACD:(zinc oxide)' });
  await ok('p011', { patent_number: 'CN112345678A,US2019012345A1' });
  await ok('ai07', { prompt: 'Why?', stream: false });
  await ok('ai50', { query: 'Why?', stream: false });
  await streamed('ai07', { prompt: 'Why?' }, 'delta');
  await streamed('ai50', { query: 'Why?' }, 'cumulative');
  await streamed('ai20', { query: 'Why?' }, 'delta');
  const chat = await ok('ai68-1', {
    query: 'Why?',
    deep_search: false,
    long_think: false,
    search_website: false,
  });
  await streamed('ai68-2', { chat_id: chat.chat_id, chat_item_id: chat.chat_item_id }, 'openai-envelope');

  const fs = (await ok('ai33-1', { lang: 'en', solution_issues: text })).task_id;
  await ok('ai33-2', { task_id: fs });
  wait();
  await ok('ai33-2', { task_id: fs });
  await ok('ai33-3', { task_id: fs, lang: 'en' });
  wait();
  await ok('ai33-4', { task_id: fs });
  await ok('ai33-5', { task_id: fs, lang: 'en' });
  await ok('ai33-6', { task_id: fs });
  wait();
  await ok('ai33-6', { task_id: fs });

  const extraction = await ok('ai32-1', { tech_solution: text });
  const job = (await ok('ai32-2', { language: 'en', tech_solution: text, mechanism: extraction.mechanism }))
    .job_id;
  await ok('ai32-3', { job_id: job });
  wait();
  await ok('ai32-3', { job_id: job });

  const m = (await ok('ai73-1', { input: text, lang: 'en' })).task_id;
  wait();
  await ok('ai73-2', { task_id: m });
  await ok('ai73-3', { task_id: m });
  await ok('ai73-4', { task_id: m });
  await ok('ai73-5', { task_id: m });
  wait();
  const { board_id } = await ok('ai73-4', { task_id: m });
  const mind = await ok('ai73-5', { task_id: m });
  const node_id = mind.solution.cells.find((cell: { shape: string }) => cell.shape === 'solution-node').data
    .node_id;
  await ok('ai73-6', { task_id: m, board_id, node_id });
  await ok('ai73-7', { task_id: m, board_id, node_id });
  await ok('ai73-8', { task_id: m, board_id, node_id });
  await ok('ai73-9', { task_id: m, board_id, node_id });
  wait();
  await ok('ai73-9', { task_id: m, board_id, node_id });

  const report = await ok('ai34-1', { technical_issues: text, auto_directory: false });
  await ok('ai34-2', {
    report_id: report.report_id,
    technical_issues: text,
    analysis_directory: report.analysis_directory,
  });
  await ok('ai34-3', { report_id: report.report_id });
  wait();
  await ok('ai34-3', { report_id: report.report_id });

  const n = (await ok('ai35-1', { input: text, lang: 'en' })).task_id;
  await ok('ai35-2', { task_id: n });
  wait();
  await ok('ai35-2', { task_id: n });
  await ok('ai35-3', { task_id: n });
  await ok('ai35-4', { task_id: n });
  wait();
  await ok('ai35-4', { task_id: n });
  await ok('ai35-5', { task_id: n });
  await ok('ai35-6', { task_id: n });
  wait();
  const { elements } = await ok('ai35-6', { task_id: n });
  await ok('ai35-7', { task_id: n, elements });
  await ok('ai35-8', { task_id: n });
  wait();
  await ok('ai35-8', { task_id: n });
  await ok('ai35-9', { task_id: n });
  await ok('ai35-10', { task_id: n, title: 'Report' });
  await ok('ai35-11', { task_id: n });
  wait();
  await ok('ai35-11', { task_id: n });
  await ok('ai35-12', {
    request: { pn: 'US10000000B2' },
    tech_features: [{ feature_text: 'doped zinc oxide' }],
  });

  const fto = (await ok('ai66-1', { input: text, lang: 'en', country: ['US', 'EP'], legal_status: [1, 2] }))
    .task_id;
  await ok('ai66-2', { task_id: fto });
  wait();
  const { features } = await ok('ai66-2', { task_id: fto });
  await ok('ai66-3', { task_id: fto, tech_features: features });
  await ok('ai66-4', { task_id: fto });
  await ok('ai66-5', { task_id: fto });
  wait();
  const { final_result } = await ok('ai66-5', { task_id: fto });
  await ok('ai66-8', { task_id: fto, pn: 'US10000000B2' });
  await ok('ai66-6', { task_id: fto, title: 'FTO', final_res: final_result.slice(0, 2) });
  await ok('ai66-7', { task_id: fto });
  wait();
  await ok('ai66-7', { task_id: fto });
  const qa = (
    await ok('ai36-1', { input: 'Which coatings keep zinc oxide particles dispersed?', lang: 'en' })
  ).task_id;
  await ok('ai36-2', { task_id: qa });
  wait();
  await ok('ai36-2', { task_id: qa });

  const found = final_result.map((patent: { patent_id: string }) => patent.patent_id).join(',');
  await ok('p041', { patent_id: found });
  await ok('p014', { patent_number: found });

  // Specification drafting (ai37), feasibility analysis (ai40), design infringement (ai39, ai67),
  // translation (ai61, t010).
  const spec = (
    await ok('ai37-1', {
      claim:
        '1. A sunscreen comprising doped zinc oxide particles.\n2. The sunscreen of claim 1, the particles coated with a silane.',
      disclosure: text,
    })
  ).task_id;
  await ok('ai37-2', { task_id: spec });
  for (let i = 0; i < 30; i++) wait();
  const outline = await ok('ai37-2', { task_id: spec });
  await ok('ai37-3', { task_id: spec, category: outline.category ?? '' });
  for (let i = 0; i < 30; i++) wait();
  const tree = await ok('ai37-3', { task_id: spec, category: outline.category ?? '' });
  const drafted = await ok('ai37-4', {
    task_id: spec,
    title: 'Sunscreen',
    category: outline.category ?? '',
    feature_tree: (tree.feature_tree ?? []).map((claim: { claim_features?: object[] }) => ({
      ...claim,
      claim_features: (claim.claim_features ?? []).map((feature) => ({ ...feature, feature_deleted: 0 })),
    })),
    terms: tree.terms ?? [],
    embodiments: embodimentsOf(outline),
  });
  await ok('ai37-5', { task_id: drafted.task_id || spec });
  for (let i = 0; i < 30; i++) wait();
  await ok('ai37-5', { task_id: drafted.task_id || spec });
  const feasibility = (await ok('ai40-1', { text, lang: 'en' })).task_id;
  await ok('ai40-2', { task_id: feasibility });
  for (let i = 0; i < 30; i++) wait();
  await ok('ai40-2', { task_id: feasibility });
  // Design infringement: a search by image (ai39) and one design against a product (ai67).
  const designSearch = (
    await ok('ai39-1', { url: 'https://example.com/ring.png', country: ['US', 'EU'], lang: 'en' })
  ).task_id;
  await ok('ai39-2', { task_id: designSearch });
  for (let i = 0; i < 30; i++) wait();
  await ok('ai39-2', { task_id: designSearch });
  const design1v1 = (
    await ok('ai67-1', { url: 'https://example.com/ring.png', patent_number: 'EU0040356240003S' })
  ).task_id;
  await ok('ai67-2', { task_id: design1v1 });
  for (let i = 0; i < 30; i++) wait();
  await ok('ai67-2', { task_id: design1v1 });
  await ok('ai61', { text, target_lang: 'CN' });
  await ok('t010', { content: text, sourceLanguageCode: 'en', targetLanguageCode: 'de', mode: 'fast' });
});
afterAll(() => harness.close());

describe('response shapes', () => {
  it('notices a field the schema does not define', () => {
    const misspelt = { status: 2, tech_solutoin: 'x', nested: { a: 1 } };
    expect(undefinedFields(responseDataSchemas['ai35-2TechSolutionGet'], misspelt)).toEqual([
      'data.tech_solutoin',
      'data.nested',
    ]);
    const deep = { final_result: [{ features: [{ scroe: 1 }] }] };
    expect(undefinedFields(responseDataSchemas['ai35-8NoveltySearchAgentResult'], deep)).toEqual([
      'data.final_result[0].features[0].scroe',
    ]);
  });

  it('answered every catalogue operation at least once', () => {
    expect(operationIds.filter((id) => !collected.has(id))).toEqual([]);
  });

  it.each(operationIds)('%s: parses with its response schema and uses only defined fields', (id) => {
    // OpenAI's own chunk fields are not in the reference's ai68-2 schema; they are expected there.
    // ai36-2's references come with the upper-case names of the reference's own example (TITLE,
    // LINK), which its schema lists in lower case; the client reads both.
    const allowed =
      id === 'ai68-2ChatAiLsStream'
        ? /^data\.(id|object|created|model)$/
        : id === 'ai36-2TechnicalQaReport'
          ? /^data\.message_response\.references\[\d+\]\.[A-Z_]+$/
          : /^$/;
    for (const data of collected.get(id) ?? []) {
      expect(responseDataSchemas[id].safeParse(data).success).toBe(true);
      expect(undefinedFields(responseDataSchemas[id], data).filter((path) => !allowed.test(path))).toEqual(
        [],
      );
    }
  });
});
