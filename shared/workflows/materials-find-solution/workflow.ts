/**
 * materials-find-solution (Tech Solution Exploration, Materials): from a materials problem to a
 * mind map of routes and solutions, then, for the nodes the job asks for, their reference
 * information, every page of their citations, and a generated implementation plan.
 *
 * ai73-1 submit → ai73-2 recommendations (poll) → SELECT recommendations → ai73-3 confirm →
 * ai73-4 thinking (poll; gives board_id) → ai73-5 mind map (poll) → for each chosen node:
 * ai73-7 node reference → ai73-6 citations (page by page) → ai73-8 start → ai73-9 implementation (poll).
 */
import type { PollPolicy } from '../../engine/policies';
import { type Decision, defineWorkflow, type StepContext, stepsFor } from '../../engine/workflow';
import { shorten } from '../../reports/markdown';
import { mindMapDigest } from '../common/digest';
import { leafNodes, type MindMapNode, mindMapNodes } from '../common/mind-map';
import { chosenRecommendations, recommendationOptions } from '../common/recommendations';
import {
  nonEmpty,
  nonNegativeInt,
  outputOf,
  positiveInt,
  stringList,
  untilDone,
  wordState,
} from '../common/step-data';
import { readTextDocument } from '../common/text-input';
import {
  citationPageSize,
  type MaterialsFindSolutionInput,
  materialsFindSolutionInput,
  maxCitationPages,
  type NodePolicy,
  nodeOutput,
} from './input';
import { materialsMarkdown, materialsSummary, materialsTitle } from './report';

/** Recommendations take about 20 s, the mind map about a minute and a half, a plan about a minute. */
export const materialsPolls = {
  recommendations: { firstDelayMs: 20_000, factor: 1.5, maxDelayMs: 60_000, giveUpAfterMs: 30 * 60_000 },
  thinking: { firstDelayMs: 90_000, factor: 1.5, maxDelayMs: 60_000, giveUpAfterMs: 45 * 60_000 },
  mindMap: { firstDelayMs: 2_000, factor: 2, maxDelayMs: 60_000, giveUpAfterMs: 45 * 60_000 },
  implementation: { firstDelayMs: 60_000, factor: 1.5, maxDelayMs: 60_000, giveUpAfterMs: 30 * 60_000 },
} satisfies Record<string, PollPolicy>;

/** The node ids the policy names, checked against the mind map; an error message for unknown ids. */
export function resolveNodes(
  policy: NodePolicy,
  nodes: MindMapNode[],
): { nodeIds: string[] } | { error: string } {
  if (policy === 'none') return { nodeIds: [] };
  const detailable = nodes.filter((node) => node.nodeId !== '');
  if (policy === 'all') return { nodeIds: leafNodes(detailable).map((node) => node.nodeId) };
  const known = new Set(detailable.map((node) => node.nodeId));
  const unknown = policy.filter((id) => !known.has(id));
  if (unknown.length > 0) {
    return {
      error: `nodes: ${unknown.map((id) => `"${id}"`).join(', ')} ${unknown.length === 1 ? 'is' : 'are'} not in the mind map (its nodes: ${[...known].join(', ') || 'none'})`,
    };
  }
  return { nodeIds: [...new Set(policy)] };
}

const step = stepsFor('materials-find-solution', materialsFindSolutionInput);
type Context = StepContext<MaterialsFindSolutionInput, 'materials-find-solution'>;

/** The task every call names, and the board of its mind map. */
const taskId = step.key('taskId', nonEmpty);
const boardId = step.key('boardId', nonEmpty);
/** The chosen nodes, the index of the node being detailed, and the page of its citations. */
const nodeIds = step.key('nodeIds', stringList);
const nodeIndex = step.key('nodeIndex', nonNegativeInt);
const page = step.key('page', positiveInt);

/** The node a node-level step works on: the ids and the round's index. */
function currentNode(ctx: Context) {
  const ids = ctx.find(nodeIds) ?? [];
  const index = ctx.find(nodeIndex) ?? 0;
  const nodeId = ids[index];
  if (nodeId === undefined) throw new Error(`the job context has no node number ${index + 1}`);
  return { nodeIds: ids, index, nodeId };
}

const nodeBody = (ctx: Context) => ({
  task_id: ctx.get(taskId),
  board_id: ctx.get(boardId),
  node_id: currentNode(ctx).nodeId,
});

/** After one node's implementation: the next node's round, or the end. */
export function afterNode(ctx: Context): Decision<'materials-find-solution'> {
  const { nodeIds: ids, index } = currentNode(ctx);
  if (index + 1 < ids.length) {
    return {
      type: 'next',
      step: nodeReference,
      context: { ...nodeIndex.set(index + 1), ...page.set(1) },
    };
  }
  return { type: 'complete' };
}

const submit = step.call({
  name: 'submit',
  title: 'submit the problem',
  operation: 'ai73-1FindSolutionSubmit',
  request: ({ input }) => ({ input: input.problem, lang: input.lang }),
  decide: (data) =>
    data.task_id
      ? { type: 'next', context: taskId.set(data.task_id) }
      : { type: 'fail', message: 'ai73-1 answered without a task_id' },
});

const recommendations = step.call({
  name: 'recommendations',
  title: 'recommended solutions',
  operation: 'ai73-2FindSolutionRecommend',
  poll: materialsPolls.recommendations,
  request: (ctx) => ({ task_id: ctx.get(taskId) }),
  decide: (data) =>
    untilDone(wordState(data.status), 'the recommendations', data.status, () => {
      const recommend = data.recommend ?? [];
      // No recommendation (has_recommend false): confirm an empty choice and go on.
      if (data.has_recommend === false || recommend.length === 0) return { type: 'next' };
      return {
        type: 'select',
        offer: {
          prompt: 'Which recommended solutions should the mind map explore?',
          options: recommendationOptions(recommend),
          min: 1,
        },
      };
    }),
});

const confirmRecommendations = step.call({
  name: 'confirm-recommendations',
  title: 'confirm the chosen solutions',
  operation: 'ai73-3FindSolutionConfirmRecommend',
  needs: [recommendations],
  request: (ctx) => ({
    task_id: ctx.get(taskId),
    recommend: chosenRecommendations(
      ctx.output(recommendations).recommend ?? [],
      ctx.chosen(recommendations),
    ),
  }),
  decide: () => ({ type: 'next' }),
});

const thinking = step.call({
  name: 'thinking',
  title: 'thinking process',
  operation: 'ai73-4FindSolutionThinking',
  poll: materialsPolls.thinking,
  request: (ctx) => ({ task_id: ctx.get(taskId) }),
  decide: (data) =>
    untilDone(wordState(data.status), 'the thinking process', data.status, () =>
      data.board_id
        ? { type: 'next', context: boardId.set(data.board_id) }
        : { type: 'fail', message: 'ai73-4 answered without a board_id' },
    ),
});

const mindMap = step.call({
  name: 'mind-map',
  title: 'mind map',
  operation: 'ai73-5FindSolutionMind',
  poll: materialsPolls.mindMap,
  request: (ctx) => ({ task_id: ctx.get(taskId) }),
  decide: (data, ctx) =>
    untilDone(wordState(data.status), 'the mind map', data.status, () => {
      const resolved = resolveNodes(ctx.input.nodes, mindMapNodes(data.solution?.cells ?? []));
      if ('error' in resolved) return { type: 'fail', message: resolved.error };
      if (resolved.nodeIds.length === 0) return { type: 'complete' };
      return {
        type: 'next',
        context: { ...nodeIds.set(resolved.nodeIds), ...nodeIndex.set(0), ...page.set(1) },
      };
    }),
});

const nodeReference = step.call({
  name: 'node-reference',
  title: 'node reference information',
  operation: 'ai73-7FindSolutionNodeReference',
  outputName: (ctx) => nodeOutput.reference(currentNode(ctx).index),
  request: nodeBody,
  decide: () => ({ type: 'next', context: page.set(1) }),
});

const citations = step.call({
  name: 'citations',
  title: 'node citations',
  operation: 'ai73-6FindSolutionCitationReferenceList',
  outputName: (ctx) => nodeOutput.citations(currentNode(ctx).index, ctx.find(page) ?? 1),
  request: (ctx) => ({ ...nodeBody(ctx), page: ctx.find(page) ?? 1, limit: citationPageSize }),
  decide: (data, ctx): Decision<'materials-find-solution'> => {
    const current = ctx.find(page) ?? 1;
    const more = data.has_next === true && (data.records ?? []).length > 0;
    if (!more) return { type: 'next' };
    if (current >= maxCitationPages) {
      return { type: 'fail', message: `ai73-6 still had more citations after ${maxCitationPages} pages` };
    }
    return { type: 'next', step: citations, context: page.set(current + 1) };
  },
});

const implementation = step.call({
  name: 'implementation',
  title: 'start the implementation plan',
  operation: 'ai73-8FindSolutionImplementation',
  outputName: (ctx) => nodeOutput.implementationStart(currentNode(ctx).index),
  request: nodeBody,
  decide: () => ({ type: 'next' }),
});

const implementationResult = step.call({
  name: 'implementation-result',
  title: 'implementation plan',
  operation: 'ai73-9FindSolutionImplementationResponse',
  outputName: (ctx) => nodeOutput.implementation(currentNode(ctx).index),
  poll: materialsPolls.implementation,
  request: nodeBody,
  decide: (data, ctx) =>
    untilDone(wordState(data.status), 'the implementation plan', data.status, () => afterNode(ctx)),
});

export const materialsFindSolution = defineWorkflow<MaterialsFindSolutionInput>({
  name: 'materials-find-solution',
  version: 1,
  description:
    'Materials solution mind map, with references, citations and implementation plans for chosen nodes.',
  input: materialsFindSolutionInput,
  fromText: (text, fileName) => {
    const document = readTextDocument(text, fileName);
    return { problem: document.body || document.text, title: shorten(document.title, 200) };
  },
  steps: [
    submit,
    recommendations,
    confirmRecommendations,
    thinking,
    mindMap,
    nodeReference,
    citations,
    implementation,
    implementationResult,
  ],
  report: (r) => ({ title: `Materials find solution: ${materialsTitle(r)}`, markdown: materialsMarkdown(r) }),
  summary: materialsSummary,
  example: {
    text: 'A ceramic electrolyte for solid-state batteries that stays ion-conductive below -20 °C.',
    lang: 'en',
    nodes: 'none',
  },
  commonNames: { text: 'problem' },
  digest: (r) => mindMapDigest(outputOf(r.outputs, 'mind-map', 'ai73-5FindSolutionMind')?.solution?.cells),
});
