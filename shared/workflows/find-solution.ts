/**
 * find-solution (Tech Solution Exploration): from a technical problem to a solution map. The
 * platform recommends constraints (a person may choose which apply), proposes technical directions
 * (a person may tick them), and builds a final solution whose nodes are the routes and solutions.
 *
 * ai33-1 create → ai33-2 recommendations (poll) → SELECT recommendations → ai33-3 submit →
 * ai33-4 directions (poll) → SELECT directions → ai33-5 submit → ai33-6 final solution (poll).
 */
import * as z from 'zod';
import type { SelectionOption } from '../engine/job-record';
import type { PollPolicy, RetryPolicy } from '../engine/policies';
import { defineWorkflow, type ReportInput, stepsFor } from '../engine/workflow';
import type { DataOf } from '../openplatform/schemas/responses';
import { blocks, bullets, heading, inline, paragraphs, plainText, shorten, table } from '../reports/markdown';
import { mindMapNodes } from './mind-map';
import { chosenRecommendations, recommendationOptions } from './recommendations';
import {
  chosen,
  contextString,
  outputOf,
  requireOutput,
  untilDone,
  withoutNulls,
  wordState,
} from './step-data';
import { readTextDocument } from './text-input';

/** The input of a find-solution job. */
export const findSolutionInput = z.strictObject({
  /** The technical problem to solve, at most 500 characters (the platform's limit). */
  problem: z
    .string({ error: 'problem: the technical problem is required (a string)' })
    .trim()
    .min(1, { error: 'problem: the technical problem is empty' })
    .max(500, { error: 'problem: at most 500 characters (the platform refuses longer problems)' }),
  /** The report's title; default: the solution's title. */
  title: z.string().trim().min(1, { error: 'title: must not be empty when given' }).max(200).optional(),
  /** The language of the answers, `cn` or `en`; default `en`. */
  lang: z.enum(['cn', 'en'], { error: 'lang: must be "cn" or "en"' }).default('en'),
});
export type FindSolutionInput = z.infer<typeof findSolutionInput>;

/** Recommendations take about 20 s, directions about a minute, the final solution about two. */
export const findSolutionPolls = {
  recommendations: { firstDelayMs: 20_000, factor: 1.5, maxDelayMs: 60_000, giveUpAfterMs: 30 * 60_000 },
  directions: { firstDelayMs: 60_000, factor: 1.5, maxDelayMs: 60_000, giveUpAfterMs: 45 * 60_000 },
  solution: { firstDelayMs: 120_000, factor: 1.5, maxDelayMs: 90_000, giveUpAfterMs: 60 * 60_000 },
} satisfies Record<string, PollPolicy>;

const createRetry: Partial<RetryPolicy> = { maxAttempts: 4 };

/** Stable option ids `d1`, `d2`... for directions, in the upstream's order. */
export const directionOptionId = (index: number) => `d${index + 1}`;

type Direction = NonNullable<DataOf<'ai33-4Step3QueryV3'>['directions']>[number];

/** Directions as options, labelled by their rationale; the ticked ones are preselected. */
export function directionOptions(directions: Direction[]): SelectionOption[] {
  return directions.map((direction, index) => {
    const approaches = (direction.approaches ?? []).map(plainText).filter((text) => text !== '');
    return {
      id: directionOptionId(index),
      label: shorten(direction.reason, 200) || `direction ${index + 1}`,
      detail: approaches.length > 0 ? shorten(approaches.join(' / '), 400) : undefined,
      preselected: direction.ticked === true,
    };
  });
}

const isSourceType = (value: unknown): value is 'model' | 'customize' =>
  value === 'model' || value === 'customize';

/** Every direction echoed back, `ticked` set from the choice (null fields left out). */
export function tickedDirections(directions: Direction[], picked: ReadonlySet<string>) {
  return directions.map((direction, index) => {
    const { source_type: sourceType, ...rest } = withoutNulls(direction);
    return {
      ...rest,
      ...(isSourceType(sourceType) ? { source_type: sourceType } : {}),
      ticked: picked.has(directionOptionId(index)),
    };
  });
}

const step = stepsFor<FindSolutionInput>();

export const findSolution = defineWorkflow<FindSolutionInput>({
  name: 'find-solution',
  version: 1,
  description: 'Solution map for a technical problem: recommendations, directions, final solution.',
  input: findSolutionInput,
  fromText: (text, fileName) => {
    const document = readTextDocument(text, fileName);
    return { problem: document.body || document.text, title: shorten(document.title, 200) };
  },
  steps: [
    step.call({
      name: 'create',
      title: 'create the task',
      operation: 'ai33-1Step1V3',
      retry: createRetry,
      request: ({ input }) => ({ lang: input.lang, solution_issues: input.problem }),
      decide: (data) =>
        data.task_id
          ? { type: 'next', context: { taskId: data.task_id } }
          : { type: 'fail', message: 'ai33-1 answered without a task_id' },
    }),
    step.call({
      name: 'recommendations',
      title: 'recommendations',
      operation: 'ai33-2Step2V3',
      poll: findSolutionPolls.recommendations,
      request: (ctx) => ({ task_id: contextString(ctx, 'taskId') }),
      decide: (data) =>
        untilDone(wordState(data.status), 'the recommendations', data.status, () => {
          const recommend = data.recommend ?? [];
          // Nothing to choose from: submit an empty choice and let the platform go on.
          if (recommend.length === 0) return { type: 'next' };
          return {
            type: 'select',
            offer: {
              prompt: 'Which recommendations apply to the problem?',
              options: recommendationOptions(recommend),
              min: 1,
            },
          };
        }),
    }),
    step.call({
      name: 'submit-recommendations',
      title: 'submit the chosen recommendations',
      operation: 'ai33-3Step3SubmitV3',
      needs: ['recommendations'],
      retry: createRetry,
      request: (ctx) => ({
        lang: ctx.input.lang,
        task_id: contextString(ctx, 'taskId'),
        recommend: chosenRecommendations(
          requireOutput(ctx, 'recommendations', 'ai33-2Step2V3').recommend ?? [],
          chosen(ctx, 'recommendations'),
        ),
      }),
      decide: () => ({ type: 'next' }),
    }),
    step.call({
      name: 'directions',
      title: 'directions',
      operation: 'ai33-4Step3QueryV3',
      poll: findSolutionPolls.directions,
      request: (ctx) => ({ task_id: contextString(ctx, 'taskId') }),
      decide: (data) =>
        untilDone(wordState(data.status), 'the directions', data.status, () => {
          const directions = data.directions ?? [];
          if (directions.length === 0)
            return { type: 'fail', message: 'ai33-4 proposed no technical directions' };
          return {
            type: 'select',
            offer: {
              prompt: 'Which technical directions should the solution follow?',
              options: directionOptions(directions),
              min: 1,
            },
          };
        }),
    }),
    step.call({
      name: 'submit-directions',
      title: 'submit the chosen directions',
      operation: 'ai33-5Step4V3',
      needs: ['directions'],
      retry: createRetry,
      request: (ctx) => ({
        lang: ctx.input.lang,
        task_id: contextString(ctx, 'taskId'),
        directions: tickedDirections(
          requireOutput(ctx, 'directions', 'ai33-4Step3QueryV3').directions ?? [],
          chosen(ctx, 'directions'),
        ),
      }),
      decide: () => ({ type: 'next' }),
    }),
    step.call({
      name: 'solution',
      title: 'final solution',
      operation: 'ai33-6Step5V3',
      poll: findSolutionPolls.solution,
      request: (ctx) => ({ task_id: contextString(ctx, 'taskId') }),
      decide: (data) =>
        untilDone(wordState(data.status), 'the final solution', data.status, () =>
          data.solution
            ? { type: 'complete' }
            : { type: 'fail', message: 'ai33-6 reported success without a solution' },
        ),
    }),
  ],
  report: (r) => ({ title: `Find solution: ${findSolutionTitle(r)}`, markdown: findSolutionMarkdown(r) }),
  summary: findSolutionSummary,
});

function findSolutionTitle({ input, outputs }: ReportInput<FindSolutionInput>): string {
  return (
    input.title ??
    (outputOf(outputs, 'solution', 'ai33-6Step5V3')?.solution?.title || shorten(input.problem, 100))
  );
}

function findSolutionMarkdown(r: ReportInput<FindSolutionInput>): string {
  const { input, outputs, selections } = r;
  const solution = outputOf(outputs, 'solution', 'ai33-6Step5V3')?.solution;
  const nodes = mindMapNodes(solution?.cells ?? []);
  const recommend = outputOf(outputs, 'recommendations', 'ai33-2Step2V3')?.recommend ?? [];
  const directions = outputOf(outputs, 'directions', 'ai33-4Step3QueryV3')?.directions ?? [];
  const pickedRecommendations = chosenRecommendations(
    recommend,
    new Set(selections['recommendations'] ?? []),
  );
  const pickedDirections = directions.filter((_, index) =>
    (selections['directions'] ?? []).includes(directionOptionId(index)),
  );

  const nodeSections = nodes
    .filter((node) => node.depth > 0)
    .map((node) => {
      const references = node.references.map((reference) => [
        reference.pn,
        reference.title,
        reference.pbd,
        reference.type,
      ]);
      return blocks(
        heading(3, `${node.order ? `${node.order} ` : ''}${node.title}`),
        node.route && node.depth > 1 ? inline(`Route: ${node.route}`) : undefined,
        node.innovation !== undefined && node.innovation > 0
          ? inline(`Innovation: ${node.innovation} of 5`)
          : undefined,
        paragraphs(node.content, ''),
        node.subContent ? paragraphs(node.subContent, '') : undefined,
        node.improvements.length > 0 ? `**Improvements**\n\n${bullets(node.improvements)}` : undefined,
        references.length > 0 ? table(['Publication', 'Title', 'Published', 'Type'], references) : undefined,
      ).trimEnd();
    });

  return blocks(
    heading(1, `Find solution: ${findSolutionTitle(r)}`),
    inline(findSolutionSummary(r)),
    heading(2, 'Problem'),
    paragraphs(input.problem),
    heading(2, `Final solution: ${solution?.title ?? '(none)'}`),
    table(
      ['Node', 'Title', 'Route', 'Innovation'],
      nodes
        .filter((node) => node.depth > 0)
        .map((node) => [node.order, node.title, node.depth > 1 ? node.route : '', node.innovation ?? '']),
      '_The solution has no nodes._',
    ),
    ...nodeSections,
    heading(2, 'Chosen recommendations'),
    bullets(pickedRecommendations, '_None: the platform offered no recommendations._'),
    heading(2, 'Chosen directions'),
    table(
      ['Direction', 'Approaches', 'Verification'],
      pickedDirections.map((direction) => [
        direction.reason,
        (direction.approaches ?? []).map(plainText).join(' / '),
        direction.verification,
      ]),
    ),
  );
}

/** "Lithium battery energy density: 6 solution nodes from 2 directions". */
export function findSolutionSummary(r: ReportInput<FindSolutionInput>): string {
  const solution = outputOf(r.outputs, 'solution', 'ai33-6Step5V3')?.solution;
  const nodes = mindMapNodes(solution?.cells ?? []).filter((node) => node.depth > 0);
  const directions = (r.selections['directions'] ?? []).length;
  return `${findSolutionTitle(r)}: ${nodes.length} solution ${nodes.length === 1 ? 'node' : 'nodes'} from ${directions} ${directions === 1 ? 'direction' : 'directions'}`;
}
