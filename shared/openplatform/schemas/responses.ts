/**
 * The `data` of every catalogue operation's answer, as lenient zod schemas.
 *
 * Shapes follow the platform's OpenAPI description. Every field is optional and nullable, unknown
 * fields are kept, and primitives accept their string encodings (see ../lenient.ts): the upstream
 * adds fields without notice and its examples are careless, and opflow must not fail a paid step
 * because of that. What a workflow really needs, it checks itself and reports as a protocol error.
 */
import * as z from 'zod';
import type { OperationId } from '../catalogue';
import { lenientBoolean, lenientInt, lenientNumber, lenientString } from '../lenient';
import { lazyRecord } from './lazy-record';

/**
 * The company fields of a mind map reference both answers have (each adds its own), built with the
 * answer schemas on first read (lazyRecord), not at module load.
 */
const organisationFields = () => ({
  id: lenientString.nullish(),
  logo: lenientString.nullish(),
  name: lenientString.nullish(),
  site: lenientString.nullish(),
  name_cn: lenientString.nullish(),
  name_en: lenientString.nullish(),
  website: lenientString.nullish(),
  state_id: lenientString.nullish(),
  entity_id: lenientString.nullish(),
  country_id: lenientString.nullish(),
  state_name: lenientString.nullish(),
  entity_type: lenientString.nullish(),
  country_name: lenientString.nullish(),
  display_name: lenientString.nullish(),
  founded_date: lenientInt.nullish(),
  normalized_name: lenientString.nullish(),
  normalized_entity_type_en: lenientString.nullish(),
});

/** A registered design compared with the product (ai39-2's report, ai67-2). */
const designComparison = () =>
  z.looseObject({
    /** Similarity: 0 to 1 in ai39-2, 0 to 100 in ai67-2's example. */
    score: lenientNumber.nullish(),
    title: lenientString.nullish(),
    img_id: lenientString.nullish(),
    /** Legal status: 1 valid, 2 invalid, 3 pending. */
    status: lenientInt.nullish(),
    country: lenientString.nullish(),
    similar: lenientString.nullish(),
    confusion: lenientString.nullish(),
    patent_id: lenientString.nullish(),
    patent_pn: lenientString.nullish(),
    risk_desc: lenientString.nullish(),
    difference: lenientString.nullish(),
    /** High, Medium or Low. */
    risk_level: lenientString.nullish(),
    suggestion: lenientString.nullish(),
  });

/** A design the image search found (ai39-2's `patent_messages`). */
const designHit = () =>
  z.looseObject({
    loc: z.array(lenientString).nullish(),
    url: lenientString.nullish(),
    url_120: lenientString.nullish(),
    apdt: lenientInt.nullish(),
    apno: lenientString.nullish(),
    pbdt: lenientInt.nullish(),
    score: lenientNumber.nullish(),
    title: lenientString.nullish(),
    img_id: lenientString.nullish(),
    inventor: lenientString.nullish(),
    authority: lenientString.nullish(),
    loc_match: lenientInt.nullish(),
    patent_id: lenientString.nullish(),
    patent_pn: lenientString.nullish(),
    risk_level: lenientString.nullish(),
    current_assignee: lenientString.nullish(),
    original_assignee: lenientString.nullish(),
  });

/** The answer of the specification initialisation (ai37-1 and ai37-2 are described alike). */
const specificationInit = () =>
  z.looseObject({
    /** 1 running, 2 done, 3 failed. */
    status: lenientInt.nullish(),
    task_id: lenientString.nullish(),
    category: lenientString.nullish(),
    classification: z.array(lenientString).nullish(),
    technical_problem: lenientString.nullish(),
    technical_methods: lenientString.nullish(),
    benefit: lenientString.nullish(),
    embodiment_outline: z
      .array(
        z.looseObject({
          text: lenientString.nullish(),
          type: lenientString.nullish(),
          label: lenientString.nullish(),
          claim_text: lenientString.nullish(),
          claim_numbers: z.array(lenientInt).nullish(),
          embodiment_number: lenientInt.nullish(),
          reference_embodiment_number: lenientInt.nullish(),
        }),
      )
      .nullish(),
  });

/**
 * A mind map in the platform's cell format, as ai33-6 (the final solution) and ai73-5 (the mind
 * map) answer it: nodes carry `data.node_id`, edges join `source.cell` to `target.cell`.
 * Defined once; each operation gives the organisation fields of its references.
 */
const mindMapSolutionOf = <Organisation extends z.ZodType>(organisation: Organisation) =>
  z.looseObject({
    cells: z
      .array(
        z.looseObject({
          id: lenientString.nullish(),
          data: z
            .looseObject({
              initd: lenientBoolean.nullish(),
              order: lenientString.nullish(),
              status: lenientString.nullish(),
              node_id: lenientString.nullish(),
              route_id: lenientString.nullish(),
              reference: z
                .array(
                  z.looseObject({
                    pn: lenientString.nullish(),
                    apd: lenientString.nullish(),
                    pbd: lenientString.nullish(),
                    title: lenientString.nullish(),
                    content: lenientString.nullish(),
                    org_info: z.array(organisation).nullish(),
                    solution_id: lenientString.nullish(),
                    solution_type: lenientString.nullish(),
                  }),
                )
                .nullish(),
              sys_title: lenientString.nullish(),
              innovation: lenientInt.nullish(),
              route_name: lenientString.nullish(),
              sys_content: lenientString.nullish(),
              improvements: z.array(z.unknown()).nullish(),
              tech_version: lenientString.nullish(),
              sys_sub_content: lenientString.nullish(),
            })
            .nullish(),
          size: z
            .looseObject({
              width: lenientInt.nullish(),
              height: lenientInt.nullish(),
            })
            .nullish(),
          view: lenientString.nullish(),
          shape: lenientString.nullish(),
          source: z
            .looseObject({
              cell: lenientString.nullish(),
            })
            .nullish(),
          target: z
            .looseObject({
              cell: lenientString.nullish(),
            })
            .nullish(),
          z_index: lenientInt.nullish(),
          position: z
            .looseObject({
              x: lenientInt.nullish(),
              y: lenientInt.nullish(),
            })
            .nullish(),
        }),
      )
      .nullish(),
    title: lenientString.nullish(),
  });

/**
 * ai33-6's mind map (the final solution): references name companies with their addresses. A
 * function, like the next, called by the answer schemas' builder only: some 130 zod schemas each,
 * which at module load were built at every cold start of every function importing the workflows.
 */
const solutionMindMapSchema = () =>
  mindMapSolutionOf(
    z.looseObject({
      ...organisationFields(),
      description: lenientString.nullish(),
      headquarters: z
        .looseObject({
          city: lenientString.nullish(),
          state: lenientString.nullish(),
          country: lenientString.nullish(),
          district: lenientString.nullish(),
          location: lenientString.nullish(),
        })
        .nullish(),
      employee_number: lenientInt.nullish(),
      original_address: z
        .looseObject({
          city: lenientString.nullish(),
          state: lenientString.nullish(),
          country: lenientString.nullish(),
          district: lenientString.nullish(),
          location: lenientString.nullish(),
        })
        .nullish(),
      employee_number_interval: lenientString.nullish(),
    }),
  );

/** ai73-5's mind map: references name companies with their normalized ids and logos. */
const materialsMindMapSchema = () =>
  mindMapSolutionOf(
    z.looseObject({
      ...organisationFields(),
      normalized_id: lenientString.nullish(),
      normalized_logo: lenientString.nullish(),
      normalized_display_name: lenientString.nullish(),
    }),
  );

/** One cell of a mind map: a node or an edge (the fields both operations' cells share). */
export type MindMapCell = NonNullable<
  NonNullable<z.output<ReturnType<typeof materialsMindMapSchema>>>['cells']
>[number];

/** A patent compared claim by claim with the confirmed features (ai66-5's `final_result`). */
const ftoPatentAnswer = () =>
  z.looseObject({
    lang: lenientString.nullish(),
    claims: z
      .array(z.looseObject({ claim_num: lenientInt.nullish(), claim_text: lenientString.nullish() }))
      .nullish(),
    document: lenientString.nullish(),
    features: z
      .array(
        z.looseObject({
          type: lenientString.nullish(),
          score: lenientInt.nullish(),
          similar: lenientBoolean.nullish(),
          claim_num: lenientInt.nullish(),
          claim_type: lenientString.nullish(),
          public_score: lenientNumber.nullish(),
          tech_feature: lenientString.nullish(),
          original_type: lenientString.nullish(),
          type_for_user: lenientString.nullish(),
          original_score: lenientInt.nullish(),
          score_for_user: lenientInt.nullish(),
          compare_feature: lenientString.nullish(),
          comparison_feature: lenientString.nullish(),
        }),
      )
      .nullish(),
    selected: lenientBoolean.nullish(),
    patent_id: lenientString.nullish(),
    risk_level: lenientString.nullish(),
    user_added: lenientBoolean.nullish(),
    most_similar: lenientBoolean.nullish(),
    public_score: lenientNumber.nullish(),
    feature_match_num: lenientInt.nullish(),
    dependent_claim_num: lenientInt.nullish(),
    independent_claim_num: lenientInt.nullish(),
    claim_equivalent_info: z
      .array(z.looseObject({ claim_num: lenientInt.nullish(), infringement: lenientBoolean.nullish() }))
      .nullish(),
    comparison_conclusion: z.record(z.string(), z.unknown()).nullish(),
    comparative_literature_type: lenientString.nullish(),
    equivalent_dependent_claim_num: lenientInt.nullish(),
    equivalent_independent_claim_num: lenientInt.nullish(),
  });

/** One round of the FTO agent's search (ai66-5's `process_dict`). */
const ftoSearchRound = () =>
  z.looseObject({
    cost: lenientNumber.nullish(),
    status: lenientString.nullish(),
    strategy: z
      .looseObject({
        type: lenientString.nullish(),
        query: lenientString.nullish(),
        try_nth: lenientInt.nullish(),
        parameters: z
          .looseObject({
            cpc: z.array(lenientString).nullish(),
            ipc: z.array(lenientString).nullish(),
            features: z.array(lenientString).nullish(),
          })
          .nullish(),
        description_en: lenientString.nullish(),
        description_zh: lenientString.nullish(),
      })
      .nullish(),
    find_patent_num: lenientInt.nullish(),
    comparison_result: z
      .array(
        z.looseObject({
          score: lenientInt.nullish(),
          patent_id: lenientString.nullish(),
          public_score: lenientNumber.nullish(),
          find_patent_num: lenientString.nullish(),
          feature_match_num: lenientInt.nullish(),
        }),
      )
      .nullish(),
    comparison_patent_num: lenientInt.nullish(),
  });

/** A feature word of the FTO search, its synonyms and finer words (ai66-5's `feature_keywords`). */
const ftoWord = () =>
  z.looseObject({
    synonym: z.array(lenientString).nullish(),
    translation: lenientString.nullish(),
    tech_feature: lenientString.nullish(),
    synonym_score: z.array(lenientNumber).nullish(),
  });
const ftoKeyword = () =>
  z.looseObject({
    words: z.array(ftoWord().extend({ words: z.array(ftoWord()).nullish() })).nullish(),
    synonym: z.array(lenientString).nullish(),
    translation: lenientString.nullish(),
    tech_feature: lenientString.nullish(),
    synonym_score: z.array(lenientNumber).nullish(),
  });

/** A member of a patent family as P014 lists it (authority, number, kind). */
const familyMember = () =>
  z.looseObject({
    kind: lenientString.nullish(),
    country: lenientString.nullish(),
    sequence: lenientInt.nullish(),
    doc_number: lenientString.nullish(),
  });

const buildResponseDataSchemas = () =>
  ({
    ai07ChatCcGptStream: z.looseObject({
      output: z
        .looseObject({
          usage: z
            .looseObject({
              input_tokens: lenientInt.nullish(),
              total_tokens: lenientInt.nullish(),
              output_tokens: lenientInt.nullish(),
            })
            .nullish(),
          status: lenientString.nullish(),
          content: lenientString.nullish(),
        })
        .nullish(),
    }),
    'ai33-1Step1V3': z.looseObject({
      task_id: lenientString.nullish(),
    }),
    ai50ChatPatGptStream: z.looseObject({
      output: z
        .looseObject({
          usage: z
            .looseObject({
              input_tokens: lenientInt.nullish(),
              total_tokens: lenientInt.nullish(),
              output_tokens: lenientInt.nullish(),
            })
            .nullish(),
          status: lenientString.nullish(),
          content: lenientString.nullish(),
        })
        .nullish(),
      references: z
        .array(
          z.looseObject({
            text: lenientString.nullish(),
            type: lenientString.nullish(),
            value: lenientString.nullish(),
          }),
        )
        .nullish(),
    }),
    'ai68-1ChatAiLsChat': z.looseObject({
      chat_id: lenientString.nullish(),
      ref_doc: z
        .array(
          z.looseObject({
            link: lenientString.nullish(),
            text: lenientString.nullish(),
            type: lenientString.nullish(),
            index: lenientString.nullish(),
            post_time: lenientString.nullish(),
            _text_display: lenientString.nullish(),
            doc_type_detail: lenientString.nullish(),
          }),
        )
        .nullish(),
      chat_item_id: lenientString.nullish(),
    }),
    'ai32-3PatentDisclosureDownload': z.looseObject({
      job_id: lenientString.nullish(),
      job_status: lenientInt.nullish(),
      download_url: lenientString.nullish(),
    }),
    'ai33-2Step2V3': z.looseObject({
      status: lenientString.nullish(),
      recommend: z.array(z.unknown()).nullish(),
    }),
    'ai68-2ChatAiLsStream': z.looseObject({
      usage: z
        .looseObject({
          image_tokens: lenientInt.nullish(),
          total_tokens: lenientInt.nullish(),
          prompt_tokens: lenientInt.nullish(),
          thinking_tokens: lenientInt.nullish(),
          completion_tokens: lenientInt.nullish(),
          prompt_tokens_details: z
            .looseObject({
              audio_tokens: lenientInt.nullish(),
              cached_tokens: lenientInt.nullish(),
              cache_read_tokens: lenientInt.nullish(),
              cached_creation_tokens: lenientInt.nullish(),
            })
            .nullish(),
          completion_tokens_details: z
            .looseObject({
              audio_tokens: lenientInt.nullish(),
              reasoning_tokens: lenientInt.nullish(),
              accepted_prediction_tokens: lenientInt.nullish(),
              rejected_prediction_tokens: lenientInt.nullish(),
            })
            .nullish(),
        })
        .nullish(),
      chat_id: lenientString.nullish(),
      choices: z
        .array(
          z.looseObject({
            delta: z
              .looseObject({
                role: lenientString.nullish(),
                content: lenientString.nullish(),
              })
              .nullish(),
            index: lenientInt.nullish(),
            finish_reason: lenientString.nullish(),
            content_filter_results: z
              .looseObject({
                hate: z
                  .looseObject({
                    detected: lenientBoolean.nullish(),
                    filtered: lenientBoolean.nullish(),
                  })
                  .nullish(),
                sexual: z
                  .looseObject({
                    detected: lenientBoolean.nullish(),
                    filtered: lenientBoolean.nullish(),
                  })
                  .nullish(),
                violence: z
                  .looseObject({
                    detected: lenientBoolean.nullish(),
                    filtered: lenientBoolean.nullish(),
                  })
                  .nullish(),
                jailbreak: z
                  .looseObject({
                    detected: lenientBoolean.nullish(),
                    filtered: lenientBoolean.nullish(),
                  })
                  .nullish(),
                profanity: z
                  .looseObject({
                    detected: lenientBoolean.nullish(),
                    filtered: lenientBoolean.nullish(),
                  })
                  .nullish(),
                self_harm: z
                  .looseObject({
                    detected: lenientBoolean.nullish(),
                    filtered: lenientBoolean.nullish(),
                  })
                  .nullish(),
              })
              .nullish(),
          }),
        )
        .nullish(),
      chat_item_id: lenientString.nullish(),
      system_fingerprint: lenientString.nullish(),
    }),
    'ai32-2PatentDisclosureGenerate': z.looseObject({
      job_id: lenientString.nullish(),
      status: lenientInt.nullish(),
    }),
    ai20ChatPharmGptStream: z.looseObject({
      output: z
        .looseObject({
          usage: z
            .looseObject({
              input_tokens: lenientInt.nullish(),
              total_tokens: lenientInt.nullish(),
              output_tokens: lenientInt.nullish(),
            })
            .nullish(),
          status: lenientString.nullish(),
          content: lenientString.nullish(),
          references: z
            .array(
              z.looseObject({
                link: lenientString.nullish(),
                text: lenientString.nullish(),
                type: lenientString.nullish(),
                index: lenientInt.nullish(),
                doc_id: lenientString.nullish(),
                doc_type: lenientString.nullish(),
                post_date: lenientInt.nullish(),
                text_summary: lenientString.nullish(),
              }),
            )
            .nullish(),
          session_id: lenientString.nullish(),
        })
        .nullish(),
    }),
    'ai32-1PatentDisclosureTechMeans': z.looseObject({
      others: lenientString.nullish(),
      status: lenientString.nullish(),
      outcome: lenientString.nullish(),
      mechanism: lenientString.nullish(),
      background: lenientString.nullish(),
      embodiment: lenientString.nullish(),
      application: z.array(z.unknown()).nullish(),
      tech_problem: lenientString.nullish(),
      unidentified: lenientString.nullish(),
      subject_improvement: z.array(z.unknown()).nullish(),
    }),
    'ai33-5Step4V3': z.looseObject({
      task_id: lenientString.nullish(),
    }),
    'ai33-4Step3QueryV3': z.looseObject({
      status: lenientString.nullish(),
      directions: z
        .array(
          z.looseObject({
            reason: lenientString.nullish(),
            ticked: lenientBoolean.nullish(),
            approaches: z.array(z.unknown()).nullish(),
            source_type: lenientString.nullish(),
            verification: lenientString.nullish(),
          }),
        )
        .nullish(),
    }),
    'ai33-3Step3SubmitV3': z.looseObject({
      task_id: lenientString.nullish(),
    }),
    'ai73-2FindSolutionRecommend': z.looseObject({
      status: lenientString.nullish(),
      recommend: z.array(z.unknown()).nullish(),
      has_recommend: lenientBoolean.nullish(),
    }),
    'ai33-6Step5V3': z.looseObject({
      status: lenientString.nullish(),
      solution: solutionMindMapSchema().nullish(),
    }),
    'ai73-3FindSolutionConfirmRecommend': z.looseObject({
      task_id: lenientString.nullish(),
    }),
    'ai73-1FindSolutionSubmit': z.looseObject({
      task_id: lenientString.nullish(),
    }),
    'ai73-6FindSolutionCitationReferenceList': z.looseObject({
      page: lenientInt.nullish(),
      limit: lenientInt.nullish(),
      total: lenientInt.nullish(),
      records: z.array(z.unknown()).nullish(),
      has_next: lenientBoolean.nullish(),
      has_previous: lenientBoolean.nullish(),
    }),
    'ai73-7FindSolutionNodeReference': z.looseObject({
      expected_challenge: z.array(z.unknown()).nullish(),
      technical_maturity: z.array(z.unknown()).nullish(),
      technical_principle: z.array(z.unknown()).nullish(),
      engineering_reliability: z.array(z.unknown()).nullish(),
      industry_application_cases: z.array(z.unknown()).nullish(),
    }),
    'ai73-4FindSolutionThinking': z.looseObject({
      status: lenientString.nullish(),
      board_id: lenientString.nullish(),
      direction: z.record(z.string(), z.unknown()).nullish(),
      references: z
        .looseObject({
          references: z
            .array(
              z.looseObject({
                pn: lenientString.nullish(),
                apd: lenientString.nullish(),
                pbd: lenientString.nullish(),
                link: lenientString.nullish(),
                title: lenientString.nullish(),
                authors: z.record(z.string(), z.unknown()).nullish(),
                content: lenientString.nullish(),
                org_info: z.record(z.string(), z.unknown()).nullish(),
                project_id: lenientString.nullish(),
                solution_id: lenientString.nullish(),
                project_name: lenientString.nullish(),
                solution_type: lenientString.nullish(),
                solution_sub_type: lenientString.nullish(),
              }),
            )
            .nullish(),
        })
        .nullish(),
      problem_statement: z
        .looseObject({
          domain: lenientString.nullish(),
          problem_title: lenientString.nullish(),
          success_criteria: z
            .array(
              z.looseObject({
                metric: lenientString.nullish(),
                target: lenientString.nullish(),
                priority: lenientString.nullish(),
                validation_method: lenientString.nullish(),
              }),
            )
            .nullish(),
          refined_statement: lenientString.nullish(),
          background_context: lenientString.nullish(),
          technical_constraints: z
            .array(
              z.looseObject({
                category: lenientString.nullish(),
                description: lenientString.nullish(),
                impact_level: lenientString.nullish(),
              }),
            )
            .nullish(),
          performance_requirements: z
            .array(
              z.looseObject({
                unit: lenientString.nullish(),
                parameter: lenientString.nullish(),
                tolerance: lenientString.nullish(),
                target_value: lenientString.nullish(),
              }),
            )
            .nullish(),
        })
        .nullish(),
    }),
    'ai73-9FindSolutionImplementationResponse': z.looseObject({
      status: lenientString.nullish(),
      markdown_message: lenientString.nullish(),
    }),
    'ai73-5FindSolutionMind': z.looseObject({
      status: lenientString.nullish(),
      solution: materialsMindMapSchema().nullish(),
    }),
    'ai73-8FindSolutionImplementation': z.looseObject({
      task_id: lenientString.nullish(),
    }),
    'ai34-2CreationCustomDir': z.looseObject({
      report_id: lenientString.nullish(),
      analysis_directory: z
        .array(
          z.looseObject({
            key: lenientString.nullish(),
            name: lenientString.nullish(),
            source_type: lenientString.nullish(),
          }),
        )
        .nullish(),
    }),
    'ai34-3QuickSearchReportQuery': z.looseObject({
      report_url: lenientString.nullish(),
      report_status: lenientString.nullish(),
      head_player_analysis: z.record(z.string(), z.unknown()).nullish(),
      key_patent_interpretation: z.record(z.string(), z.unknown()).nullish(),
    }),
    'ai35-1NoveltySearchSubmit': z.looseObject({
      task_id: lenientString.nullish(),
    }),
    'ai34-1QuickSearchReportCreation': z.looseObject({
      report_id: lenientString.nullish(),
      analysis_directory: z
        .array(
          z.looseObject({
            key: lenientString.nullish(),
            name: lenientString.nullish(),
            source_type: lenientString.nullish(),
          }),
        )
        .nullish(),
    }),
    'ai35-2TechSolutionGet': z.looseObject({
      status: lenientInt.nullish(),
      tech_solution: lenientString.nullish(),
    }),
    'ai35-3TechSolutionUpdate': z.looseObject({
      task_id: lenientString.nullish(),
    }),
    'ai35-5FeatureConfirm': z.looseObject({
      task_id: lenientString.nullish(),
    }),
    'ai35-7NoveltySearchAgentSearch': z.looseObject({
      task_id: lenientString.nullish(),
    }),
    'ai35-4FeatureExtract': z.looseObject({
      data: z
        .array(
          z.looseObject({
            selected: lenientBoolean.nullish(),
            user_add: lenientBoolean.nullish(),
            feature_num: lenientString.nullish(),
            feature_text: lenientString.nullish(),
            feature_weight: lenientString.nullish(),
            feature_elements: lenientString.nullish(),
            feature_function: lenientString.nullish(),
            feature_text_original: lenientString.nullish(),
            feature_weight_reason: lenientString.nullish(),
          }),
        )
        .nullish(),
      status: lenientInt.nullish(),
    }),
    'ai35-6RetrievalElements': z.looseObject({
      status: lenientInt.nullish(),
      elements: z
        .looseObject({
          list: z
            .array(
              z.looseObject({
                express: z
                  .array(
                    z.looseObject({
                      ipc: z
                        .array(
                          z.looseObject({
                            key: lenientString.nullish(),
                            source: lenientString.nullish(),
                          }),
                        )
                        .nullish(),
                      word: z
                        .looseObject({
                          key: lenientString.nullish(),
                          source: lenientString.nullish(),
                        })
                        .nullish(),
                      extend: z
                        .array(
                          z.looseObject({
                            key: lenientString.nullish(),
                            source: lenientString.nullish(),
                          }),
                        )
                        .nullish(),
                    }),
                  )
                  .nullish(),
                selected: lenientBoolean.nullish(),
                feature_type: lenientString.nullish(),
                feature_text_original: lenientString.nullish(),
              }),
            )
            .nullish(),
          family_merge_enabled: lenientBoolean.nullish(),
        })
        .nullish(),
    }),
    'ai35-10NoveltySearchExport': z.looseObject({
      task_id: lenientString.nullish(),
    }),
    'ai35-8NoveltySearchAgentResult': z.looseObject({
      lang: lenientString.nullish(),
      text: lenientString.nullish(),
      cc_num: lenientInt.nullish(),
      cc_pids: z.array(z.unknown()).nullish(),
      request: z.record(z.string(), z.unknown()).nullish(),
      is_async: lenientBoolean.nullish(),
      task_cost: lenientNumber.nullish(),
      update_ts: lenientString.nullish(),
      cc_docs_num: lenientInt.nullish(),
      task_status: lenientString.nullish(),
      cc_threshold: lenientNumber.nullish(),
      debug_detail: z.record(z.string(), z.unknown()).nullish(),
      excute_times: lenientInt.nullish(),
      final_result: z
        .array(
          z.looseObject({
            lang: lenientString.nullish(),
            document: lenientString.nullish(),
            features: z
              .array(
                z.looseObject({
                  type: lenientString.nullish(),
                  score: lenientInt.nullish(),
                  differ: lenientString.nullish(),
                  reason: lenientString.nullish(),
                  similar: lenientBoolean.nullish(),
                  claim_num: lenientInt.nullish(),
                  claim_type: lenientString.nullish(),
                  public_score: lenientNumber.nullish(),
                  tech_feature: lenientString.nullish(),
                  original_type: lenientString.nullish(),
                  type_for_user: lenientString.nullish(),
                  original_score: lenientInt.nullish(),
                  score_for_user: lenientInt.nullish(),
                  compare_feature: lenientString.nullish(),
                  differ_for_user: lenientString.nullish(),
                  original_differ: lenientString.nullish(),
                  original_reason: lenientString.nullish(),
                  reason_for_user: lenientString.nullish(),
                  comparison_feature: lenientString.nullish(),
                }),
              )
              .nullish(),
            selected: lenientBoolean.nullish(),
            patent_id: lenientString.nullish(),
            user_added: lenientBoolean.nullish(),
            most_similar: lenientBoolean.nullish(),
            public_score: lenientNumber.nullish(),
            creativity_type: lenientString.nullish(),
            feature_match_num: lenientInt.nullish(),
            comparative_literature_type: lenientString.nullish(),
            comparative_literature_category: lenientString.nullish(),
          }),
        )
        .nullish(),
      operate_type: lenientString.nullish(),
      process_dict: z.record(z.string(), z.unknown()).nullish(),
      find_patent_num: lenientInt.nullish(),
      feature_keywords: z
        .array(
          z.looseObject({
            weight: lenientNumber.nullish(),
            feature: lenientString.nullish(),
            keywords: z.array(z.unknown()).nullish(),
          }),
        )
        .nullish(),
      process_dict_keys: z.array(z.unknown()).nullish(),
      feature_analysis_result: z
        .looseObject({
          block_query: z.record(z.string(), z.unknown()).nullish(),
          summary_result: z.record(z.string(), z.unknown()).nullish(),
          feature_extract_result: z.array(z.unknown()).nullish(),
          keywords_extract_result: z
            .array(
              z.looseObject({
                express: z
                  .array(
                    z.looseObject({
                      ipc: z
                        .array(
                          z.looseObject({
                            key: lenientString.nullish(),
                            source: lenientString.nullish(),
                          }),
                        )
                        .nullish(),
                      word: z
                        .looseObject({
                          key: lenientString.nullish(),
                          source: lenientString.nullish(),
                        })
                        .nullish(),
                      extend: z
                        .array(
                          z.looseObject({
                            key: lenientString.nullish(),
                            source: lenientString.nullish(),
                          }),
                        )
                        .nullish(),
                    }),
                  )
                  .nullish(),
                selected: lenientBoolean.nullish(),
                feature_type: lenientString.nullish(),
                feature_text_original: lenientString.nullish(),
              }),
            )
            .nullish(),
        })
        .nullish(),
    }),
    'ai35-11ReportGet': z.looseObject({
      status: lenientInt.nullish(),
      task_id: lenientString.nullish(),
      report_url: lenientString.nullish(),
    }),
    'ai35-9ComparisonConfirm': z.looseObject({
      task_id: lenientString.nullish(),
    }),
    'ai35-12ComparisonGenerate': z.looseObject({
      final_res: z
        .array(
          z.looseObject({
            lang: lenientString.nullish(),
            claims: z
              .array(
                z.looseObject({
                  claim_num: lenientInt.nullish(),
                  claim_text: lenientString.nullish(),
                }),
              )
              .nullish(),
            document: lenientString.nullish(),
            features: z
              .array(
                z.looseObject({
                  type: lenientString.nullish(),
                  score: lenientInt.nullish(),
                  differ: lenientString.nullish(),
                  public_score: lenientInt.nullish(),
                  tech_feature: lenientString.nullish(),
                  comparison_feature: lenientString.nullish(),
                }),
              )
              .nullish(),
            patent_id: lenientString.nullish(),
            public_score: lenientNumber.nullish(),
          }),
        )
        .nullish(),
      threshold: lenientInt.nullish(),
    }),
    /** The platform describes ai37-1's answer as ai37-2's (a task_id, and the summary once ready). */
    'ai37-1InitCnipa': specificationInit(),
    'ai37-2InitResultCnipa': specificationInit(),
    'ai37-3ExtractFeatureCnipa': z.looseObject({
      feature_tree: z
        .array(
          z.looseObject({
            num: lenientString.nullish(),
            parent: lenientString.nullish(),
            simple_claim: lenientString.nullish(),
            claim_features: z
              .array(
                z.looseObject({
                  feature: lenientString.nullish(),
                  concepts: z.array(lenientString).nullish(),
                  feature_deleted: lenientInt.nullish(),
                }),
              )
              .nullish(),
          }),
        )
        .nullish(),
      terms: z
        .array(
          z.looseObject({
            name: lenientString.nullish(),
            number: lenientString.nullish(),
            annotated: lenientBoolean.nullish(),
            unique_id: lenientString.nullish(),
          }),
        )
        .nullish(),
    }),
    'ai37-4GenerateReportCnipa': z.looseObject({
      status: lenientInt.nullish(),
      task_id: lenientString.nullish(),
      report_url: lenientString.nullish(),
    }),
    'ai37-5SpecificationDownloadReport': z.looseObject({
      status: lenientInt.nullish(),
      task_id: lenientString.nullish(),
      report_url: lenientString.nullish(),
    }),
    'ai40-1AiFeasibilityAnalysisCreation': z.looseObject({ task_id: lenientString.nullish() }),
    'ai40-2AiFeasibilityAnalysisQuery': z.looseObject({
      /** 1 running, 2 done, 3 failed. */
      status: lenientInt.nullish(),
      /** The report (PDF), once done. */
      url: lenientString.nullish(),
    }),
    'ai39-1ImageSearchSubmit': z.looseObject({ task_id: lenientString.nullish() }),
    'ai39-2ImageSearchReport': z.looseObject({
      task_id: lenientString.nullish(),
      /** 1 running, 2 done, 3 failed. */
      task_status: lenientInt.nullish(),
      /** The product as a line drawing (a data: URL). */
      line_drawing_base64: lenientString.nullish(),
      /** The AI review of the closest designs: risk per design and per country. */
      report: z
        .looseObject({
          loc: z.array(lenientString).nullish(),
          country: z.array(lenientString).nullish(),
          comparisons: z.array(designComparison()).nullish(),
          operate_date: lenientInt.nullish(),
          apply_start_time: lenientString.nullish(),
          high_risk_country: z.array(lenientString).nullish(),
          middle_risk_country: z.array(lenientString).nullish(),
          suspected_infringement_count: lenientInt.nullish(),
          suspected_infringement_country: z.array(lenientString).nullish(),
        })
        .nullish(),
      /** The image search's hits (similarity 0 to 1). */
      patent_messages: z
        .looseObject({
          patent_messages: z.array(designHit()).nullish(),
          total_search_result_count: lenientInt.nullish(),
        })
        .nullish(),
      /** The image search and the AI rerank fused (reciprocal rank fusion). */
      rrffusion_response: z
        .looseObject({
          k_value: lenientInt.nullish(),
          rerank_count: lenientInt.nullish(),
          traditional_count: lenientInt.nullish(),
          patent_messages: z
            .array(
              designHit().extend({
                rrf_score: lenientNumber.nullish(),
                rerank_rank: lenientInt.nullish(),
                rerank_score: lenientNumber.nullish(),
                traditional_rank: lenientInt.nullish(),
                traditional_score: lenientNumber.nullish(),
              }),
            )
            .nullish(),
        })
        .nullish(),
    }),
    'ai67-1AiInfringementDetection1v1Creation': z.looseObject({ task_id: lenientString.nullish() }),
    'ai67-2AiInfringementDetection1v1Query': z.looseObject({
      task_id: lenientString.nullish(),
      /** 1 running, 2 done, 3 failed. */
      task_status: lenientInt.nullish(),
      loc: z.array(lenientString).nullish(),
      country: z.array(lenientString).nullish(),
      user_image: lenientString.nullish(),
      /** One comparison per view of the design. */
      comparisons: z
        .array(
          designComparison().omit({ img_id: true }).extend({ patent_image_url: lenientString.nullish() }),
        )
        .nullish(),
      high_risk_country: z.array(lenientString).nullish(),
      middle_risk_country: z.array(lenientString).nullish(),
      suspected_infringement_count: lenientInt.nullish(),
      suspected_infringement_country: z.array(lenientString).nullish(),
    }),
    ai61AiTranslation: z.looseObject({
      source_lang: lenientString.nullish(),
      target_lang: lenientString.nullish(),
      translate_result: lenientString.nullish(),
    }),
    t010HiroTranslationTranslate: z.looseObject({
      state: lenientString.nullish(),
      textTranslated: lenientString.nullish(),
      translatedCharacterCount: lenientInt.nullish(),
    }),
    'ai66-1FtoSubmit': z.looseObject({
      task_id: lenientString.nullish(),
    }),
    /** Answered when the extraction is done; `threshold` is the score from which a feature counts. */
    'ai66-2FeatureExtract': z.looseObject({
      text: lenientString.nullish(),
      features: z
        .array(
          z.looseObject({
            core: lenientBoolean.nullish(),
            score: lenientInt.nullish(),
            reason: lenientString.nullish(),
            keywords: z.array(lenientString).nullish(),
            user_add: lenientBoolean.nullish(),
            is_select: lenientBoolean.nullish(),
            tech_feature: lenientString.nullish(),
          }),
        )
        .nullish(),
      threshold: lenientInt.nullish(),
    }),
    'ai66-3FeatureConfirm': z.looseObject({
      task_id: lenientString.nullish(),
    }),
    'ai66-4SearchAgent': z.looseObject({
      task_id: lenientString.nullish(),
    }),
    'ai36-1TechnicalQaSubmit': z.looseObject({ task_id: lenientString.nullish() }),
    /**
     * `task_status` 1 running, 2 success, 3 failed. References arrive with the schema's lower-case
     * names or, as the reference's own example shows, upper-case ones (`TITLE`, `LINK`): both kept.
     */
    'ai36-2TechnicalQaReport': z.looseObject({
      task_id: lenientString.nullish(),
      task_status: lenientInt.nullish(),
      split_query: z
        .looseObject({
          query: z.array(lenientString).nullish(),
          concept: z.array(lenientString).nullish(),
        })
        .nullish(),
      message_response: z
        .looseObject({
          title: lenientString.nullish(),
          modules: z.array(lenientString).nullish(),
          summary: lenientString.nullish(),
          recommend: z.array(lenientString).nullish(),
          references: z
            .array(
              z.looseObject({
                apd: lenientString.nullish(),
                pbd: lenientString.nullish(),
                link: lenientString.nullish(),
                title: lenientString.nullish(),
                authors: z
                  .array(z.looseObject({ id: lenientString.nullish(), name: lenientString.nullish() }))
                  .nullish(),
                content: lenientString.nullish(),
                org_info: z
                  .array(
                    z.looseObject({
                      ...organisationFields(),
                      normalized_id: lenientString.nullish(),
                      normalized_logo: lenientString.nullish(),
                      normalized_display_name: lenientString.nullish(),
                    }),
                  )
                  .nullish(),
                pdf_image: z
                  .array(
                    z.looseObject({
                      image_id: lenientString.nullish(),
                      extracted: lenientBoolean.nullish(),
                      patent_id: lenientString.nullish(),
                      image_from: lenientString.nullish(),
                      image_type: lenientString.nullish(),
                      is_extracted: lenientBoolean.nullish(),
                      storage_path: lenientString.nullish(),
                      official_size: lenientString.nullish(),
                      source_image_type: lenientString.nullish(),
                      fulltext_image240_url: lenientString.nullish(),
                    }),
                  )
                  .nullish(),
                project_id: lenientString.nullish(),
                solution_id: lenientString.nullish(),
                project_name: lenientString.nullish(),
                solution_type: lenientString.nullish(),
                pdf_image_count: lenientInt.nullish(),
                solution_sub_type: lenientString.nullish(),
              }),
            )
            .nullish(),
          application: z.array(z.array(lenientString)).nullish(),
          check_summary: lenientString.nullish(),
          summary_think: lenientString.nullish(),
          agent_suggestion: lenientString.nullish(),
          tech_mind_suggestion: lenientString.nullish(),
          agent_suggestion_scene: lenientString.nullish(),
        })
        .nullish(),
    }),
    'ai66-5AgentResult': z.looseObject({
      lang: lenientString.nullish(),
      text: lenientString.nullish(),
      cc_num: lenientInt.nullish(),
      cc_pids: z.array(z.unknown()).nullish(),
      task_id: lenientString.nullish(),
      is_async: lenientBoolean.nullish(),
      task_cost: lenientNumber.nullish(),
      update_ts: lenientString.nullish(),
      task_status: lenientString.nullish(),
      cc_threshold: lenientNumber.nullish(),
      excute_times: lenientInt.nullish(),
      final_result: z.array(ftoPatentAnswer()).nullish(),
      operate_type: lenientString.nullish(),
      process_dict: z
        .looseObject({
          ipc_cpc_search: ftoSearchRound().nullish(),
          semantic_search: ftoSearchRound().nullish(),
          relevant_tracking_search: ftoSearchRound().nullish(),
          block_progressive_search_1: ftoSearchRound().nullish(),
          block_progressive_search_2: ftoSearchRound().nullish(),
          block_progressive_search_3: ftoSearchRound().nullish(),
          block_progressive_search_4: ftoSearchRound().nullish(),
        })
        .nullish(),
      find_patent_num: lenientInt.nullish(),
      feature_keywords: z.array(ftoKeyword()).nullish(),
      total_comparison_patent_num: lenientInt.nullish(),
    }),
    'ai66-6ReportCreate': z.looseObject({
      task_id: lenientString.nullish(),
    }),
    /** `status` 1 exporting, 2 done (with `report_url`), 3 failed. */
    'ai66-7ReportGet': z.looseObject({
      status: lenientInt.nullish(),
      task_id: lenientString.nullish(),
      report_url: lenientString.nullish(),
    }),
    /** The named patent compared (as ai66-6 takes it back, with `user_added`). */
    'ai66-8FeatureComparison': z.looseObject({
      final_res: z
        .array(
          z.looseObject({
            lang: lenientString.nullish(),
            claims: z
              .array(z.looseObject({ claim_num: lenientInt.nullish(), claim_text: lenientString.nullish() }))
              .nullish(),
            document: lenientString.nullish(),
            features: z
              .array(
                z.looseObject({
                  score: lenientInt.nullish(),
                  public_score: lenientNumber.nullish(),
                  tech_feature: lenientString.nullish(),
                  comparison_feature: lenientString.nullish(),
                }),
              )
              .nullish(),
            patent_id: lenientString.nullish(),
            public_score: lenientNumber.nullish(),
          }),
        )
        .nullish(),
      threshold: lenientInt.nullish(),
    }),
    p001PatentQuerySearchCount: z.looseObject({
      total_search_result_count: lenientInt.nullish(),
    }),
    /** One record per requested patent, in no set order; a number the platform does not know is left out. */
    p011BasicPatentDataSimpleBibliography: z
      .array(
        z.looseObject({
          bibliographic_data: z
            .looseObject({
              abstracts: z
                .array(
                  z.looseObject({
                    lang: lenientString.nullish(),
                    text: lenientString.nullish(),
                  }),
                )
                .nullish(),
              application_reference: z
                .looseObject({
                  apno: lenientString.nullish(),
                  date: lenientInt.nullish(),
                })
                .nullish(),
              classification_data: z
                .looseObject({
                  classification_cpc: z
                    .looseObject({
                      further: z.array(z.unknown()).nullish(),
                      main: lenientString.nullish(),
                    })
                    .nullish(),
                  classification_gbc: z.array(z.unknown()).nullish(),
                  classification_ipcr: z
                    .looseObject({
                      further: z.array(z.unknown()).nullish(),
                      main: lenientString.nullish(),
                    })
                    .nullish(),
                  classification_loc: z.array(z.unknown()).nullish(),
                })
                .nullish(),
              dates_of_public_availability: z
                .looseObject({
                  printed_with_granted: lenientInt.nullish(),
                })
                .nullish(),
              invention_title: z
                .array(
                  z.looseObject({
                    lang: lenientString.nullish(),
                    text: lenientString.nullish(),
                  }),
                )
                .nullish(),
              parties: z
                .looseObject({
                  applicants: z
                    .array(
                      z.looseObject({
                        address: lenientString.nullish(),
                        lang: lenientString.nullish(),
                        name: lenientString.nullish(),
                        sequence: lenientInt.nullish(),
                      }),
                    )
                    .nullish(),
                  assignees: z
                    .array(
                      z.looseObject({
                        address: lenientString.nullish(),
                        lang: lenientString.nullish(),
                        name: lenientString.nullish(),
                        sequence: lenientInt.nullish(),
                      }),
                    )
                    .nullish(),
                  inventors: z
                    .array(
                      z.looseObject({
                        address: lenientString.nullish(),
                        lang: lenientString.nullish(),
                        name: lenientString.nullish(),
                        sequence: lenientInt.nullish(),
                      }),
                    )
                    .nullish(),
                })
                .nullish(),
              patent_type: lenientString.nullish(),
              pct_or_regional_filing_data: z
                .looseObject({
                  date: lenientInt.nullish(),
                  doc_number: lenientString.nullish(),
                  entry_date: lenientInt.nullish(),
                })
                .nullish(),
              pct_or_regional_publishing_data: z
                .looseObject({
                  date: lenientInt.nullish(),
                  number: lenientString.nullish(),
                })
                .nullish(),
              priority_claims: z
                .array(
                  z.looseObject({
                    country: lenientString.nullish(),
                    date: lenientInt.nullish(),
                    doc_number: lenientString.nullish(),
                  }),
                )
                .nullish(),
              publication_reference: z
                .looseObject({
                  country: lenientString.nullish(),
                  date: lenientInt.nullish(),
                  doc_number: lenientString.nullish(),
                  kind: lenientString.nullish(),
                })
                .nullish(),
              reference_cited: z
                .looseObject({
                  cited_others: z.array(z.unknown()).nullish(),
                  cited_patents: z.array(z.unknown()).nullish(),
                })
                .nullish(),
            })
            .nullish(),
          patent_id: lenientString.nullish(),
          pn: lenientString.nullish(),
        }),
      )
      .nullish(),
    /** One record per patent asked for: `simple_legal_status` such as Active, Pending, Inactive. */
    p041BasicPatentDataSimpleLegalStatus: z
      .array(
        z.looseObject({
          pn: lenientString.nullish(),
          patent_id: lenientString.nullish(),
          simple_legal_status: z.array(lenientString).nullish(),
        }),
      )
      .nullish(),
    /** One record per patent asked for: its simple, INPADOC and PatSnap families' members. */
    p014BasicPatentDataPatentFamily: z
      .array(
        z.looseObject({
          pn: lenientString.nullish(),
          patent_id: lenientString.nullish(),
          patent_family: z
            .looseObject({
              simple_family: z.array(familyMember()).nullish(),
              inpadoc_family: z.array(familyMember()).nullish(),
              patsnap_family: z.array(familyMember()).nullish(),
              simple_family_id: lenientInt.nullish(),
              inpadoc_family_id: lenientInt.nullish(),
              patsnap_family_id: lenientInt.nullish(),
            })
            .nullish(),
        }),
      )
      .nullish(),
  }) satisfies Record<OperationId, z.ZodType>;

/** By operation id; built on first use (see ./lazy-record.ts). */
export const responseDataSchemas: ReturnType<typeof buildResponseDataSchemas> =
  lazyRecord(buildResponseDataSchemas);

export type DataOf<Op extends OperationId> = z.output<(typeof responseDataSchemas)[Op]>;
