/**
 * The operation catalogue: every Open Platform operation opflow can call, as one table.
 *
 * Each row comes from the platform's published OpenAPI description (operationId, method, path, tag
 * and declared request content type). `effect` is ours: it says whether repeating the call is
 * harmless (`read`), or may create or change something upstream (`create`, `update`), which decides
 * whether a network failure mid-call may be retried blindly. `stream` marks the event-stream
 * operations. The conformance test (test/unit/openplatform/conformance.test.ts) checks this table
 * against the reference file whenever that file is present.
 */
import { editDistance } from './edit-distance';

export type HttpMethod = 'GET' | 'POST';
export type RequestContentType = 'application/json' | 'text/event-stream' | '*/*' | 'none';
export type OperationEffect = 'create' | 'read' | 'update';

export interface OperationEntry {
  /** The platform's operationId, the key of every table in this folder. */
  readonly operationId: string;
  /** The short name the platform's documentation uses, e.g. `ai35-1`. */
  readonly ref: string;
  readonly method: HttpMethod;
  readonly path: string;
  /** The OpenAPI tag, which is also the permission group of an API key. */
  readonly group: string;
  /** As declared by the description (the streaming ones are a known defect: opflow sends JSON). */
  readonly requestContentType: RequestContentType;
  readonly effect: OperationEffect;
  readonly stream: boolean;
}

const row = (
  operationId: string,
  ref: string,
  method: HttpMethod,
  path: string,
  group: string,
  requestContentType: RequestContentType,
  effect: OperationEffect,
  stream = false,
): OperationEntry => ({ operationId, ref, method, path, group, requestContentType, effect, stream });

const LLM = 'Patsnap LLM';
const ENCYCLOPEDIA = 'Bio-Pharma Encyclopedia Q&A';
const FIND_SOLUTION = 'Tech Solution Exploration';
const DISCLOSURE = 'Technical Disclosure';
const MATERIALS = 'Tech Solution Exploration(Materials)';
const PRE_RESEARCH = 'Tech Pre-research Report';
const NOVELTY = 'Novelty Search';
const PATENT_SEARCH = 'Patent Data Search';
const PATENT_BASIC = 'Patent Basic Data';
const FTO = 'FTO Search';
const TECHNICAL_QA = 'Technical Q&A';
const SPECIFICATION = 'Specification Drafting';
const FEASIBILITY = 'Feasibility Analysis Assistant';
const DESIGN_SEARCH = 'Design Infringement Search';
const DESIGN_1V1 = 'Design Infringement 1v1';
const TRANSLATION = 'AI Translation';
const JSON_BODY = 'application/json';
const SSE = 'text/event-stream';

export const catalogue = {
  ai07ChatCcGptStream: row(
    'ai07ChatCcGptStream',
    'ai07',
    'POST',
    '/chat/cc-gpt-stream',
    LLM,
    SSE,
    'create',
    true,
  ),
  ai50ChatPatGptStream: row(
    'ai50ChatPatGptStream',
    'ai50',
    'POST',
    '/chat/pat-gpt-stream',
    LLM,
    SSE,
    'create',
    true,
  ),
  ai20ChatPharmGptStream: row(
    'ai20ChatPharmGptStream',
    'ai20',
    'POST',
    '/chat/pharm-gpt-stream',
    LLM,
    SSE,
    'create',
    true,
  ),
  'ai68-1ChatAiLsChat': row(
    'ai68-1ChatAiLsChat',
    'ai68-1',
    'POST',
    '/chat/ai-ls-chat',
    ENCYCLOPEDIA,
    '*/*',
    'create',
  ),
  'ai68-2ChatAiLsStream': row(
    'ai68-2ChatAiLsStream',
    'ai68-2',
    'POST',
    '/chat/ai-ls-stream',
    ENCYCLOPEDIA,
    SSE,
    'create',
    true,
  ),
  'ai33-1Step1V3': row(
    'ai33-1Step1V3',
    'ai33-1',
    'POST',
    '/ai/find-solution/step1/v3',
    FIND_SOLUTION,
    JSON_BODY,
    'create',
  ),
  'ai33-2Step2V3': row(
    'ai33-2Step2V3',
    'ai33-2',
    'POST',
    '/ai/find-solution/step2/v3',
    FIND_SOLUTION,
    JSON_BODY,
    'read',
  ),
  'ai33-3Step3SubmitV3': row(
    'ai33-3Step3SubmitV3',
    'ai33-3',
    'POST',
    '/ai/find-solution/step3-submit/v3',
    FIND_SOLUTION,
    JSON_BODY,
    'update',
  ),
  'ai33-4Step3QueryV3': row(
    'ai33-4Step3QueryV3',
    'ai33-4',
    'POST',
    '/ai/find-solution/step3-query/v3',
    FIND_SOLUTION,
    JSON_BODY,
    'read',
  ),
  'ai33-5Step4V3': row(
    'ai33-5Step4V3',
    'ai33-5',
    'POST',
    '/ai/find-solution/step4/v3',
    FIND_SOLUTION,
    JSON_BODY,
    'update',
  ),
  'ai33-6Step5V3': row(
    'ai33-6Step5V3',
    'ai33-6',
    'POST',
    '/ai/find-solution/step5/v3',
    FIND_SOLUTION,
    JSON_BODY,
    'read',
  ),
  'ai32-1PatentDisclosureTechMeans': row(
    'ai32-1PatentDisclosureTechMeans',
    'ai32-1',
    'POST',
    '/search/patent/patent-disclosure/tech-means',
    DISCLOSURE,
    JSON_BODY,
    'create',
  ),
  'ai32-2PatentDisclosureGenerate': row(
    'ai32-2PatentDisclosureGenerate',
    'ai32-2',
    'POST',
    '/search/patent/patent-disclosure/generate',
    DISCLOSURE,
    JSON_BODY,
    'create',
  ),
  'ai32-3PatentDisclosureDownload': row(
    'ai32-3PatentDisclosureDownload',
    'ai32-3',
    'POST',
    '/search/patent/patent-disclosure/download',
    DISCLOSURE,
    JSON_BODY,
    'read',
  ),
  'ai73-1FindSolutionSubmit': row(
    'ai73-1FindSolutionSubmit',
    'ai73-1',
    'POST',
    '/ai/material/find-solution/submit',
    MATERIALS,
    JSON_BODY,
    'create',
  ),
  'ai73-2FindSolutionRecommend': row(
    'ai73-2FindSolutionRecommend',
    'ai73-2',
    'POST',
    '/ai/material/find-solution/recommend',
    MATERIALS,
    JSON_BODY,
    'read',
  ),
  'ai73-3FindSolutionConfirmRecommend': row(
    'ai73-3FindSolutionConfirmRecommend',
    'ai73-3',
    'POST',
    '/ai/material/find-solution/confirm-recommend',
    MATERIALS,
    JSON_BODY,
    'update',
  ),
  'ai73-4FindSolutionThinking': row(
    'ai73-4FindSolutionThinking',
    'ai73-4',
    'POST',
    '/ai/material/find-solution/thinking',
    MATERIALS,
    JSON_BODY,
    'read',
  ),
  'ai73-5FindSolutionMind': row(
    'ai73-5FindSolutionMind',
    'ai73-5',
    'POST',
    '/ai/material/find-solution/mind',
    MATERIALS,
    JSON_BODY,
    'read',
  ),
  'ai73-6FindSolutionCitationReferenceList': row(
    'ai73-6FindSolutionCitationReferenceList',
    'ai73-6',
    'POST',
    '/ai/material/find-solution/citation-reference-list',
    MATERIALS,
    JSON_BODY,
    'read',
  ),
  'ai73-7FindSolutionNodeReference': row(
    'ai73-7FindSolutionNodeReference',
    'ai73-7',
    'POST',
    '/ai/material/find-solution/node-reference',
    MATERIALS,
    JSON_BODY,
    'read',
  ),
  'ai73-8FindSolutionImplementation': row(
    'ai73-8FindSolutionImplementation',
    'ai73-8',
    'POST',
    '/ai/material/find-solution/implementation',
    MATERIALS,
    JSON_BODY,
    'create',
  ),
  'ai73-9FindSolutionImplementationResponse': row(
    'ai73-9FindSolutionImplementationResponse',
    'ai73-9',
    'POST',
    '/ai/material/find-solution/implementation-response',
    MATERIALS,
    JSON_BODY,
    'read',
  ),
  'ai34-1QuickSearchReportCreation': row(
    'ai34-1QuickSearchReportCreation',
    'ai34-1',
    'POST',
    '/ai/quick-search-report/creation',
    PRE_RESEARCH,
    JSON_BODY,
    'create',
  ),
  'ai34-2CreationCustomDir': row(
    'ai34-2CreationCustomDir',
    'ai34-2',
    'POST',
    '/ai/quick-search-report/creation/custom-dir',
    PRE_RESEARCH,
    JSON_BODY,
    'create',
  ),
  'ai34-3QuickSearchReportQuery': row(
    'ai34-3QuickSearchReportQuery',
    'ai34-3',
    'GET',
    '/ai/quick-search-report/query',
    PRE_RESEARCH,
    'none',
    'read',
  ),
  'ai35-1NoveltySearchSubmit': row(
    'ai35-1NoveltySearchSubmit',
    'ai35-1',
    'POST',
    '/ai/novelty-search/submit',
    NOVELTY,
    JSON_BODY,
    'create',
  ),
  'ai35-2TechSolutionGet': row(
    'ai35-2TechSolutionGet',
    'ai35-2',
    'POST',
    '/ai/novelty-search/tech-solution/get',
    NOVELTY,
    JSON_BODY,
    'read',
  ),
  'ai35-3TechSolutionUpdate': row(
    'ai35-3TechSolutionUpdate',
    'ai35-3',
    'POST',
    '/ai/novelty-search/tech-solution/update',
    NOVELTY,
    JSON_BODY,
    'update',
  ),
  'ai35-4FeatureExtract': row(
    'ai35-4FeatureExtract',
    'ai35-4',
    'POST',
    '/ai/novelty-search/feature/extract',
    NOVELTY,
    JSON_BODY,
    'read',
  ),
  'ai35-5FeatureConfirm': row(
    'ai35-5FeatureConfirm',
    'ai35-5',
    'POST',
    '/ai/novelty-search/feature/confirm',
    NOVELTY,
    JSON_BODY,
    'update',
  ),
  'ai35-6RetrievalElements': row(
    'ai35-6RetrievalElements',
    'ai35-6',
    'POST',
    '/ai/novelty-search/retrieval/elements',
    NOVELTY,
    JSON_BODY,
    'read',
  ),
  'ai35-7NoveltySearchAgentSearch': row(
    'ai35-7NoveltySearchAgentSearch',
    'ai35-7',
    'POST',
    '/ai/novelty-search/agent-search',
    NOVELTY,
    JSON_BODY,
    'update',
  ),
  'ai35-8NoveltySearchAgentResult': row(
    'ai35-8NoveltySearchAgentResult',
    'ai35-8',
    'POST',
    '/ai/novelty-search/agent-result',
    NOVELTY,
    JSON_BODY,
    'read',
  ),
  'ai35-9ComparisonConfirm': row(
    'ai35-9ComparisonConfirm',
    'ai35-9',
    'POST',
    '/ai/novelty-search/feature/comparison/confirm',
    NOVELTY,
    JSON_BODY,
    'update',
  ),
  'ai35-10NoveltySearchExport': row(
    'ai35-10NoveltySearchExport',
    'ai35-10',
    'POST',
    '/ai/novelty-search/export',
    NOVELTY,
    JSON_BODY,
    'create',
  ),
  'ai35-11ReportGet': row(
    'ai35-11ReportGet',
    'ai35-11',
    'POST',
    '/ai/novelty-search/report/get',
    NOVELTY,
    JSON_BODY,
    'read',
  ),
  'ai35-12ComparisonGenerate': row(
    'ai35-12ComparisonGenerate',
    'ai35-12',
    'POST',
    '/ai/novelty-search/feature/comparison/generate',
    NOVELTY,
    JSON_BODY,
    'create',
  ),
  'ai36-1TechnicalQaSubmit': row(
    'ai36-1TechnicalQaSubmit',
    'ai36-1',
    'POST',
    '/ai/technical-qa/submit',
    TECHNICAL_QA,
    JSON_BODY,
    'create',
  ),
  'ai36-2TechnicalQaReport': row(
    'ai36-2TechnicalQaReport',
    'ai36-2',
    'POST',
    '/ai/technical-qa/report',
    TECHNICAL_QA,
    JSON_BODY,
    'read',
  ),
  'ai37-1InitCnipa': row(
    'ai37-1InitCnipa',
    'ai37-1',
    'POST',
    '/ai/specification/init/cnipa',
    SPECIFICATION,
    JSON_BODY,
    'create',
  ),
  'ai37-2InitResultCnipa': row(
    'ai37-2InitResultCnipa',
    'ai37-2',
    'POST',
    '/ai/specification/init-result/cnipa',
    SPECIFICATION,
    JSON_BODY,
    'read',
  ),
  'ai37-3ExtractFeatureCnipa': row(
    'ai37-3ExtractFeatureCnipa',
    'ai37-3',
    'POST',
    '/ai/specification/extract-feature/cnipa',
    SPECIFICATION,
    JSON_BODY,
    'read',
  ),
  'ai37-4GenerateReportCnipa': row(
    'ai37-4GenerateReportCnipa',
    'ai37-4',
    'POST',
    '/ai/specification/generate-report/cnipa',
    SPECIFICATION,
    JSON_BODY,
    'create',
  ),
  'ai37-5SpecificationDownloadReport': row(
    'ai37-5SpecificationDownloadReport',
    'ai37-5',
    'POST',
    '/ai/specification/download-report',
    SPECIFICATION,
    JSON_BODY,
    'read',
  ),
  'ai40-1AiFeasibilityAnalysisCreation': row(
    'ai40-1AiFeasibilityAnalysisCreation',
    'ai40-1',
    'POST',
    '/ai/feasibility-analysis-creation',
    FEASIBILITY,
    JSON_BODY,
    'create',
  ),
  'ai40-2AiFeasibilityAnalysisQuery': row(
    'ai40-2AiFeasibilityAnalysisQuery',
    'ai40-2',
    'POST',
    '/ai/feasibility-analysis-query',
    FEASIBILITY,
    JSON_BODY,
    'read',
  ),
  'ai39-1ImageSearchSubmit': row(
    'ai39-1ImageSearchSubmit',
    'ai39-1',
    'POST',
    '/ai/image-search/submit',
    DESIGN_SEARCH,
    JSON_BODY,
    'create',
  ),
  'ai39-2ImageSearchReport': row(
    'ai39-2ImageSearchReport',
    'ai39-2',
    'POST',
    '/ai/image-search/report',
    DESIGN_SEARCH,
    JSON_BODY,
    'read',
  ),
  'ai67-1AiInfringementDetection1v1Creation': row(
    'ai67-1AiInfringementDetection1v1Creation',
    'ai67-1',
    'POST',
    '/ai/infringement-detection-1v1-creation',
    DESIGN_1V1,
    JSON_BODY,
    'create',
  ),
  'ai67-2AiInfringementDetection1v1Query': row(
    'ai67-2AiInfringementDetection1v1Query',
    'ai67-2',
    'POST',
    '/ai/infringement-detection-1v1-query',
    DESIGN_1V1,
    JSON_BODY,
    'read',
  ),
  ai61AiTranslation: row(
    'ai61AiTranslation',
    'ai61',
    'POST',
    '/ai/translation',
    TRANSLATION,
    JSON_BODY,
    'create',
  ),
  t010HiroTranslationTranslate: row(
    't010HiroTranslationTranslate',
    't010',
    'POST',
    '/hiro_translation/translate',
    TRANSLATION,
    JSON_BODY,
    'create',
  ),
  'ai66-1FtoSubmit': row('ai66-1FtoSubmit', 'ai66-1', 'POST', '/ai/fto/submit', FTO, JSON_BODY, 'create'),
  'ai66-2FeatureExtract': row(
    'ai66-2FeatureExtract',
    'ai66-2',
    'POST',
    '/ai/fto/feature/extract',
    FTO,
    JSON_BODY,
    'read',
  ),
  'ai66-3FeatureConfirm': row(
    'ai66-3FeatureConfirm',
    'ai66-3',
    'POST',
    '/ai/fto/feature/confirm',
    FTO,
    JSON_BODY,
    'update',
  ),
  'ai66-4SearchAgent': row(
    'ai66-4SearchAgent',
    'ai66-4',
    'POST',
    '/ai/fto/search/agent',
    FTO,
    JSON_BODY,
    'create',
  ),
  'ai66-5AgentResult': row(
    'ai66-5AgentResult',
    'ai66-5',
    'POST',
    '/ai/fto/search/agent/result',
    FTO,
    JSON_BODY,
    'read',
  ),
  'ai66-6ReportCreate': row(
    'ai66-6ReportCreate',
    'ai66-6',
    'POST',
    '/ai/fto/report/create',
    FTO,
    JSON_BODY,
    'create',
  ),
  'ai66-7ReportGet': row('ai66-7ReportGet', 'ai66-7', 'POST', '/ai/fto/report/get', FTO, JSON_BODY, 'read'),
  'ai66-8FeatureComparison': row(
    'ai66-8FeatureComparison',
    'ai66-8',
    'POST',
    '/ai/fto/feature/comparison',
    FTO,
    JSON_BODY,
    'create',
  ),
  p001PatentQuerySearchCount: row(
    'p001PatentQuerySearchCount',
    'p001',
    'POST',
    '/search/patent/query-search-count',
    PATENT_SEARCH,
    JSON_BODY,
    'read',
  ),
  /** The novelty check's references' bibliographic data (publication number, title, assignee, dates). */
  p011BasicPatentDataSimpleBibliography: row(
    'p011BasicPatentDataSimpleBibliography',
    'p011',
    'GET',
    '/basic-patent-data/simple-bibliography',
    PATENT_BASIC,
    'none',
    'read',
  ),
  /** The cited patents' simple legal status (Active, Pending, Inactive...): novelty and FTO reports. */
  p041BasicPatentDataSimpleLegalStatus: row(
    'p041BasicPatentDataSimpleLegalStatus',
    'p041',
    'GET',
    '/basic-patent-data/simple-legal-status',
    PATENT_BASIC,
    'none',
    'read',
  ),
  /** The cited patents' families (members by authority): where an FTO patent reaches. */
  p014BasicPatentDataPatentFamily: row(
    'p014BasicPatentDataPatentFamily',
    'p014',
    'GET',
    '/basic-patent-data/patent-family',
    PATENT_BASIC,
    'none',
    'read',
  ),
} as const satisfies Record<string, OperationEntry>;

export type OperationId = keyof typeof catalogue;

export const operationIds = Object.keys(catalogue) as OperationId[];

/** Narrow an arbitrary string to a catalogue operation id. */
export function isOperationId(value: string): value is OperationId {
  return Object.hasOwn(catalogue, value);
}

/** Look up an operation by its id or its short documentation name (`ai35-1`). */
export function findOperation(idOrRef: string): OperationEntry | undefined {
  if (isOperationId(idOrRef)) return catalogue[idOrRef];
  return operationIds.map((id) => catalogue[id] as OperationEntry).find((entry) => entry.ref === idOrRef);
}

/**
 * Operation ids and short names close to `name` (a small edit distance, or one a prefix of the
 * other), best first, at most `limit` (default 5): the suggestions of an unknown-operation error.
 */
export function similarOperationNames(name: string, limit = 5): string[] {
  const wanted = name.trim().toLowerCase();
  const candidates = operationIds.flatMap((id) => [id, catalogue[id].ref]);
  return candidates
    .map((candidate) => {
      const lower = candidate.toLowerCase();
      const prefix =
        wanted.length >= 3 && (lower.startsWith(wanted) || wanted.startsWith(lower)) ? 0 : Infinity;
      return { candidate, score: Math.min(prefix, editDistance(wanted, lower)) };
    })
    .filter(({ candidate, score }) => score <= Math.max(2, Math.floor(candidate.length / 4)))
    .sort((a, b) => a.score - b.score || a.candidate.localeCompare(b.candidate))
    .slice(0, limit)
    .map(({ candidate }) => candidate);
}
