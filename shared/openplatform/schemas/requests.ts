/**
 * Request bodies of every catalogue operation, as zod schemas.
 *
 * Field names, types and required fields follow the platform's OpenAPI description. Limits and
 * enumerations that the description states only in prose (lengths, `cn`/`en`, collapse codes) are
 * written out here, so a bad body is refused before it is billed. Top-level objects are strict (a
 * misspelt field is an error); nested objects are loose because workflows echo upstream objects
 * back, and those may carry fields the description does not list.
 */
import * as z from 'zod';
import type { OperationId } from '../catalogue';
import { lazyRecord } from './lazy-record';

/*
 * The helpers below are `z.lazy`, built with the operations' schemas on first read (lazyRecord),
 * not at module load.
 */
const lang = z.lazy(() => z.enum(['cn', 'en']));

const techFeature = z.lazy(() =>
  z.looseObject({
    feature_elements: z.string().optional(),
    feature_function: z.string().optional(),
    feature_num: z.string().optional(),
    feature_text: z.string().optional(),
    feature_text_original: z.string().optional(),
    feature_weight: z.string().optional(),
    feature_weight_reason: z.string().optional(),
    selected: z.boolean().optional(),
    user_add: z.boolean().optional(),
  }),
);

/** Up to 100 patent ids or numbers, comma-separated (P011). */
const patentList = z.lazy(() =>
  z
    .string()
    .trim()
    .min(1)
    .refine((list) => list.split(',').length <= 100, { error: 'at most 100 patents, comma-separated' }),
);

const keyword = z.lazy(() => z.looseObject({ key: z.string().optional(), source: z.string().optional() }));

const analysisDirectoryItem = z.lazy(() =>
  z.looseObject({
    key: z.string(),
    name: z.string(),
    source_type: z.string(),
  }),
);

/** A claim of the feature tree of ai37-3, as ai37-4 takes it back (`feature_deleted` 1 drops a feature). */
const specificationClaim = z.lazy(() =>
  z.looseObject({
    num: z.string().optional(),
    parent: z.string().optional(),
    simple_claim: z.string().optional(),
    claim_features: z
      .array(
        z.looseObject({
          feature: z.string().optional(),
          concepts: z.array(z.string()).optional(),
          feature_deleted: z.number().int().min(0).max(1).optional(),
        }),
      )
      .optional(),
  }),
);

/** A term of ai37-3's list, as ai37-4 takes it back. */
const specificationTerm = z.lazy(() =>
  z.looseObject({
    name: z.string().min(1),
    unique_id: z.string().min(1),
    number: z.string().optional(),
    annotated: z.boolean().optional(),
  }),
);

/** An embodiment of ai37-2's outline, as ai37-4 takes it. */
const specificationEmbodiment = z.lazy(() =>
  z.looseObject({
    text: z.string().optional(),
    type: z.string().optional(),
    claim_numbers: z.array(z.number().int()).optional(),
    embodiment_number: z.number().int().optional(),
  }),
);

/** The languages of T010 (Hiro translation), as its codes. */
export const hiroLanguages = [
  'zh',
  'en',
  'ja',
  'ko',
  'de',
  'fr',
  'ru',
  'es',
  'pt',
  'it',
  'nl',
  'ar',
  'hi',
  'th',
  'vi',
  'id',
  'tr',
  'pl',
] as const;

/** An FTO feature as ai66-2 offers it and ai66-3 takes it back (`is_select` marks the chosen ones). */
const ftoFeature = z.lazy(() =>
  z.looseObject({
    core: z.boolean(),
    is_select: z.boolean(),
    keywords: z.array(z.string()),
    reason: z.string(),
    score: z.number().int(),
    tech_feature: z.string().min(1),
    user_add: z.boolean(),
  }),
);

/** A patent compared claim by claim, as ai66-5 finds it and ai66-6 takes it back. */
const ftoPatent = z.lazy(() =>
  z.looseObject({
    claim_equivalent_info: z
      .array(z.looseObject({ claim_num: z.number().int(), infringement: z.boolean() }))
      .optional(),
    claims: z
      .array(z.looseObject({ claim_num: z.number().int().optional(), claim_text: z.string().optional() }))
      .optional(),
    comparative_literature_type: z.string().optional(),
    comparison_conclusion: z.record(z.string(), z.unknown()),
    dependent_claim_num: z.number().int().optional(),
    document: z.string().optional(),
    equivalent_dependent_claim_num: z.number().int().optional(),
    equivalent_independent_claim_num: z.number().int().optional(),
    feature_match_num: z.number().int(),
    features: z.array(
      z.looseObject({
        claim_num: z.number().int().optional(),
        claim_type: z.string().optional(),
        compare_feature: z.string().optional(),
        comparison_feature: z.string().optional(),
        original_score: z.number().int().optional(),
        original_type: z.string().optional(),
        public_score: z.number().optional(),
        score: z.number().int(),
        score_for_user: z.number().int().optional(),
        similar: z.boolean().optional(),
        tech_feature: z.string(),
        type: z.string().optional(),
        type_for_user: z.string().optional(),
      }),
    ),
    independent_claim_num: z.number().int().optional(),
    lang: z.string().optional(),
    most_similar: z.boolean().optional(),
    patent_id: z.string().min(1),
    public_score: z.number(),
    risk_level: z.string().optional(),
    selected: z.boolean().optional(),
    user_added: z.boolean().optional(),
  }),
);

/** `YYYYMMDD`, as ai66-1 takes its application dates. */
const compactDate = z.lazy(() => z.string().regex(/^\d{8}$/, { error: 'a date is written YYYYMMDD' }));

/** The query of a Patent Basic Data operation (p011, p014, p041): patents by id or by number. */
const patentQuery = () =>
  z
    .strictObject({
      patent_id: patentList.optional(),
      patent_number: patentList.optional(),
    })
    .refine((query) => query.patent_id !== undefined || query.patent_number !== undefined, {
      error: 'give patent_id or patent_number (comma-separated, up to 100)',
    });

const buildRequestSchemas = () =>
  ({
    ai07ChatCcGptStream: z.strictObject({
      prompt: z.string().min(1).max(500),
      stream: z.boolean().optional(),
    }),
    'ai33-1Step1V3': z.strictObject({
      lang,
      solution_issues: z.string().min(1).max(500),
    }),
    ai50ChatPatGptStream: z.strictObject({
      query: z.string().min(1).max(30_000),
      stream: z.boolean().optional(),
    }),
    'ai68-1ChatAiLsChat': z.strictObject({
      data_source: z.number().int().min(1).max(8).optional(),
      deep_search: z.boolean(),
      long_think: z.boolean(),
      query: z.string().min(1),
      search_website: z.boolean(),
    }),
    'ai32-3PatentDisclosureDownload': z.strictObject({
      job_id: z.string().min(1),
    }),
    'ai33-2Step2V3': z.strictObject({
      task_id: z.string().min(1),
    }),
    'ai68-2ChatAiLsStream': z.strictObject({
      chat_id: z.string().min(1),
      chat_item_id: z.string().min(1),
    }),
    'ai32-2PatentDisclosureGenerate': z.strictObject({
      application: z.array(z.unknown()).optional(),
      background: z.string().optional(),
      embodiment: z.string().optional(),
      language: lang,
      mechanism: z.string(),
      others: z.string().optional(),
      outcome: z.string().optional(),
      subject_improvement: z.array(z.unknown()).optional(),
      tech_problem: z.string().optional(),
      tech_solution: z.string(),
    }),
    ai20ChatPharmGptStream: z.strictObject({
      query: z.string().min(1).max(16_000),
      session_id: z.string().optional(),
    }),
    'ai32-1PatentDisclosureTechMeans': z.strictObject({
      tech_solution: z
        .string()
        .min(1)
        .refine((text) => text.trim().split(/\s+/).length <= 5000, 'at most 5000 words'),
    }),
    'ai33-5Step4V3': z.strictObject({
      directions: z
        .array(
          z.looseObject({
            approaches: z.array(z.unknown()).optional(),
            reason: z.string().optional(),
            source_type: z.enum(['model', 'customize']).optional(),
            ticked: z.boolean().optional(),
            verification: z.string().optional(),
          }),
        )
        .optional(),
      lang,
      task_id: z.string().min(1),
    }),
    'ai33-4Step3QueryV3': z.strictObject({
      task_id: z.string().min(1),
    }),
    'ai33-3Step3SubmitV3': z.strictObject({
      lang,
      recommend: z.array(z.unknown()).optional(),
      task_id: z.string().min(1),
    }),
    'ai73-2FindSolutionRecommend': z.strictObject({
      task_id: z.string().min(1),
    }),
    'ai33-6Step5V3': z.strictObject({
      task_id: z.string().min(1),
    }),
    'ai73-3FindSolutionConfirmRecommend': z.strictObject({
      recommend: z.array(z.unknown()).optional(),
      task_id: z.string().min(1),
    }),
    'ai73-1FindSolutionSubmit': z.strictObject({
      input: z.string().min(1),
      lang,
    }),
    'ai73-6FindSolutionCitationReferenceList': z.strictObject({
      board_id: z.string().min(1),
      limit: z.number().int().positive().optional(),
      node_id: z.string().min(1),
      page: z.number().int().positive().optional(),
      task_id: z.string().min(1),
    }),
    'ai73-7FindSolutionNodeReference': z.strictObject({
      board_id: z.string().min(1),
      node_id: z.string().min(1),
      task_id: z.string().min(1),
    }),
    'ai73-4FindSolutionThinking': z.strictObject({
      task_id: z.string().min(1),
    }),
    'ai73-9FindSolutionImplementationResponse': z.strictObject({
      board_id: z.string().min(1),
      node_id: z.string().min(1),
      task_id: z.string().min(1),
    }),
    'ai73-5FindSolutionMind': z.strictObject({
      task_id: z.string().min(1),
    }),
    'ai73-8FindSolutionImplementation': z.strictObject({
      board_id: z.string().min(1),
      node_id: z.string().min(1),
      task_id: z.string().min(1),
    }),
    'ai34-2CreationCustomDir': z.strictObject({
      analysis_directory: z.array(analysisDirectoryItem).min(1),
      report_id: z.string().min(1),
      technical_issues: z.string(),
    }),
    'ai34-3QuickSearchReportQuery': z.strictObject({
      report_id: z.string().min(1),
    }),
    'ai35-1NoveltySearchSubmit': z.strictObject({
      input: z.string().min(1),
      lang: z.string(),
      pbd_end: z.string().optional(),
      pbd_start: z.string().optional(),
    }),
    'ai34-1QuickSearchReportCreation': z.strictObject({
      auto_directory: z.boolean().optional(),
      technical_issues: z.string(),
    }),
    'ai35-2TechSolutionGet': z.strictObject({
      task_id: z.string().min(1),
    }),
    'ai35-3TechSolutionUpdate': z.strictObject({
      task_id: z.string().min(1),
      tech_solution: z.string().optional(),
    }),
    'ai35-5FeatureConfirm': z.strictObject({
      task_id: z.string().min(1),
      tech_features: z.array(techFeature).optional(),
    }),
    'ai35-7NoveltySearchAgentSearch': z.strictObject({
      elements: z.looseObject({
        family_merge_enabled: z.boolean().optional(),
        list: z
          .array(
            z.looseObject({
              express: z
                .array(
                  z.looseObject({
                    extend: z.array(keyword).optional(),
                    ipc: z.array(keyword).optional(),
                    word: keyword.optional(),
                  }),
                )
                .optional(),
              feature_text_original: z.string().optional(),
              feature_type: z.enum(['topic_search', 'key_search', 'sup_search']).optional(),
              selected: z.boolean().optional(),
            }),
          )
          .optional(),
      }),
      task_id: z.string().min(1),
    }),
    'ai35-4FeatureExtract': z.strictObject({
      task_id: z.string().min(1),
    }),
    'ai35-6RetrievalElements': z.strictObject({
      task_id: z.string().min(1),
    }),
    'ai35-10NoveltySearchExport': z.strictObject({
      task_id: z.string().min(1),
      title: z.string(),
    }),
    'ai35-8NoveltySearchAgentResult': z.strictObject({
      task_id: z.string().min(1),
    }),
    'ai35-11ReportGet': z.strictObject({
      task_id: z.string().min(1),
    }),
    'ai35-9ComparisonConfirm': z
      .strictObject({
        final_result: z
          .array(
            z.looseObject({
              comparative_literature_category: z.string().optional(),
              comparative_literature_type: z.string().optional(),
              creativity_type: z.string().optional(),
              document: z.string().optional(),
              feature_match_num: z.number().int().optional(),
              features: z
                .array(
                  z.looseObject({
                    claim_num: z.number().int().optional(),
                    claim_type: z.string().optional(),
                    compare_feature: z.string().optional(),
                    comparison_feature: z.string().optional(),
                    differ: z.string().optional(),
                    differ_for_user: z.string().optional(),
                    original_differ: z.string().optional(),
                    original_reason: z.string().optional(),
                    original_score: z.number().int().optional(),
                    original_type: z.string().optional(),
                    public_score: z.number().optional(),
                    reason: z.string().optional(),
                    reason_for_user: z.string().optional(),
                    score: z.number().int().optional(),
                    score_for_user: z.number().int().optional(),
                    similar: z.boolean().optional(),
                    tech_feature: z.string().optional(),
                    type: z.string().optional(),
                    type_for_user: z.string().optional(),
                  }),
                )
                .optional(),
              lang: z.string().optional(),
              most_similar: z.boolean().optional(),
              patent_id: z.string().optional(),
              public_score: z.number().optional(),
              selected: z.boolean().optional(),
              user_added: z.boolean().optional(),
            }),
          )
          .optional(),
        task_id: z.string().min(1),
      })
      .refine((body) => (body.final_result ?? []).filter((doc) => doc.selected).length <= 5, {
        message: 'at most 5 documents may be selected',
        path: ['final_result'],
      }),
    'ai35-12ComparisonGenerate': z.strictObject({
      request: z.looseObject({
        add_patent_selected: z.boolean().optional(),
        is_add_patent: z.boolean().optional(),
        pn: z.string(),
      }),
      tech_features: z.array(techFeature),
    }),
    'ai36-1TechnicalQaSubmit': z.strictObject({
      input: z.string().trim().min(1),
      lang,
      /** `seekgpt-thinking`, `o3-mini` or `summary-gpt`. */
      model: z.enum(['seekgpt-thinking', 'o3-mini', 'summary-gpt']).optional(),
      rag_source: z
        .array(z.enum(['patent', 'paper', 'website']))
        .min(1)
        .optional(),
      summary_check: z.boolean().optional(),
    }),
    'ai36-2TechnicalQaReport': z.strictObject({
      task_id: z.string().min(1),
    }),
    'ai37-1InitCnipa': z.strictObject({
      /** The claims, numbered ("1. A device ... 2. The device of claim 1 ..."). */
      claim: z.string().trim().min(1),
      /** The disclosure: field, background, problem, solution, effects, embodiments. */
      disclosure: z.string().trim().min(1),
    }),
    'ai37-2InitResultCnipa': z.strictObject({
      task_id: z.string().min(1),
    }),
    'ai37-3ExtractFeatureCnipa': z.strictObject({
      /** The technology category ai37-2 recognised (e.g. 设备, a machine). */
      category: z.string().trim().min(1),
      task_id: z.string().min(1),
    }),
    'ai37-4GenerateReportCnipa': z.strictObject({
      task_id: z.string().min(1),
      title: z.string().trim().min(1),
      category: z.string().trim().min(1),
      classification: z.array(z.string()).optional(),
      technical_problem: z.string().optional(),
      technical_methods: z.string().optional(),
      benefit: z.string().optional(),
      feature_tree: z.array(specificationClaim).optional(),
      terms: z.array(specificationTerm).optional(),
      embodiments: z.array(specificationEmbodiment).optional(),
      /** Drawings, by URL. */
      urls: z.array(z.url({ protocol: /^https?$/ })).optional(),
    }),
    'ai37-5SpecificationDownloadReport': z.strictObject({
      task_id: z.string().min(1),
    }),
    'ai40-1AiFeasibilityAnalysisCreation': z.strictObject({
      /** The technical solution to assess. */
      text: z.string().trim().min(1),
      lang,
      /** Whether the PDF carries the platform's logo. */
      need_logo: z.boolean().optional(),
    }),
    'ai40-2AiFeasibilityAnalysisQuery': z.strictObject({
      task_id: z.string().min(1),
    }),
    'ai39-1ImageSearchSubmit': z.strictObject({
      /** The product image, a public http(s) URL (p010 turns an uploaded image into one); opflow always sends it. */
      url: z.url({ protocol: /^https?$/ }).optional(),
      /** Offices searched: US, CN, JP, KR, AU, EU... */
      country: z.array(z.string().trim().min(2).max(4)).min(1),
      /** The report's language. */
      lang,
      /** Locarno classes (`14-02`), narrowing the search. */
      loc_items: z.array(z.string().regex(/^\d{2}-\d{2}$/)).optional(),
      /** A keyword of the product's field, helping the search. */
      main_field: z.string().trim().min(1).max(200).optional(),
      /** Only designs filed from this day (yyyyMMdd). */
      apply_start_time: z
        .string()
        .regex(/^\d{8}$/)
        .optional(),
    }),
    'ai39-2ImageSearchReport': z.strictObject({
      task_id: z.string().min(1),
    }),
    'ai67-1AiInfringementDetection1v1Creation': z.strictObject({
      /** The design patent compared with, e.g. EU0065350760001S. */
      patent_number: z.string().trim().min(2).max(40),
      /** The product image, a public http(s) URL. */
      url: z.url({ protocol: /^https?$/ }),
      report_lang: lang.optional(),
    }),
    'ai67-2AiInfringementDetection1v1Query': z.strictObject({
      task_id: z.string().min(1),
    }),
    ai61AiTranslation: z.strictObject({
      /** At most 2,000 characters. */
      text: z.string().trim().min(1).max(2000),
      /** Detected when absent. */
      source_lang: z.string().trim().min(1).optional(),
      /** CN, EN or JP; EN when absent. */
      target_lang: z.enum(['CN', 'EN', 'JP']).optional(),
    }),
    t010HiroTranslationTranslate: z
      .strictObject({
        /** At most 65,536 characters. */
        content: z.string().trim().min(1).max(65_536),
        sourceLanguageCode: z.enum(hiroLanguages),
        targetLanguageCode: z.enum(hiroLanguages),
        /** `fast` (one JSON answer) or `stream` (SSE); opflow sends `fast`. */
        mode: z.enum(['fast', 'stream']).optional(),
      })
      .refine((body) => body.sourceLanguageCode !== body.targetLanguageCode, {
        error: 'targetLanguageCode: must differ from sourceLanguageCode',
        path: ['targetLanguageCode'],
      }),
    'ai66-1FtoSubmit': z.strictObject({
      input: z.string().min(1),
      lang: lang.optional(),
      apd_start: compactDate.optional(),
      apd_end: compactDate.optional(),
      /** Patent offices to search (`CN`, `US`, `EP`...). */
      country: z
        .array(z.string().regex(/^[A-Z]{2}$/, { error: 'a patent office is two capital letters' }))
        .optional(),
      include_company: z.array(z.string().min(1)).optional(),
      exclude_company: z.array(z.string().min(1)).optional(),
      /** 0 invalid, 1 valid, 2 under examination. */
      legal_status: z.array(z.union([z.literal(0), z.literal(1), z.literal(2)])).optional(),
    }),
    'ai66-2FeatureExtract': z.strictObject({
      task_id: z.string().min(1),
    }),
    'ai66-3FeatureConfirm': z.strictObject({
      task_id: z.string().min(1),
      tech_features: z.array(ftoFeature).min(1),
    }),
    'ai66-4SearchAgent': z.strictObject({
      task_id: z.string().min(1),
    }),
    'ai66-5AgentResult': z.strictObject({
      task_id: z.string().min(1),
    }),
    'ai66-6ReportCreate': z.strictObject({
      task_id: z.string().min(1),
      title: z.string().min(1),
      /** The patents the report covers: 1 to 5. */
      final_res: z.array(ftoPatent).min(1, { error: 'select at least 1 patent' }).max(5, {
        error: 'at most 5 patents may be selected',
      }),
    }),
    'ai66-7ReportGet': z.strictObject({
      task_id: z.string().min(1),
    }),
    'ai66-8FeatureComparison': z.strictObject({
      task_id: z.string().min(1),
      pn: z.string().trim().min(1),
    }),
    p001PatentQuerySearchCount: z.strictObject({
      collapse_order: z.enum(['OLDEST', 'LATEST']).optional(),
      collapse_by: z.enum(['APD', 'PBD', 'AUTHORITY', 'SCORE']).optional(),
      collapse_type: z.enum(['ALL', 'APNO', 'DOCDB', 'INPADOC', 'EXTEND']).optional(),
      query_text: z.string().min(1).max(1500),
    }),
    /**
     * Query parameters. Either names up to 100 patents, comma-separated: `patent_id` by the
     * platform's patent ids, `patent_number` by publication numbers (`CN112345678A`).
     */
    p011BasicPatentDataSimpleBibliography: patentQuery(),
    /** Query parameters: up to 100 patents by `patent_id` or `patent_number`, comma-separated (as P011). */
    p041BasicPatentDataSimpleLegalStatus: patentQuery(),
    /** Query parameters: up to 100 patents by `patent_id` or `patent_number`, comma-separated (as P011). */
    p014BasicPatentDataPatentFamily: patentQuery(),
  }) satisfies Record<OperationId, z.ZodType>;

/** By operation id; built on first use (see ./lazy-record.ts). */
export const requestSchemas: ReturnType<typeof buildRequestSchemas> = lazyRecord(buildRequestSchemas);

export type RequestOf<Op extends OperationId> = z.input<(typeof requestSchemas)[Op]>;
