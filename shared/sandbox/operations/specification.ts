/**
 * Specification drafting (CNIPA), ai37-1..5. ai37-1 takes a disclosure and its claims and answers a
 * `task_id`; the initialisation (classification, category, problem/methods/benefit, an embodiment
 * outline per independent claim) takes about a minute, polled with ai37-2 (`status` 1/2/3). ai37-3
 * answers the claims' feature tree (each claim's features and concept words, its parent claims) and
 * the term list at once. ai37-4 starts the drafting of the specification from what the caller sends
 * back (features marked `feature_deleted: 1` are left out) and answers the drafting's own `task_id`;
 * ai37-5 polls it and answers a link to the specification (.docx). The same input answers the same
 * way (seeded by its text).
 */
import * as z from 'zod';
import { ipcCode } from '../prior-art';
import { hashText, SeededRandom } from '../seeded';
import { numericStatus, type Stage, stageSchema, stageState } from '../stages';
import { capitalise, keywordsOf, sentencesOf, titleOf } from '../text-content';
import { failsAt, type Triggers, triggersIn, triggersSchema, withoutMarkers } from '../triggers';
import { json, type OperationHandlers, type RegistryFactory, type RequestBody } from './contract';
import { requireStarted, requireSucceeded } from './step-order';

type SpecificationOperations = Pick<
  OperationHandlers,
  | 'ai37-1InitCnipa'
  | 'ai37-2InitResultCnipa'
  | 'ai37-3ExtractFeatureCnipa'
  | 'ai37-4GenerateReportCnipa'
  | 'ai37-5SpecificationDownloadReport'
>;

interface DraftingTask {
  owner: string;
  claim: string;
  disclosure: string;
  inputHash: string;
  triggers: Triggers;
  initStage: Stage;
}

interface DraftRequest {
  owner: string;
  /** The initialisation task the draft belongs to. */
  taskId: string;
  /** ai37-4's body as sent (echoed into the document). */
  body: string;
  stage: Stage;
}

const draftingTaskSchema = z.strictObject({
  owner: z.string().min(1),
  claim: z.string(),
  disclosure: z.string(),
  inputHash: z.string(),
  triggers: triggersSchema,
  initStage: stageSchema,
}) satisfies z.ZodType<DraftingTask>;

const draftRequestSchema = z.strictObject({
  owner: z.string().min(1),
  taskId: z.string().min(1),
  body: z.string(),
  stage: stageSchema,
}) satisfies z.ZodType<DraftRequest>;

const FIRST_REF = 'ai37-2';

export interface ParsedClaim {
  num: number;
  text: string;
  /** The claims it refers back to; empty for an independent claim. */
  parents: number[];
}

const CLAIM_START = /(?:^|\n)\s*(\d{1,3})\s*[.、．)]\s*/g;
const BACK_REFERENCE =
  /(?:claims?|权利要求)\s*(\d{1,3})(?:\s*(?:-|–|to|至|或|or)\s*(\d{1,3}))?(?:\s*(?:,|and|或)\s*(\d{1,3}))*/gi;

/** The numbered claims of a claim set, each with the claims it depends on. */
export function parseClaims(text: string): ParsedClaim[] {
  const clean = withoutMarkers(text).replace(/\r\n?/g, '\n');
  const starts = [...clean.matchAll(CLAIM_START)];
  if (starts.length === 0) return [{ num: 1, text: clean.trim(), parents: [] }];
  return starts.map((match, index) => {
    const num = Number(match[1]);
    const from = (match.index ?? 0) + match[0].length;
    const to = starts[index + 1]?.index ?? clean.length;
    const body = clean.slice(from, to).replace(/\s+/g, ' ').trim();
    const parents = new Set<number>();
    for (const reference of body.matchAll(BACK_REFERENCE)) {
      const first = Number(reference[1]);
      const last = reference[2] ? Number(reference[2]) : first;
      for (let n = first; n <= last && n < num; n++) parents.add(n);
    }
    return { num, text: body, parents: [...parents] };
  });
}

/** The features of a claim: its parts between semicolons, commas before "wherein", or "comprising". */
function claimFeatures(text: string): string[] {
  const parts = text
    .split(/[;；]|,\s*(?=wherein|characterised|characterized|其特征在于)|(?<=comprising)[:：]?\s+|：/i)
    .map((part) => part.replace(/^(and|以及)\s+/i, '').trim())
    .filter((part) => part.replace(/[\p{P}\s]/gu, '').length > 2);
  return parts.length > 0 ? parts : [text];
}

/** Words of claim language, never a term of the invention. */
const CLAIM_WORDS = new Set(
  'according claim claims comprising comprises characterised characterized wherein whereby until thereof therein said which'.split(
    ' ',
  ),
);

const termsOf = (feature: string) =>
  keywordsOf(feature, 8)
    .filter((word) => !CLAIM_WORDS.has(word))
    .slice(0, 5);

const isChinese = (text: string) => /\p{Script=Han}/u.test(text);

/** Composition of matter, Machine, Process or Manufacture, from the first claim's wording. */
function categoryOf(claims: ParsedClaim[]): string {
  const first = (claims[0]?.text ?? '').toLowerCase();
  if (isChinese(first))
    return /方法|工艺/.test(first) ? '方法' : /组合物|材料/.test(first) ? '组合物' : '设备';
  if (/\b(method|process)\b/.test(first.slice(0, 80))) return 'Process';
  if (/\b(composition|compound|formulation|alloy)\b/.test(first.slice(0, 80))) return 'Composition of matter';
  if (/\b(manufactur\w*|article)\b/.test(first.slice(0, 80))) return 'Manufacture';
  return 'Machine';
}

/** A short line without end punctuation: a section heading of the disclosure ("Background"). */
const isHeadingLine = (line: string) =>
  line.trim() !== '' && line.trim().split(/\s+/).length <= 4 && !/[.。;；:：,，]$/.test(line.trim());

/**
 * What the disclosure says under a heading that matches `section` ("Background", "Solution"), else
 * its sentences that carry one of `words`, else `count` sentences from `fallbackFrom`.
 */
function sentencesAbout(
  disclosure: string,
  section: RegExp,
  words: RegExp,
  fallbackFrom: number,
  count: number,
): string {
  const lines = disclosure.split(/\n+/).map((line) => line.trim());
  const start = lines.findIndex((line) => isHeadingLine(line) && section.test(line));
  if (start >= 0) {
    const end = lines.findIndex((line, index) => index > start && isHeadingLine(line));
    const body = lines.slice(start + 1, end < 0 ? undefined : end).join(' ');
    if (body !== '') return body;
  }
  // A heading line ("Effects") is not a sentence of the text.
  const sentences = sentencesOf(disclosure).filter((sentence) => sentence.split(/\s+/).length > 3);
  const about = sentences.filter((sentence) => words.test(sentence));
  const chosen = about.length > 0 ? about : sentences.slice(fallbackFrom, fallbackFrom + count);
  return chosen.slice(0, count).join('\n');
}

function initResult(taskId: string, task: DraftingTask, seed: number) {
  const random = SeededRandom.from(seed, task.inputHash, 'ai37-2');
  const claims = parseClaims(task.claim);
  const category = categoryOf(claims);
  const independent = claims.filter((claim) => claim.parents.length === 0);
  const dependentsOf = (root: number) =>
    claims
      .filter((claim) => claim.num === root || rootOf(claims, claim.num) === root)
      .map((claim) => claim.num);
  const outline = independent.map((claim, index) => ({
    type: category,
    label: 'outline',
    claim_text: claim.text,
    claim_numbers: dependentsOf(claim.num),
    embodiment_number: index + 1,
    text: `Embodiment ${index + 1} implements claim ${claim.num}: ${titleOf(claim.text, 160)}. ${capitalise(
      termsOf(claim.text).slice(0, 3).join(', '),
    )} are described with their arrangement and operation.`,
  }));
  const codes = [...new Set(Array.from({ length: 4 }, () => ipcCode(random)))].slice(0, random.int(2, 3));
  return {
    task_id: taskId,
    status: 2,
    category,
    classification: codes,
    technical_problem: sentencesAbout(
      task.disclosure,
      /problem|background|技术问题|背景/i,
      /problem|drawback|disadvantage|however|问题|不足/i,
      0,
      2,
    ),
    technical_methods: sentencesAbout(
      task.disclosure,
      /solution|summary|技术方案/i,
      /provides|comprising|方案|包括/i,
      1,
      3,
    ),
    benefit: sentencesAbout(
      task.disclosure,
      /effect|advantage|功效|效果/i,
      /advantage|benefit|effect|reduc|improv|优点|效果/i,
      2,
      2,
    ),
    embodiment_outline: [
      {
        label: 'common',
        text: 'The embodiments below describe the invention clearly and completely with reference to the drawings; they are some embodiments of the invention, not all of them.',
      },
      ...outline,
    ],
  };
}

/** The independent claim a claim finally depends on. */
function rootOf(claims: ParsedClaim[], num: number, depth = 0): number {
  const claim = claims.find((candidate) => candidate.num === num);
  if (!claim || claim.parents.length === 0 || depth > 50) return num;
  return rootOf(claims, Math.min(...claim.parents), depth + 1);
}

function featureTree(task: DraftingTask) {
  const claims = parseClaims(task.claim);
  const tree = claims.map((claim) => ({
    num: String(claim.num),
    parent: claim.parents.join(','),
    simple_claim: titleOf(claim.text, 60),
    claim_features: claimFeatures(claim.text).map((feature) => ({
      feature,
      concepts: termsOf(feature),
      feature_deleted: 0,
    })),
  }));
  const names = [...new Set(tree.flatMap((claim) => claim.claim_features.flatMap((f) => f.concepts)))];
  return {
    feature_tree: tree,
    terms: names.map((name, index) => ({ name, annotated: false, unique_id: String(index + 1) })),
  };
}

type DraftBody = RequestBody<'ai37-4GenerateReportCnipa'>;

/** The specification as the drafting writes it: the sections of a CNIPA application. */
function specificationOutline(task: DraftingTask, body: DraftBody) {
  const claims = (body.feature_tree ?? []).map((claim) => {
    const kept = (claim.claim_features ?? []).filter((feature) => feature.feature_deleted !== 1);
    return `${claim.num ?? ''}. ${kept.map((feature) => feature.feature ?? '').join('; ')}.`;
  });
  const drawings = (body.urls ?? []).map((url, index) => `Figure ${index + 1} (${url}).`);
  return {
    title: body.title,
    subtitle: `Patent specification (CNIPA) drafted by the opflow sandbox · category ${body.category}`,
    sections: [
      {
        heading: 'Technical field',
        paragraphs: [`The invention relates to ${titleOf(task.disclosure, 200)}.`],
      },
      { heading: 'Background', paragraphs: sentencesOf(task.disclosure).slice(0, 3) },
      {
        heading: 'Summary of the invention',
        paragraphs: [body.technical_problem, body.technical_methods, body.benefit].filter(
          (text): text is string => Boolean(text),
        ),
      },
      ...(drawings.length > 0
        ? [{ heading: 'Brief description of the drawings', paragraphs: drawings }]
        : []),
      {
        heading: 'Detailed description of the embodiments',
        paragraphs: (body.embodiments ?? []).map((embodiment) => embodiment.text ?? '').filter(Boolean),
      },
      { heading: 'Claims', paragraphs: claims },
      {
        heading: 'Abstract',
        paragraphs: [`${body.title}. ${titleOf(body.technical_methods ?? task.disclosure, 300)}`],
      },
      {
        heading: 'Terms',
        paragraphs: [(body.terms ?? []).map((term) => term.name).join(', ') || '(none)'],
      },
    ],
  };
}

export function createSpecificationOperations(registry: RegistryFactory): SpecificationOperations {
  const tasks = registry<DraftingTask>('specification-tasks', 'task_id', draftingTaskSchema);
  const drafts = registry<DraftRequest>('specification-drafts', 'task_id', draftRequestSchema);

  return {
    'ai37-1InitCnipa': (body, context) => {
      const taskId = context.newId('uuid');
      const triggers = triggersIn(body);
      tasks.add(taskId, {
        owner: context.owner,
        claim: body.claim,
        disclosure: withoutMarkers(body.disclosure),
        inputHash: hashText(`${body.claim}\n${body.disclosure}`),
        triggers,
        initStage: context.startStage('ai37-1InitCnipa', taskId, failsAt(triggers, 'ai37-2', FIRST_REF)),
      });
      return json({ task_id: taskId }, taskId);
    },

    'ai37-2InitResultCnipa': (body, context) => {
      const task = tasks.get(body.task_id, context.owner);
      const state = stageState(task.initStage, context.now);
      if (state !== 'succeeded') return json({ task_id: body.task_id, status: numericStatus(state) });
      return json(initResult(body.task_id, task, context.seed));
    },

    'ai37-3ExtractFeatureCnipa': (body, context) => {
      const task = tasks.get(body.task_id, context.owner);
      requireSucceeded(task.initStage, context.now, 'ai37-3', 'the initialisation of ai37-1', 'ai37-1');
      return json(featureTree(task));
    },

    'ai37-4GenerateReportCnipa': (body, context) => {
      const task = tasks.get(body.task_id, context.owner);
      requireSucceeded(task.initStage, context.now, 'ai37-4', 'the initialisation of ai37-1', 'ai37-1');
      const draftId = context.newId('hex');
      drafts.add(draftId, {
        owner: context.owner,
        taskId: body.task_id,
        body: JSON.stringify(body),
        stage: context.startStage(
          'ai37-4GenerateReportCnipa',
          draftId,
          failsAt(task.triggers, 'ai37-5', FIRST_REF),
        ),
      });
      return json({ task_id: draftId, status: 1 }, draftId);
    },

    'ai37-5SpecificationDownloadReport': (body, context) => {
      const draft = drafts.get(body.task_id, context.owner);
      requireStarted(draft.stage, 'ai37-5', 'ai37-4 (generate the specification)');
      const state = stageState(draft.stage, context.now);
      if (state !== 'succeeded') return json({ task_id: body.task_id, status: numericStatus(state) });
      const task = tasks.get(draft.taskId, context.owner);
      const sent = JSON.parse(draft.body) as DraftBody;
      const reportUrl = context.publish(`specification:${body.task_id}`, () => ({
        fileName: `specification-${body.task_id.slice(0, 8)}.docx`,
        format: 'docx',
        outline: specificationOutline(task, sent),
      }));
      return json({ task_id: body.task_id, status: 2, report_url: reportUrl });
    },
  };
}
