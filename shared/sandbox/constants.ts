/**
 * Fixed values of the sandbox: the well-known key, the business codes it answers with, default task
 * durations (close to what the real platform takes) and the units it bills per operation.
 */
import type { OperationId } from '../openplatform/catalogue';

/** The key the sandbox accepts by default. Public on purpose: it opens nothing but the sandbox. */
export const SANDBOX_API_KEY = 'sk-opflow-sandbox-0000000000000000';

/** The platform's business codes that the sandbox answers with. */
export const PlatformCode = {
  ok: 0,
  throttled: 67200002,
  quotaExhausted: 67200001,
  forbidden: 67200004,
  unknownKey: 67200202,
  missingKey: 67200008,
  /** The platform's "path not found"; the sandbox also uses it for unknown task/job/report/chat ids. */
  notFound: 67200101,
  invalidParameter: 68300004,
  busy: 68300008,
} as const;

export interface TaskDuration {
  /**
   * Typical time the work takes, in milliseconds of the sandbox clock: the mean (`uniform`,
   * `skewed`, the short mode of `bimodal`), the median (`lognormal`) or the least (`pareto`).
   */
  meanMs: number;
  /** Each task takes `meanMs ± spreadMs` (`uniform`, `skewed`; each mode of `bimodal`). */
  spreadMs: number;
  /**
   * The family of task times (task-times.ts): `uniform` (default), `skewed` (most tasks near
   * `meanMs - spreadMs`, a long tail to `meanMs + spreadMs`), `lognormal` (median `meanMs`,
   * `sigma`), `bimodal` (`longShare` of tasks take `longMs ± spreadMs`), `pareto` (heavy-tailed: at
   * least `meanMs`, tail index `alpha`).
   */
  shape?: 'uniform' | 'skewed' | 'lognormal' | 'bimodal' | 'pareto' | undefined;
  /** `lognormal`: the spread of the log of the time (default 1: a wide spread). */
  sigma?: number | undefined;
  /** `bimodal`: the long tasks' typical time. */
  longMs?: number | undefined;
  /** `bimodal`: the share of long tasks (default 0.2). */
  longShare?: number | undefined;
  /** `pareto`: the tail index (default 1.5; smaller is heavier). */
  alpha?: number | undefined;
  /** No task takes longer than this (before and after any slowdown). */
  maxMs?: number | undefined;
  /**
   * Slowing down under load: a task started while N others run (at this sandbox) takes
   * `1 + N * slowdownPerRunningTask` times its drawn time, at most `maxSlowdown` (default 3) times.
   */
  slowdownPerRunningTask?: number | undefined;
  maxSlowdown?: number | undefined;
}

const seconds = (meanS: number, spreadS: number): TaskDuration => ({
  meanMs: meanS * 1000,
  spreadMs: spreadS * 1000,
});

/** How long the work started by each operation takes, keyed by the operation that starts it. */
export const defaultTaskDurations: Readonly<Partial<Record<OperationId, TaskDuration>>> = {
  'ai33-1Step1V3': seconds(20, 10),
  'ai33-3Step3SubmitV3': seconds(60, 30),
  'ai33-5Step4V3': seconds(120, 60),
  'ai32-2PatentDisclosureGenerate': seconds(90, 30),
  'ai73-1FindSolutionSubmit': seconds(20, 10),
  'ai73-3FindSolutionConfirmRecommend': seconds(90, 30),
  'ai73-8FindSolutionImplementation': seconds(60, 20),
  'ai34-1QuickSearchReportCreation': seconds(180, 60),
  'ai34-2CreationCustomDir': seconds(180, 60),
  'ai35-1NoveltySearchSubmit': seconds(15, 5),
  'ai35-3TechSolutionUpdate': seconds(20, 10),
  'ai35-5FeatureConfirm': seconds(20, 10),
  'ai35-7NoveltySearchAgentSearch': seconds(300, 120),
  'ai35-10NoveltySearchExport': seconds(30, 10),
  'ai36-1TechnicalQaSubmit': seconds(90, 30),
  'ai37-1InitCnipa': seconds(60, 20),
  'ai37-4GenerateReportCnipa': seconds(120, 40),
  'ai40-1AiFeasibilityAnalysisCreation': seconds(150, 45),
  'ai39-1ImageSearchSubmit': seconds(90, 30),
  'ai67-1AiInfringementDetection1v1Creation': seconds(60, 20),
  'ai66-1FtoSubmit': seconds(20, 10),
  'ai66-4SearchAgent': seconds(360, 120),
  'ai66-6ReportCreate': seconds(40, 15),
};

/** For operations not in `defaultTaskDurations`. */
export const defaultTaskDuration: TaskDuration = seconds(10, 5);

/** Download links expire after three hours, as the platform's pages say. */
export const DEFAULT_LINK_TTL_MS = 3 * 60 * 60 * 1000;

export const DEFAULT_STREAM_CHUNK_DELAY_MS = 20;

/** Units billed (`x-openapi-amount`) for a successful call; 1 when not listed. */
export const billedUnitsByOperation: Readonly<Partial<Record<OperationId, number>>> = {
  'ai33-1Step1V3': 5,
  'ai33-3Step3SubmitV3': 5,
  'ai33-5Step4V3': 10,
  'ai32-1PatentDisclosureTechMeans': 2,
  'ai32-2PatentDisclosureGenerate': 10,
  'ai73-1FindSolutionSubmit': 5,
  'ai73-3FindSolutionConfirmRecommend': 10,
  'ai73-8FindSolutionImplementation': 5,
  'ai34-1QuickSearchReportCreation': 20,
  'ai34-2CreationCustomDir': 20,
  'ai35-1NoveltySearchSubmit': 5,
  'ai35-3TechSolutionUpdate': 2,
  'ai35-5FeatureConfirm': 2,
  'ai35-7NoveltySearchAgentSearch': 30,
  'ai35-10NoveltySearchExport': 5,
  'ai35-12ComparisonGenerate': 5,
  'ai68-1ChatAiLsChat': 2,
  'ai36-1TechnicalQaSubmit': 10,
  'ai37-1InitCnipa': 10,
  'ai37-3ExtractFeatureCnipa': 2,
  'ai37-4GenerateReportCnipa': 20,
  'ai40-1AiFeasibilityAnalysisCreation': 15,
  'ai39-1ImageSearchSubmit': 20,
  'ai67-1AiInfringementDetection1v1Creation': 10,
  ai61AiTranslation: 2,
  t010HiroTranslationTranslate: 3,
  'ai66-1FtoSubmit': 5,
  'ai66-3FeatureConfirm': 2,
  'ai66-4SearchAgent': 40,
  'ai66-6ReportCreate': 10,
  'ai66-8FeatureComparison': 5,
};

/** Request bodies larger than this are refused (the platform's inputs are at most tens of KB). */
export const MAX_BODY_BYTES = 2 * 1024 * 1024;
