/**
 * FTO search, ai66-1..8: submit a technical (or product) description with the markets to clear
 * (`country`) and the legal statuses to consider; ai66-2 answers its technical features once the
 * analysis started by ai66-1 is done (an empty list while it runs); ai66-3 confirms the chosen ones;
 * ai66-4 starts the search agent; ai66-5 answers, after minutes, the patents found in those markets,
 * each compared claim by claim with the features, with a risk level and a conclusion; ai66-6 creates
 * the report of 1 to 5 of them and ai66-7 polls for its PDF. ai66-8 compares one more patent, named
 * by its number, synchronously.
 */
import * as z from 'zod';
import { requestSchemas } from '../../openplatform/schemas/requests';
import type { DriftRun } from '../drift';
import { invalidParameter, outOfOrder } from '../sandbox-rejection';
import { hashText, SeededRandom, stableJson } from '../seeded';
import { numericStatus, type Stage, stageSchema, stageState } from '../stages';
import { keywordsOf, sentencesOf, titleOf } from '../text-content';
import { failsAt, type Triggers, triggersIn, triggersSchema, withoutMarkers } from '../triggers';
import { bibliographyRecord } from './bibliography';
import {
  json,
  type OperationContext,
  type OperationHandlers,
  type RegistryFactory,
  type RequestBody,
} from './contract';
import { ftoLegalStatusCode, simpleLegalStatus } from './patent-status';
import { confirmOnce, requireStarted, requireSucceeded } from './step-order';

type FtoOperations = Pick<
  OperationHandlers,
  | 'ai66-1FtoSubmit'
  | 'ai66-2FeatureExtract'
  | 'ai66-3FeatureConfirm'
  | 'ai66-4SearchAgent'
  | 'ai66-5AgentResult'
  | 'ai66-6ReportCreate'
  | 'ai66-7ReportGet'
  | 'ai66-8FeatureComparison'
>;

type Feature = RequestBody<'ai66-3FeatureConfirm'>['tech_features'][number];
type Patent = RequestBody<'ai66-6ReportCreate'>['final_res'][number];

interface FtoTask {
  owner: string;
  input: string;
  lang: string;
  inputHash: string;
  /** The patent offices searched; empty: the sandbox's usual ones. */
  countries: string[];
  /** ai66-1's legal_status codes (0 invalid, 1 valid, 2 under examination). */
  legalStatus: number[];
  triggers: Triggers;
  analysisStage: Stage;
  confirmedFeatures?: Feature[];
  agentStage?: Stage;
  reportStage?: Stage;
  reportTitle?: string;
  reportPatents?: string[];
  reportCount: number;
  drift?: DriftRun;
}

const featureSchema = requestSchemas['ai66-3FeatureConfirm'].shape.tech_features.element;

const ftoTaskSchema = z.strictObject({
  owner: z.string().min(1),
  input: z.string(),
  lang: z.string(),
  inputHash: z.string(),
  countries: z.array(z.string()),
  legalStatus: z.array(z.number().int()),
  triggers: triggersSchema,
  analysisStage: stageSchema,
  confirmedFeatures: z.array(featureSchema).optional(),
  agentStage: stageSchema.optional(),
  reportStage: stageSchema.optional(),
  reportTitle: z.string().optional(),
  reportPatents: z.array(z.string()).optional(),
  reportCount: z.number().int().nonnegative(),
  drift: z.strictObject({ seed: z.number().int(), run: z.number().int().nonnegative() }).optional(),
}) satisfies z.ZodType<FtoTask>;

const FIRST_REF = 'ai66-2';
/** The offices searched when ai66-1 names none. */
const USUAL_OFFICES = ['CN', 'US', 'EP', 'JP'];
/** The feature score from which a feature is preselected. */
const THRESHOLD = 60;

/** The description's technical features: its sentences, the first (the subject) core. */
function featuresOf(input: string, random: SeededRandom): Feature[] {
  const sentences = sentencesOf(withoutMarkers(input))
    .map((sentence) => sentence.replace(/[.。;；]+$/u, '').trim())
    .filter((sentence) => sentence.length > 0)
    .slice(0, 8);
  return sentences.map((sentence, index) => {
    const score = index === 0 ? 100 : index <= 3 ? random.int(65, 95) : random.int(35, 80);
    return {
      tech_feature: sentence,
      keywords: keywordsOf(sentence, 3),
      score,
      core: index === 0 || score >= 85,
      is_select: score >= THRESHOLD,
      user_add: false,
      reason:
        index === 0
          ? 'The subject of the technical solution.'
          : score >= THRESHOLD
            ? 'A feature that distinguishes the solution; patents claiming it matter.'
            : 'A common or optional detail; it rarely decides infringement.',
    };
  });
}

/** A publication number at `office`, seeded. */
function numberAt(office: string, random: SeededRandom): string {
  switch (office) {
    case 'US':
      return random.chance(0.6)
        ? `US${random.digits(8)}B2`
        : `US${random.int(2018, 2024)}${random.digits(7)}A1`;
    case 'EP':
      return `EP${random.digits(7)}${random.pick(['B1', 'A1'])}`;
    case 'CN':
      return `CN${random.digits(9)}${random.pick(['B', 'A'])}`;
    case 'WO':
      return `WO${random.int(2016, 2024)}${random.digits(6)}A1`;
    case 'JP':
      return `JP${random.digits(7)}B2`;
    default:
      return `${office}${random.digits(8)}${random.pick(['B1', 'A'])}`;
  }
}

type ClaimElement = { text: string; feature: Feature | undefined };

/** `A spring-loaded pawl ...` → `a spring-loaded pawl ...` (a claim element's case). */
const lowerFirst = (text: string) => text.charAt(0).toLowerCase() + text.slice(1);

const NARROWING = [
  'a second sensor',
  'a stepped profile',
  'a closed control loop',
  'a ceramic insert',
  'a timer',
];

/**
 * One independent claim: its subject, then an element per chosen feature. Some elements claim the
 * feature narrowed by a means the technical solution does not have, so they do not read on it.
 */
function independentClaim(features: readonly Feature[], random: SeededRandom, kind: 'method' | 'device') {
  const subject = lowerFirst(features[0]?.tech_feature ?? 'A device').replace(/^(a|an|the)\s+/i, '');
  const elements: ClaimElement[] = features.slice(1, 6).map((feature) => {
    const narrowed = random.chance(0.3);
    const text = narrowed
      ? `${lowerFirst(feature.tech_feature)} by means of ${random.pick(NARROWING)}`
      : lowerFirst(feature.tech_feature);
    return { text, feature: narrowed ? undefined : feature };
  });
  const preamble =
    kind === 'method' ? `A method of operating a ${subject}, comprising` : `A ${subject}, comprising`;
  return { preamble, elements };
}

/** A compared element's score: high when the claim element reads on a chosen feature. */
function elementScore(element: ClaimElement, random: SeededRandom, closeness: number): number {
  if (!element.feature) return random.int(20, 55);
  return Math.max(40, Math.min(100, closeness + random.int(-15, 10)));
}

const comparisonType = (score: number) =>
  score >= 90 ? 'identical' : score >= 70 ? 'equivalent' : 'different';

/** A patent at `office` compared claim by claim with the confirmed features. */
function comparedPatent(
  seed: number,
  pn: string,
  features: readonly Feature[],
  random: SeededRandom,
  lang: string,
): Patent {
  const closeness = random.int(55, 100);
  const claims: { claim_num: number; claim_text: string }[] = [];
  const compared: Patent['features'] = [];
  const equivalent: { claim_num: number; infringement: boolean }[] = [];
  const independents = random.chance(0.5) ? (['method', 'device'] as const) : (['device'] as const);
  let claimNum = 1;
  let dependentTotal = 0;
  let dependentEquivalent = 0;
  let independentEquivalent = 0;
  for (const kind of independents) {
    const claim = independentClaim(features, random, kind);
    const number = claimNum;
    const text = `${number}. ${claim.preamble}: ${claim.elements.map((element) => element.text).join('; ')}.`;
    claims.push({ claim_num: number, claim_text: text });
    let all = true;
    for (const element of claim.elements) {
      const score = elementScore(element, random, closeness);
      const type = comparisonType(score);
      if (type === 'different') all = false;
      compared.push({
        claim_num: number,
        claim_type: 'independent',
        tech_feature: element.text,
        comparison_feature: element.feature?.tech_feature ?? 'Not in the product (it has no such means)',
        score,
        similar: type !== 'different',
        type,
        public_score: Math.round(score) / 100,
      });
    }
    equivalent.push({ claim_num: number, infringement: all });
    if (all) independentEquivalent += 1;
    const dependents = random.int(2, 4);
    for (let d = 1; d <= dependents; d++) {
      const dependentNumber = number + d;
      const reads = all && random.chance(0.6);
      claims.push({
        claim_num: dependentNumber,
        claim_text: `${dependentNumber}. The ${kind} of claim ${number}, wherein ${random.pick(['the housing is sealed', 'the threshold is adjustable', 'the controller stores a table of set points', 'the layer is less than 2 mm thick'])}.`,
      });
      equivalent.push({ claim_num: dependentNumber, infringement: reads });
      dependentTotal += 1;
      if (reads) dependentEquivalent += 1;
    }
    claimNum = number + dependents + 1;
  }
  const matched = compared.filter((row) => row.similar).length;
  const risk = independentEquivalent > 0 ? 'High' : matched * 3 >= compared.length * 2 ? 'Medium' : 'Low';
  const record = bibliographyRecord(seed, pn, 'number');
  const filed = record.bibliographic_data?.application_reference?.date ?? 20200101;
  const expiry = `${Math.floor(filed / 10_000) + 20}-${String(Math.floor(filed / 100) % 100).padStart(2, '0')}-${String(filed % 100).padStart(2, '0')}`;
  const office = pn.slice(0, 2);
  const covering = equivalent.filter((claim) => claim.infringement).map((claim) => claim.claim_num);
  const en =
    covering.length > 0
      ? `The features of claims ${covering.join(', ')} of ${pn} are identical or equivalent to those of the technical solution, which therefore falls within their scope. Implementing the technical solution in ${office} before ${expiry} is not recommended without a licence, a design-around or an invalidity position.`
      : `Every independent claim of ${pn} has at least one feature the technical solution does not have (${compared.filter((row) => !row.similar).length} of ${compared.length} elements differ); the technical solution does not fall within their literal scope. Keep the differences in the product.`;
  return {
    patent_id: pn,
    document: titleOf(record.bibliographic_data?.invention_title?.[0]?.text ?? pn),
    lang: lang.toUpperCase() === 'CN' ? 'CN' : 'EN',
    claims,
    features: compared,
    feature_match_num: matched,
    public_score:
      Math.round(compared.reduce((sum, row) => sum + row.score, 0) / Math.max(1, compared.length)) / 100,
    risk_level: risk,
    independent_claim_num: independents.length,
    dependent_claim_num: dependentTotal,
    equivalent_independent_claim_num: independentEquivalent,
    equivalent_dependent_claim_num: dependentEquivalent,
    claim_equivalent_info: equivalent,
    comparison_conclusion: { en, zh: '' },
    comparative_literature_type: risk === 'High' ? 'X' : risk === 'Medium' ? 'Y' : 'A',
    selected: false,
    most_similar: false,
    user_added: false,
  };
}

const RISK_ORDER: Record<string, number> = { High: 0, Medium: 1, Low: 2 };

/**
 * The patents the agent finds: two or three per office searched, whose legal status the filter
 * allows, ranked by risk then score (the first three selected). They follow from the seed, the
 * input, the offices and the confirmed features, so they are computed when needed, not kept.
 */
const foundPatents = new WeakMap<FtoTask, Patent[]>();
function patentsOf(task: FtoTask, seed: number): Patent[] {
  if (!task.agentStage || task.triggers.noResults) return [];
  const known = foundPatents.get(task);
  if (known) return known;
  const features = (task.confirmedFeatures ?? []).filter((feature) => feature.is_select);
  const random = SeededRandom.from(
    seed,
    task.inputHash,
    'ai66-5',
    stableJson(task.confirmedFeatures),
    task.drift ? `${task.drift.seed}:${task.drift.run}` : '',
  );
  const offices = task.countries.length > 0 ? task.countries : USUAL_OFFICES;
  const allowed = new Set(task.legalStatus.length > 0 ? task.legalStatus : [0, 1, 2]);
  const patents: Patent[] = [];
  for (const office of offices) {
    const wanted = random.int(1, 3);
    for (let tries = 0, found = 0; found < wanted && tries < 20; tries++) {
      const pn = numberAt(office, random);
      if (!allowed.has(ftoLegalStatusCode(simpleLegalStatus(seed, pn)))) continue;
      patents.push(comparedPatent(seed, pn, features, random, task.lang));
      found += 1;
    }
  }
  const ranked = patents
    .sort(
      (a, b) =>
        (RISK_ORDER[a.risk_level ?? 'Low'] ?? 2) - (RISK_ORDER[b.risk_level ?? 'Low'] ?? 2) ||
        b.public_score - a.public_score,
    )
    .map((patent, index) => ({ ...patent, selected: index < 3, most_similar: index === 0 }));
  foundPatents.set(task, ranked);
  return ranked;
}

export function createFtoOperations(registry: RegistryFactory): FtoOperations {
  const tasks = registry<FtoTask>('fto', 'task_id', ftoTaskSchema);

  const offeredFeatures = (task: FtoTask, seed: number) =>
    featuresOf(task.input, SeededRandom.from(seed, task.inputHash, 'ai66-2'));

  const agentResult = (taskId: string, task: FtoTask, context: OperationContext, stage: Stage) => {
    const state = stageState(stage, context.now);
    const base = {
      task_id: taskId,
      lang: task.lang.toUpperCase(),
      is_async: true,
      operate_type: 'generate',
      excute_times: 1,
      cc_threshold: THRESHOLD,
      update_ts: new Date(context.now).toISOString().replace('T', ' ').replace('Z', ''),
    };
    if (state !== 'succeeded') {
      return { ...base, task_status: state === 'running' ? 'running' : 'failed', final_result: [] };
    }
    const patents = patentsOf(task, context.seed);
    return {
      ...base,
      task_status: 'success',
      task_cost: Math.round(stage.durationMs / 100) / 10,
      find_patent_num: patents.length,
      total_comparison_patent_num: patents.length * 6,
      cc_pids: patents.map((patent) => patent.patent_id),
      final_result: patents,
      feature_keywords: (task.confirmedFeatures ?? [])
        .filter((feature) => feature.is_select)
        .map((feature) => ({ tech_feature: feature.tech_feature, synonym: feature.keywords })),
    };
  };

  const reportOutline = (task: FtoTask, seed: number) => {
    const chosen = new Set(task.reportPatents ?? []);
    const patents = patentsOf(task, seed).filter((patent) => chosen.has(patent.patent_id));
    return {
      title: task.reportTitle || `FTO search report: ${titleOf(task.input)}`,
      subtitle: 'Freedom-to-operate search report generated by the opflow sandbox',
      sections: [
        { heading: 'Technical solution', paragraphs: [withoutMarkers(task.input)] },
        {
          heading: 'Markets',
          paragraphs: [(task.countries.length > 0 ? task.countries : USUAL_OFFICES).join(', ')],
        },
        {
          heading: 'Patents analysed',
          paragraphs: patents.map(
            (patent) =>
              `${patent.patent_id}: ${patent.risk_level} risk, ${patent.feature_match_num} of ${patent.features.length} claim elements matched.`,
          ),
        },
        {
          heading: 'Conclusion',
          paragraphs: patents.map((patent) => String(patent.comparison_conclusion.en ?? '')),
        },
      ],
    };
  };

  return {
    'ai66-1FtoSubmit': (body, context) => {
      const taskId = context.newId('uuid');
      const triggers = triggersIn(body);
      const lang = body.lang ?? 'cn';
      const drift = context.drift(`ai66-1\u0000${lang}\u0000${body.input}`);
      tasks.add(taskId, {
        owner: context.owner,
        input: body.input,
        lang,
        inputHash: hashText(body.input),
        countries: [...new Set(body.country ?? [])],
        legalStatus: [...new Set(body.legal_status ?? [])],
        triggers,
        analysisStage: context.startStage('ai66-1FtoSubmit', taskId, failsAt(triggers, 'ai66-2', FIRST_REF)),
        reportCount: 0,
        ...(drift ? { drift } : {}),
      });
      return json({ task_id: taskId }, taskId);
    },

    'ai66-2FeatureExtract': (body, context) => {
      const task = tasks.get(body.task_id, context.owner);
      const state = stageState(task.analysisStage, context.now);
      if (state === 'failed') {
        requireSucceeded(task.analysisStage, context.now, 'ai66-2', 'the analysis of ai66-1', 'ai66-1');
      }
      const text = withoutMarkers(task.input);
      if (state === 'running') return json({ text, features: [], threshold: THRESHOLD });
      return json({ text, features: offeredFeatures(task, context.seed), threshold: THRESHOLD });
    },

    'ai66-3FeatureConfirm': (body, context) => {
      const task = tasks.get(body.task_id, context.owner);
      requireSucceeded(task.analysisStage, context.now, 'ai66-3', 'the features of ai66-2', 'ai66-1');
      const offered = new Set(offeredFeatures(task, context.seed).map((feature) => feature.tech_feature));
      body.tech_features.forEach((feature, index) => {
        if (!feature.user_add && !offered.has(feature.tech_feature)) {
          throw invalidParameter(
            `tech_features[${index}].tech_feature: ${JSON.stringify(feature.tech_feature)} was not offered by ai66-2 (mark added features with user_add: true)`,
          );
        }
      });
      if (!body.tech_features.some((feature) => feature.is_select)) {
        throw invalidParameter('tech_features: select at least one feature (is_select: true)');
      }
      confirmOnce(
        task.confirmedFeatures,
        body.tech_features,
        'ai66-3 already confirmed different features for this task',
        () => {
          task.confirmedFeatures = body.tech_features;
        },
      );
      return json({ task_id: body.task_id });
    },

    'ai66-4SearchAgent': (body, context) => {
      const task = tasks.get(body.task_id, context.owner);
      if (!task.confirmedFeatures) throw outOfOrder('ai66-4 needs confirmed features: call ai66-3 first');
      // A repeated start (a retried call) changes nothing: the search already runs.
      task.agentStage ??= context.startStage(
        'ai66-4SearchAgent',
        body.task_id,
        failsAt(task.triggers, 'ai66-5', FIRST_REF),
      );
      return json({ task_id: body.task_id });
    },

    'ai66-5AgentResult': (body, context) => {
      const task = tasks.get(body.task_id, context.owner);
      requireStarted(task.agentStage, 'ai66-5', 'ai66-4 (start the FTO search)');
      return json(agentResult(body.task_id, task, context, task.agentStage));
    },

    'ai66-6ReportCreate': (body, context) => {
      const task = tasks.get(body.task_id, context.owner);
      requireSucceeded(task.agentStage, context.now, 'ai66-6', 'the FTO search of ai66-5', 'ai66-4');
      const found = new Set(patentsOf(task, context.seed).map((patent) => patent.patent_id));
      body.final_res.forEach((patent, index) => {
        if (!patent.user_added && !found.has(patent.patent_id)) {
          throw invalidParameter(
            `final_res[${index}].patent_id: ${JSON.stringify(patent.patent_id)} was not found by ai66-5 (add a patent with ai66-8 and mark it user_added: true)`,
          );
        }
      });
      task.reportCount += 1;
      task.reportTitle = body.title;
      task.reportPatents = body.final_res.map((patent) => patent.patent_id);
      task.reportStage = context.startStage(
        'ai66-6ReportCreate',
        `${body.task_id}:${task.reportCount}`,
        failsAt(task.triggers, 'ai66-7', FIRST_REF),
      );
      return json({ task_id: body.task_id }, `${body.task_id}:report:${task.reportCount}`);
    },

    'ai66-7ReportGet': (body, context) => {
      const task = tasks.get(body.task_id, context.owner);
      requireStarted(task.reportStage, 'ai66-7', 'ai66-6 (create the report)');
      const state = stageState(task.reportStage, context.now);
      if (state !== 'succeeded') return json({ task_id: body.task_id, status: numericStatus(state) });
      const reportUrl = context.publish(`fto:${body.task_id}:${task.reportCount}`, () => ({
        fileName: `fto-report-${body.task_id.slice(0, 8)}.pdf`,
        format: 'pdf',
        outline: reportOutline(task, context.seed),
      }));
      return json({ task_id: body.task_id, status: 2, report_url: reportUrl });
    },

    'ai66-8FeatureComparison': (body, context) => {
      const task = tasks.get(body.task_id, context.owner);
      if (!task.confirmedFeatures) throw outOfOrder('ai66-8 needs confirmed features: call ai66-3 first');
      const features = task.confirmedFeatures.filter((feature) => feature.is_select);
      const random = SeededRandom.from(context.seed, task.inputHash, 'ai66-8', body.pn);
      const compared = comparedPatent(context.seed, body.pn, features, random, task.lang);
      // ai66-8 answers the comparison only: no risk, claim counts or conclusion (ai66-6 takes it as is).
      const patent = {
        patent_id: compared.patent_id,
        document: compared.document,
        lang: compared.lang,
        claims: compared.claims,
        public_score: compared.public_score,
        features: compared.features.map(({ score, public_score, tech_feature, comparison_feature }) => ({
          score,
          public_score,
          tech_feature,
          comparison_feature,
        })),
      };
      return json({ final_res: [patent], threshold: THRESHOLD }, `${body.task_id}:${body.pn}`);
    },
  };
}
