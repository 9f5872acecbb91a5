/**
 * Novelty search, ai35-1..12: submit a technical description, then in turn a summary (ai35-2,
 * confirmed by ai35-3), technical features (ai35-4, confirmed by ai35-5), search elements (ai35-6,
 * confirmed by ai35-7, which starts the agent search), the agent's result with feature comparisons
 * (ai35-8, optionally confirmed by ai35-9), and the report (ai35-10 export, ai35-11 polls for a PDF).
 * ai35-12 compares one given patent with given features, synchronously.
 */
import * as z from 'zod';
import { requestSchemas } from '../../openplatform/schemas/requests';
import type { DriftRun } from '../drift';
import { ipcCode, patentNumber } from '../prior-art';
import { invalidParameter } from '../sandbox-rejection';
import { hashText, SeededRandom, stableJson } from '../seeded';
import { numericStatus, type Stage, stageSchema, stageState } from '../stages';
import { capitalise, keywordsOf, sentencesOf, titleOf } from '../text-content';
import { failsAt, type Triggers, triggersIn, triggersSchema, withoutMarkers } from '../triggers';
import {
  json,
  type OperationContext,
  type OperationHandlers,
  type RegistryFactory,
  type RequestBody,
} from './contract';
import { confirmOnce, requireStarted, requireSucceeded } from './step-order';

type NoveltyOperations = Pick<
  OperationHandlers,
  | 'ai35-1NoveltySearchSubmit'
  | 'ai35-2TechSolutionGet'
  | 'ai35-3TechSolutionUpdate'
  | 'ai35-4FeatureExtract'
  | 'ai35-5FeatureConfirm'
  | 'ai35-6RetrievalElements'
  | 'ai35-7NoveltySearchAgentSearch'
  | 'ai35-8NoveltySearchAgentResult'
  | 'ai35-9ComparisonConfirm'
  | 'ai35-10NoveltySearchExport'
  | 'ai35-11ReportGet'
  | 'ai35-12ComparisonGenerate'
>;

type Feature = NonNullable<RequestBody<'ai35-5FeatureConfirm'>['tech_features']>[number];
type Elements = RequestBody<'ai35-7NoveltySearchAgentSearch'>['elements'];
type FinalResult = NonNullable<RequestBody<'ai35-9ComparisonConfirm'>['final_result']>[number];

interface NoveltyTask {
  owner: string;
  input: string;
  lang: string;
  inputHash: string;
  triggers: Triggers;
  summaryStage: Stage;
  confirmedSummary?: string;
  featureStage?: Stage;
  confirmedFeatures?: Feature[];
  elementsStage?: Stage;
  confirmedElements?: Elements;
  agentStage?: Stage;
  confirmedResults?: FinalResult[];
  exportStage?: Stage;
  exportTitle?: string;
  exportCount: number;
  /** With drift on: the drift seed and how many times this input was searched before. */
  drift?: DriftRun;
}

const featureSchema = requestSchemas['ai35-5FeatureConfirm'].shape.tech_features.unwrap().element;
const elementsSchema = requestSchemas['ai35-7NoveltySearchAgentSearch'].shape.elements;
const finalResultSchema = requestSchemas['ai35-9ComparisonConfirm'].shape.final_result.unwrap().element;

const noveltyTaskSchema = z.strictObject({
  owner: z.string().min(1),
  input: z.string(),
  lang: z.string(),
  inputHash: z.string(),
  triggers: triggersSchema,
  summaryStage: stageSchema,
  confirmedSummary: z.string().optional(),
  featureStage: stageSchema.optional(),
  confirmedFeatures: z.array(featureSchema).optional(),
  elementsStage: stageSchema.optional(),
  confirmedElements: elementsSchema.optional(),
  agentStage: stageSchema.optional(),
  confirmedResults: z.array(finalResultSchema).optional(),
  exportStage: stageSchema.optional(),
  exportTitle: z.string().optional(),
  exportCount: z.number().int().nonnegative(),
  drift: z.strictObject({ seed: z.number().int(), run: z.number().int().nonnegative() }).optional(),
}) satisfies z.ZodType<NoveltyTask>;

const FIRST_REF = 'ai35-2';

const withDrift = (drift: DriftRun | undefined) => (drift ? { drift } : {});

const endsSentence = (text: string) => /[.!?。！？;；:：]$/u.test(text);

/**
 * The summary: the input's paragraphs with wrapped lines joined, section headings ("Technical
 * field") left out and a title line closed with a full stop, so features split into whole sentences.
 */
const summaryOf = (input: string) => {
  const sentences: string[] = [];
  const isHeading = (line: string) =>
    /^#{2,6}\s/.test(line) || (!endsSentence(line) && line.split(/\s+/).length <= 4);
  for (const paragraph of withoutMarkers(input).split(/\n\s*\n/)) {
    const raw = paragraph
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line.length > 0);
    // The document's title stays (it names the invention); section headings do not.
    while (raw[0] && isHeading(raw[0]) && (sentences.length > 0 || raw.length > 1)) raw.shift();
    const lines = raw.map((line) => line.replace(/^#{1,6}\s+/, '').replace(/^(\d+[.)]|[-*•])\s+/, ''));
    const text = lines.join(' ');
    if (text.length > 0) sentences.push(...sentencesOf(endsSentence(text) ? text : `${text}.`));
  }
  return (sentences.length > 0 ? sentences : sentencesOf(input)).slice(0, 8).join(' ');
};

function featuresOf(summary: string): Feature[] {
  const sentences = sentencesOf(summary).slice(0, 9);
  return sentences.map((sentence, index) => {
    const text = sentence.replace(/[.。;；]+$/u, '');
    const weight = index === 0 ? 'topic' : index <= 3 ? 'core' : 'general';
    return {
      feature_num: index === 0 ? 'F1' : `F1.${index}`,
      feature_text: text,
      feature_text_original: text,
      feature_weight: weight,
      feature_elements: keywordsOf(text, 3).join(', '),
      feature_function: `Provides ${keywordsOf(text, 1)[0] ?? 'the function'} as part of the solution`,
      feature_weight_reason:
        weight === 'topic'
          ? 'The subject of the technical solution'
          : 'Distinguishes the solution from common practice',
      selected: true,
      user_add: false,
    };
  });
}

function elementsOf(features: readonly Feature[], random: SeededRandom): Elements {
  return {
    family_merge_enabled: true,
    list: features.map((feature, index) => ({
      feature_text_original: feature.feature_text_original ?? feature.feature_text ?? '',
      feature_type:
        index === 0 ? 'topic_search' : feature.feature_weight === 'core' ? 'key_search' : 'sup_search',
      selected: true,
      express: keywordsOf(feature.feature_text ?? '', 2).map((word) => ({
        word: { key: word, source: 'keywords_extract' },
        extend: [
          { key: `${word}s`, source: 'keywords_extract' },
          { key: `${word}-based`, source: 'semantic_search' },
        ],
        ipc: [{ key: ipcCode(random), source: 'keywords_extract' }],
      })),
    })),
  };
}

/**
 * The documents the agent search finds, each compared with every selected feature. Their order, the
 * most similar one and their citation categories follow from the comparisons, as on the platform: by
 * public score (the mean of the feature scores); X when a document alone discloses most features, Y
 * when it discloses some (relevant in combination), A when it discloses none (background).
 */
function comparisonsOf(features: readonly Feature[], random: SeededRandom, lang: string): FinalResult[] {
  const count = random.int(5, 8);
  const documents = Array.from({ length: count }, () => {
    // How close the document is overall; its feature scores scatter around it.
    const relevance = random.int(45, 95);
    const compared = features.map((feature, claim) => {
      const score = Math.max(20, Math.min(100, relevance + random.int(-25, 25)));
      const type = score >= 80 ? 'public' : score >= 60 ? 'obvious' : 'unpublic';
      const reason = `The reference ${score >= 80 ? 'discloses' : 'only partly discloses'} "${feature.feature_text}".`;
      return {
        tech_feature: feature.feature_text ?? '',
        comparison_feature: `A ${keywordsOf(feature.feature_text ?? '', 1)[0] ?? 'component'} arrangement described in the embodiments`,
        compare_feature: feature.feature_text ?? '',
        score,
        original_score: score,
        similar: score >= 60,
        type,
        original_type: type,
        differ: score >= 80 ? 'NONE' : 'DIFFERENT',
        original_differ: score >= 80 ? 'NONE' : 'DIFFERENT',
        reason,
        original_reason: reason,
        claim_num: claim + 1,
        claim_type: claim === 0 ? 'independent' : 'dependent',
        public_score: Math.round(score) / 100,
      };
    });
    const mean = compared.reduce((sum, feature) => sum + feature.score, 0) / Math.max(1, compared.length);
    return { compared, publicScore: Math.round(mean) / 100, patentId: patentNumber(random) };
  }).sort((a, b) => b.publicScore - a.publicScore);
  return documents.map(({ compared, publicScore, patentId }, index) => {
    const disclosed = compared.filter((feature) => feature.type === 'public').length;
    const category = disclosed * 2 > compared.length ? 'X' : disclosed > 0 ? 'Y' : 'A';
    return {
      patent_id: patentId,
      document: `Prior art document ${index + 1}: ${compared[0]?.comparison_feature ?? ''}`,
      lang: lang.toUpperCase() === 'CN' ? 'CN' : 'EN',
      public_score: publicScore,
      features: compared,
      feature_match_num: compared.filter((feature) => feature.similar).length,
      selected: index < 3,
      most_similar: index === 0,
      user_added: false,
      creativity_type: category === 'X' ? 'public' : 'obvious',
      comparative_literature_category: category === 'X' ? 'novelty' : 'creativity',
      comparative_literature_type: category,
    };
  });
}

/**
 * With drift, run N of a search differs from run N - 1 by one document: gained (a new one) or lost,
 * keeping 5 to 8; the documents are then ranked again (closest first, the first three selected).
 */
function driftedResults(
  results: FinalResult[],
  task: NoveltyTask,
  features: readonly Feature[],
): FinalResult[] {
  const drift = task.drift;
  if (!drift || drift.run === 0) return results;
  let documents = [...results];
  for (let run = 1; run <= drift.run; run++) {
    const random = SeededRandom.from('drift', drift.seed, task.inputHash, run);
    const gain = documents.length <= 5 || (documents.length < 8 && random.chance(0.5));
    if (gain) {
      const known = new Set(documents.map((doc) => doc.patent_id));
      const found = comparisonsOf(features, random, task.lang).find((doc) => !known.has(doc.patent_id));
      if (found) documents.push(found);
    } else {
      documents.splice(random.int(0, documents.length - 1), 1);
    }
  }
  documents = documents.sort((a, b) => (b.public_score ?? 0) - (a.public_score ?? 0));
  return documents.map((doc, index) => ({
    ...doc,
    document: doc.document?.replace(/^Prior art document \d+/, `Prior art document ${index + 1}`),
    selected: index < 3,
    most_similar: index === 0,
  }));
}

/**
 * The documents the agent search found (once ai35-7 started it). They follow from the seed and the
 * confirmed features alone, so they are computed when first needed rather than kept (they would be
 * most of a task's size in a state file).
 */
const foundDocuments = new WeakMap<NoveltyTask, FinalResult[]>();
function resultsOf(task: NoveltyTask, seed: number): FinalResult[] {
  if (!task.agentStage) return [];
  let results = foundDocuments.get(task);
  if (!results) {
    const random = SeededRandom.from(seed, task.inputHash, 'ai35-8', stableJson(task.confirmedFeatures));
    const features = (task.confirmedFeatures ?? []).filter((f) => f.selected !== false);
    results = driftedResults(comparisonsOf(features, random, task.lang), task, features);
    foundDocuments.set(task, results);
  }
  return results;
}

export function createNoveltyOperations(registry: RegistryFactory): NoveltyOperations {
  const tasks = registry<NoveltyTask>('novelty', 'task_id', noveltyTaskSchema);

  const selectedFeatures = (task: NoveltyTask) =>
    (task.confirmedFeatures ?? []).filter((f) => f.selected !== false);

  const reportOutline = (task: NoveltyTask, seed: number) => {
    const documents = (task.confirmedResults ?? resultsOf(task, seed)).filter((doc) => doc.selected);
    const closest = documents[0];
    return {
      title: task.exportTitle || `Novelty search report: ${titleOf(task.input)}`,
      subtitle: 'Novelty search report generated by the opflow sandbox',
      sections: [
        { heading: 'Technical solution', paragraphs: [withoutMarkers(task.confirmedSummary ?? task.input)] },
        {
          heading: 'Technical features',
          paragraphs: selectedFeatures(task).map(
            (f) => `${f.feature_num} [${f.feature_weight}] ${f.feature_text}`,
          ),
        },
        {
          heading: 'Comparison documents',
          paragraphs: documents.map(
            (doc) =>
              `${doc.patent_id} (${doc.comparative_literature_type}, public score ${doc.public_score}): ${doc.feature_match_num} of ${doc.features?.length ?? 0} features similar.`,
          ),
        },
        {
          heading: 'Conclusion',
          paragraphs: [
            closest
              ? `The closest prior art is ${closest.patent_id}; novelty depends on the features it does not disclose.`
              : 'No comparison document was selected.',
          ],
        },
      ],
    };
  };

  const agentResult = (taskId: string, task: NoveltyTask, context: OperationContext, stage: Stage) => {
    const state = stageState(stage, context.now);
    const features = selectedFeatures(task);
    const base = {
      lang: task.lang,
      is_async: true,
      request: { async: true, task_id: taskId, operate_type: 'generate' },
      operate_type: 'generate',
      excute_times: 1,
      update_ts: new Date(context.now).toISOString().replace('T', ' ').replace('Z', ''),
    };
    if (state !== 'succeeded') {
      return { ...base, task_status: state === 'running' ? 'running' : 'failed', final_result: [] };
    }
    const results = resultsOf(task, context.seed);
    return {
      ...base,
      task_status: 'success',
      task_cost: Math.round(stage.durationMs / 100) / 10,
      find_patent_num: results.length,
      final_result: results,
      feature_keywords: features.map((f) => ({
        feature: f.feature_text,
        weight: 0.8,
        keywords: keywordsOf(f.feature_text ?? '', 3),
      })),
      process_dict_keys: ['S1'],
      process_dict: { S1: { title: 'Keyword search', count: results.length } },
      feature_analysis_result: {
        summary_result: { tech_solution: task.confirmedSummary, tech_subject: features[0]?.feature_text },
        feature_extract_result: features,
        keywords_extract_result: task.confirmedElements?.list ?? [],
      },
    };
  };

  return {
    'ai35-1NoveltySearchSubmit': (body, context) => {
      const taskId = context.newId('hex');
      const triggers = triggersIn(body);
      tasks.add(taskId, {
        owner: context.owner,
        input: body.input,
        lang: body.lang,
        inputHash: hashText(body.input),
        triggers,
        summaryStage: context.startStage(
          'ai35-1NoveltySearchSubmit',
          taskId,
          failsAt(triggers, 'ai35-2', FIRST_REF),
        ),
        exportCount: 0,
        ...withDrift(context.drift(`ai35-1\u0000${body.lang}\u0000${body.input}`)),
      });
      return json({ task_id: taskId }, taskId);
    },

    'ai35-2TechSolutionGet': (body, context) => {
      const task = tasks.get(body.task_id, context.owner);
      const state = stageState(task.summaryStage, context.now);
      return json({
        status: numericStatus(state),
        ...(state === 'succeeded' ? { tech_solution: summaryOf(withoutMarkers(task.input)) } : {}),
      });
    },

    'ai35-3TechSolutionUpdate': (body, context) => {
      const task = tasks.get(body.task_id, context.owner);
      requireSucceeded(task.summaryStage, context.now, 'ai35-3', 'the summary of ai35-2', 'ai35-1');
      const summary = body.tech_solution ?? summaryOf(withoutMarkers(task.input));
      confirmOnce(
        task.confirmedSummary,
        summary,
        'ai35-3 already confirmed a different summary for this task',
        () => {
          task.confirmedSummary = summary;
          task.featureStage = context.startStage(
            'ai35-3TechSolutionUpdate',
            body.task_id,
            failsAt(task.triggers, 'ai35-4', FIRST_REF),
          );
        },
      );
      return json({ task_id: body.task_id });
    },

    'ai35-4FeatureExtract': (body, context) => {
      const task = tasks.get(body.task_id, context.owner);
      requireStarted(task.featureStage, 'ai35-4', 'ai35-3 (confirm the summary)');
      const state = stageState(task.featureStage, context.now);
      return json({
        status: numericStatus(state),
        data: state === 'succeeded' ? featuresOf(task.confirmedSummary ?? '') : [],
      });
    },

    'ai35-5FeatureConfirm': (body, context) => {
      const task = tasks.get(body.task_id, context.owner);
      requireSucceeded(task.featureStage, context.now, 'ai35-5', 'the features of ai35-4', 'ai35-3');
      const offered = featuresOf(task.confirmedSummary ?? '');
      const features = body.tech_features ?? offered;
      features.forEach((feature, index) => {
        if (feature.user_add) {
          if (!feature.feature_text)
            throw invalidParameter(
              `tech_features[${index}].feature_text: a feature the user adds needs a text`,
            );
          return;
        }
        if (!offered.some((candidate) => candidate.feature_num === feature.feature_num)) {
          throw invalidParameter(
            `tech_features[${index}].feature_num: ${JSON.stringify(feature.feature_num ?? null)} was not offered by ai35-4 (mark added features with user_add: true)`,
          );
        }
      });
      if (!features.some((feature) => feature.selected !== false)) {
        throw invalidParameter('tech_features: select at least one feature');
      }
      confirmOnce(
        task.confirmedFeatures,
        features,
        'ai35-5 already confirmed different features for this task',
        () => {
          task.confirmedFeatures = features;
          task.elementsStage = context.startStage(
            'ai35-5FeatureConfirm',
            body.task_id,
            failsAt(task.triggers, 'ai35-6', FIRST_REF),
          );
        },
      );
      return json({ task_id: body.task_id });
    },

    'ai35-6RetrievalElements': (body, context) => {
      const task = tasks.get(body.task_id, context.owner);
      requireStarted(task.elementsStage, 'ai35-6', 'ai35-5 (confirm the features)');
      const state = stageState(task.elementsStage, context.now);
      if (state !== 'succeeded') return json({ status: numericStatus(state) });
      const random = SeededRandom.from(
        context.seed,
        task.inputHash,
        'ai35-6',
        stableJson(task.confirmedFeatures),
      );
      return json({ status: 2, elements: elementsOf(selectedFeatures(task), random) });
    },

    'ai35-7NoveltySearchAgentSearch': (body, context) => {
      const task = tasks.get(body.task_id, context.owner);
      requireSucceeded(task.elementsStage, context.now, 'ai35-7', 'the search elements of ai35-6', 'ai35-5');
      const list = body.elements.list;
      if (list && !list.some((element) => element.selected !== false)) {
        throw invalidParameter('elements.list: select at least one search element');
      }
      confirmOnce(
        task.confirmedElements,
        body.elements,
        'ai35-7 already started the agent search with different elements',
        () => {
          task.confirmedElements = body.elements;
          task.agentStage = context.startStage(
            'ai35-7NoveltySearchAgentSearch',
            body.task_id,
            failsAt(task.triggers, 'ai35-8', FIRST_REF),
          );
        },
      );
      return json({ task_id: body.task_id });
    },

    'ai35-8NoveltySearchAgentResult': (body, context) => {
      const task = tasks.get(body.task_id, context.owner);
      requireStarted(task.agentStage, 'ai35-8', 'ai35-7 (confirm the search elements)');
      return json(agentResult(body.task_id, task, context, task.agentStage));
    },

    'ai35-9ComparisonConfirm': (body, context) => {
      const task = tasks.get(body.task_id, context.owner);
      requireSucceeded(task.agentStage, context.now, 'ai35-9', 'the agent search of ai35-8', 'ai35-7');
      const offered = new Set(resultsOf(task, context.seed).map((doc) => doc.patent_id));
      const documents = body.final_result ?? resultsOf(task, context.seed);
      documents.forEach((doc, index) => {
        if (doc.selected && !doc.user_added && !offered.has(doc.patent_id)) {
          throw invalidParameter(
            `final_result[${index}].patent_id: ${JSON.stringify(doc.patent_id ?? null)} was not found by ai35-8 (mark added documents with user_added: true)`,
          );
        }
      });
      task.confirmedResults = documents;
      return json({ task_id: body.task_id });
    },

    'ai35-10NoveltySearchExport': (body, context) => {
      const task = tasks.get(body.task_id, context.owner);
      requireSucceeded(task.agentStage, context.now, 'ai35-10', 'the agent search of ai35-8', 'ai35-7');
      task.exportCount += 1;
      task.exportTitle = body.title;
      task.exportStage = context.startStage(
        'ai35-10NoveltySearchExport',
        `${body.task_id}:${task.exportCount}`,
        failsAt(task.triggers, 'ai35-11', FIRST_REF),
      );
      return json({ task_id: body.task_id }, `${body.task_id}:export:${task.exportCount}`);
    },

    'ai35-11ReportGet': (body, context) => {
      const task = tasks.get(body.task_id, context.owner);
      requireStarted(task.exportStage, 'ai35-11', 'ai35-10 (export the report)');
      const state = stageState(task.exportStage, context.now);
      if (state !== 'succeeded') return json({ task_id: body.task_id, status: numericStatus(state) });
      const reportUrl = context.publish(`novelty:${body.task_id}:${task.exportCount}`, () => ({
        fileName: `novelty-report-${body.task_id.slice(0, 8)}.pdf`,
        format: 'pdf',
        outline: reportOutline(task, context.seed),
      }));
      return json({ task_id: body.task_id, status: 2, report_url: reportUrl });
    },

    'ai35-12ComparisonGenerate': (body, context) => {
      const random = SeededRandom.from(context.seed, hashText(stableJson(body)), 'ai35-12');
      const features = body.tech_features.filter((f) => f.selected !== false);
      const scored = features.map((feature) => {
        const score = random.int(30, 100);
        return {
          tech_feature: feature.feature_text ?? feature.feature_text_original ?? '',
          comparison_feature: `${capitalise(keywordsOf(feature.feature_text ?? '', 1)[0] ?? 'component')} as described in ${body.request.pn}`,
          score,
          public_score: score,
          type: score >= 80 ? 'public' : score >= 60 ? 'obvious' : 'unpublic',
          differ: score >= 80 ? 'NONE' : 'DIFFERENT',
        };
      });
      const publicScore =
        scored.length > 0 ? Math.round(scored.reduce((sum, f) => sum + f.score, 0) / scored.length) / 100 : 0;
      return json(
        {
          threshold: 60,
          final_res: [
            {
              patent_id: body.request.pn,
              document: `Document ${body.request.pn}`,
              lang: 'EN',
              public_score: publicScore,
              claims: [
                {
                  claim_num: 1,
                  claim_text: `A device comprising ${scored.map((f) => f.tech_feature).join('; ') || 'the claimed elements'}.`,
                },
              ],
              features: scored,
            },
          ],
        },
        body.request.pn,
      );
    },
  };
}
