/**
 * find-solution (Tech Solution Exploration): from a technical problem to a solution map. The
 * platform recommends constraints (a person may choose which apply), proposes technical directions
 * (a person may tick them), and builds a final solution whose nodes are the routes and solutions.
 *
 * ai33-1 create → ai33-2 recommendations (poll) → SELECT recommendations → ai33-3 submit →
 * ai33-4 directions (poll) → SELECT directions → ai33-5 submit → ai33-6 final solution (poll).
 */
import type { SelectionOption } from '../../engine/job-record';
import type { PollPolicy } from '../../engine/policies';
import { defineWorkflow, stepsFor } from '../../engine/workflow';
import type { DataOf } from '../../openplatform/schemas/responses';
import { plainText, shorten } from '../../reports/markdown';
import { mindMapDigest } from '../common/digest';
import { chosenRecommendations, recommendationOptions } from '../common/recommendations';
import { nonEmpty, outputOf, untilDone, withoutNulls, wordState } from '../common/step-data';
import { readTextDocument } from '../common/text-input';
import { directionOptionId, type FindSolutionInput, findSolutionInput } from './input';
import { findSolutionMarkdown, findSolutionSummary, findSolutionTitle } from './report';

/** Recommendations take about 20 s, directions about a minute, the final solution about two. */
export const findSolutionPolls = {
  recommendations: { firstDelayMs: 20_000, factor: 1.5, maxDelayMs: 60_000, giveUpAfterMs: 30 * 60_000 },
  directions: { firstDelayMs: 60_000, factor: 1.5, maxDelayMs: 60_000, giveUpAfterMs: 45 * 60_000 },
  solution: { firstDelayMs: 120_000, factor: 1.5, maxDelayMs: 90_000, giveUpAfterMs: 60 * 60_000 },
} satisfies Record<string, PollPolicy>;

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

const step = stepsFor('find-solution', findSolutionInput);

/** The task every call after the create names. */
const taskId = step.key('taskId', nonEmpty);

const create = step.call({
  name: 'create',
  title: 'create the task',
  operation: 'ai33-1Step1V3',
  request: ({ input }) => ({ lang: input.lang, solution_issues: input.problem }),
  decide: (data) =>
    data.task_id
      ? { type: 'next', context: taskId.set(data.task_id) }
      : { type: 'fail', message: 'ai33-1 answered without a task_id' },
});

const recommendations = step.call({
  name: 'recommendations',
  title: 'recommendations',
  operation: 'ai33-2Step2V3',
  poll: findSolutionPolls.recommendations,
  request: (ctx) => ({ task_id: ctx.get(taskId) }),
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
});

const submitRecommendations = step.call({
  name: 'submit-recommendations',
  title: 'submit the chosen recommendations',
  operation: 'ai33-3Step3SubmitV3',
  needs: [recommendations],
  request: (ctx) => ({
    lang: ctx.input.lang,
    task_id: ctx.get(taskId),
    recommend: chosenRecommendations(
      ctx.output(recommendations).recommend ?? [],
      ctx.chosen(recommendations),
    ),
  }),
  decide: () => ({ type: 'next' }),
});

const directions = step.call({
  name: 'directions',
  title: 'directions',
  operation: 'ai33-4Step3QueryV3',
  poll: findSolutionPolls.directions,
  request: (ctx) => ({ task_id: ctx.get(taskId) }),
  decide: (data) =>
    untilDone(wordState(data.status), 'the directions', data.status, () => {
      const proposed = data.directions ?? [];
      if (proposed.length === 0) return { type: 'fail', message: 'ai33-4 proposed no technical directions' };
      return {
        type: 'select',
        offer: {
          prompt: 'Which technical directions should the solution follow?',
          options: directionOptions(proposed),
          min: 1,
        },
      };
    }),
});

const submitDirections = step.call({
  name: 'submit-directions',
  title: 'submit the chosen directions',
  operation: 'ai33-5Step4V3',
  needs: [directions],
  request: (ctx) => ({
    lang: ctx.input.lang,
    task_id: ctx.get(taskId),
    directions: tickedDirections(ctx.output(directions).directions ?? [], ctx.chosen(directions)),
  }),
  decide: () => ({ type: 'next' }),
});

const solution = step.call({
  name: 'solution',
  title: 'final solution',
  operation: 'ai33-6Step5V3',
  poll: findSolutionPolls.solution,
  request: (ctx) => ({ task_id: ctx.get(taskId) }),
  decide: (data) =>
    untilDone(wordState(data.status), 'the final solution', data.status, () =>
      data.solution
        ? { type: 'complete' }
        : { type: 'fail', message: 'ai33-6 reported success without a solution' },
    ),
});

export const findSolution = defineWorkflow<FindSolutionInput>({
  name: 'find-solution',
  version: 1,
  description: 'Solution map for a technical problem: recommendations, directions, final solution.',
  input: findSolutionInput,
  fromText: (text, fileName) => {
    const document = readTextDocument(text, fileName);
    return { problem: document.body || document.text, title: shorten(document.title, 200) };
  },
  steps: [create, recommendations, submitRecommendations, directions, submitDirections, solution],
  report: (r) => ({ title: `Find solution: ${findSolutionTitle(r)}`, markdown: findSolutionMarkdown(r) }),
  summary: findSolutionSummary,
  example: {
    text: 'Ceramic separators of solid-state batteries crack after a few hundred charge cycles.',
    lang: 'en',
  },
  commonNames: { text: 'problem' },
  digest: (r) => mindMapDigest(outputOf(r.outputs, 'solution', 'ai33-6Step5V3')?.solution?.cells),
});
