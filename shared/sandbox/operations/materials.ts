/**
 * Materials find-solution, ai73-1..9: submit a problem, offer recommended solutions, confirm a
 * subset (starts the mind map), then thinking, the mind map, and per node: citations (paginated),
 * reference information, and an implementation plan generated on request.
 */
import * as z from 'zod';
import { priorArtReference } from '../prior-art';
import { invalidParameter, outOfOrder } from '../sandbox-rejection';
import { hashText, SeededRandom, stableJson } from '../seeded';
import { type Stage, stageSchema, stageState, upperStatus } from '../stages';
import { capitalise, keywordsOf, sentencesOf, titleOf } from '../text-content';
import { failsAt, type Triggers, triggersIn, triggersSchema } from '../triggers';
import { json, type OperationContext, type OperationHandlers, type RegistryFactory } from './contract';
import { buildMindMap, type MindMapNode } from './mind-map';
import { confirmOnce, requireStarted, requireSucceeded } from './step-order';

type MaterialsOperations = Pick<
  OperationHandlers,
  | 'ai73-1FindSolutionSubmit'
  | 'ai73-2FindSolutionRecommend'
  | 'ai73-3FindSolutionConfirmRecommend'
  | 'ai73-4FindSolutionThinking'
  | 'ai73-5FindSolutionMind'
  | 'ai73-6FindSolutionCitationReferenceList'
  | 'ai73-7FindSolutionNodeReference'
  | 'ai73-8FindSolutionImplementation'
  | 'ai73-9FindSolutionImplementationResponse'
>;

interface MaterialsTask {
  owner: string;
  input: string;
  inputHash: string;
  triggers: Triggers;
  recommendStage: Stage;
  recommendations: string[];
  chosen?: string[];
  mindStage?: Stage;
  boardId?: string;
  /** Implementation plans started by ai73-8, by node id. */
  implementations: Record<string, Stage>;
}

const materialsTaskSchema = z.strictObject({
  owner: z.string().min(1),
  input: z.string(),
  inputHash: z.string(),
  triggers: triggersSchema,
  recommendStage: stageSchema,
  recommendations: z.array(z.string()),
  chosen: z.array(z.string()).optional(),
  mindStage: stageSchema.optional(),
  boardId: z.string().optional(),
  implementations: z.record(z.string(), stageSchema),
}) satisfies z.ZodType<MaterialsTask>;

const FIRST_REF = 'ai73-2';

interface NodeCall {
  task_id: string;
  board_id: string;
  node_id: string;
}

/**
 * The mind map of the confirmed recommendations. It follows from the seed and the task alone, so it
 * is built when first needed rather than kept (it is most of a task's size in a state file).
 */
const mindMaps = new WeakMap<MaterialsTask, ReturnType<typeof buildMindMap>>();
function mindMapOf(task: MaterialsTask, seed: number): ReturnType<typeof buildMindMap> | undefined {
  const chosen = task.chosen;
  if (!chosen) return undefined;
  let mindMap = mindMaps.get(task);
  if (!mindMap) {
    const random = SeededRandom.from(seed, task.inputHash, 'ai73-5', stableJson(chosen));
    const keywords = keywordsOf(task.input);
    const routes = chosen.length > 0 ? chosen : keywords.slice(0, 2).map((k) => `Improve ${k}`);
    mindMap = buildMindMap(
      random,
      titleOf(task.input, 160),
      routes.map((route) => ({
        title: route,
        content: `${route} addresses: ${sentencesOf(task.input)[0] ?? task.input}`,
        children: [1, 2].map((n) => ({
          title: `${route}, variant ${n}`,
          content: `Variant ${n} of ${route.toLowerCase()} tuned for ${random.pick(keywords)}.`,
        })),
      })),
      keywords,
    );
    mindMaps.set(task, mindMap);
  }
  return mindMap;
}

export function createMaterialsOperations(registry: RegistryFactory): MaterialsOperations {
  const tasks = registry<MaterialsTask>('materials', 'task_id', materialsTaskSchema);

  /** The task, its finished mind map, and the node a node-level call names. */
  const nodeOf = (body: NodeCall, context: OperationContext, caller: string) => {
    const task = tasks.get(body.task_id, context.owner);
    requireSucceeded(task.mindStage, context.now, caller, 'the mind map of ai73-5', 'ai73-3');
    if (body.board_id !== task.boardId) {
      throw invalidParameter(
        `board_id: '${body.board_id}' is not the board of task ${body.task_id} (see ai73-4)`,
      );
    }
    const node = mindMapOf(task, context.seed)?.nodes.find((candidate) => candidate.nodeId === body.node_id);
    if (!node)
      throw outOfOrder(`${caller}: node_id '${body.node_id}' is not a node of the mind map of ai73-5`);
    return { task, node };
  };

  const citations = (context: OperationContext, task: MaterialsTask, node: MindMapNode) => {
    const random = SeededRandom.from(context.seed, task.inputHash, 'ai73-6', node.nodeId);
    const keywords = keywordsOf(`${node.title} ${task.input}`);
    return Array.from({ length: random.int(8, 30) }, () => {
      const reference = priorArtReference(random, keywords);
      // The platform answers these records with upper-case keys (see the reference's example).
      return {
        PN: reference.pn,
        TITLE: reference.title,
        APD: reference.apd,
        PBD: reference.pbd,
        CONTENT: reference.content,
        SOLUTION_ID: reference.solution_id,
        SOLUTION_TYPE: reference.solution_type,
        ORG_INFO: reference.org_info.map((org) => ({ id: org.id, display_name: org.display_name })),
      };
    });
  };

  const cite = (text: string, title: string, id: string) =>
    `${text}<cite title="${title.replace(/"/g, '&quot;')}"><a href="/view/#/?patentId=${id}" target="_blank">1</a></cite>.`;

  return {
    'ai73-1FindSolutionSubmit': (body, context) => {
      const taskId = context.newId('hex');
      const inputHash = hashText(body.input);
      const triggers = triggersIn(body);
      const keywords = keywordsOf(body.input, 5);
      const random = SeededRandom.from(context.seed, inputHash, 'ai73-2');
      const recommendations = triggers.noRecommend
        ? []
        : random.sample(
            keywords.flatMap((k) => [
              `${capitalise(k)} surface modification`,
              `${capitalise(k)} composite formulation`,
              `Microencapsulated ${k}`,
            ]),
            random.int(3, 5),
          );
      tasks.add(taskId, {
        owner: context.owner,
        input: body.input,
        inputHash,
        triggers,
        recommendStage: context.startStage(
          'ai73-1FindSolutionSubmit',
          taskId,
          failsAt(triggers, 'ai73-2', FIRST_REF),
        ),
        recommendations,
        implementations: {},
      });
      return json({ task_id: taskId }, taskId);
    },

    'ai73-2FindSolutionRecommend': (body, context) => {
      const task = tasks.get(body.task_id, context.owner);
      const state = stageState(task.recommendStage, context.now);
      const recommend = state === 'succeeded' ? task.recommendations : [];
      return json({ status: upperStatus(state), recommend, has_recommend: recommend.length > 0 });
    },

    'ai73-3FindSolutionConfirmRecommend': (body, context) => {
      const task = tasks.get(body.task_id, context.owner);
      requireSucceeded(task.recommendStage, context.now, 'ai73-3', 'the recommendations of ai73-2', 'ai73-1');
      const chosen = (body.recommend ?? task.recommendations).map((item, index) => {
        if (typeof item !== 'string' || !task.recommendations.includes(item)) {
          throw invalidParameter(`recommend[${index}]: ${JSON.stringify(item)} was not offered by ai73-2`);
        }
        return item;
      });
      confirmOnce(task.chosen, chosen, 'ai73-3 already confirmed a different selection for this task', () => {
        task.chosen = chosen;
        task.boardId = context.newId('hex');
        task.mindStage = context.startStage(
          'ai73-3FindSolutionConfirmRecommend',
          body.task_id,
          failsAt(task.triggers, 'ai73-5', FIRST_REF) || failsAt(task.triggers, 'ai73-4', FIRST_REF),
        );
      });
      return json({ task_id: body.task_id });
    },

    'ai73-4FindSolutionThinking': (body, context) => {
      const task = tasks.get(body.task_id, context.owner);
      requireStarted(task.mindStage, 'ai73-4', 'ai73-3 (confirm the recommendations)');
      const state = stageState(task.mindStage, context.now);
      const [k1 = 'material', k2 = 'performance'] = keywordsOf(task.input, 2);
      const random = SeededRandom.from(context.seed, task.inputHash, 'ai73-4');
      return json({
        status: upperStatus(state),
        board_id: task.boardId,
        direction: { routes: task.chosen ?? [] },
        problem_statement: {
          domain: `${capitalise(k1)} materials`,
          problem_title: titleOf(task.input),
          refined_statement: sentencesOf(task.input).join(' '),
          background_context: `Current ${k1} solutions trade ${k2} against cost.`,
          success_criteria: [
            {
              metric: capitalise(k2),
              target: '+20%',
              priority: 'high',
              validation_method: 'Laboratory test',
            },
          ],
          technical_constraints: [
            {
              category: 'Cost',
              description: 'Raw material cost increase at most 15%',
              impact_level: 'medium',
            },
          ],
          performance_requirements: [
            { parameter: capitalise(k2), target_value: '20', unit: '%', tolerance: '±2' },
          ],
        },
        ...(state === 'succeeded'
          ? {
              references: {
                references: [1, 2, 3].map(() => ({
                  ...priorArtReference(random, keywordsOf(task.input)),
                  org_info: {},
                })),
              },
            }
          : {}),
      });
    },

    'ai73-5FindSolutionMind': (body, context) => {
      const task = tasks.get(body.task_id, context.owner);
      requireStarted(task.mindStage, 'ai73-5', 'ai73-3 (confirm the recommendations)');
      const state = stageState(task.mindStage, context.now);
      const mindMap = mindMapOf(task, context.seed);
      if (state !== 'succeeded' || !mindMap) return json({ status: upperStatus(state) });
      return json({ status: 'SUCCEED', solution: mindMap.solution });
    },

    'ai73-6FindSolutionCitationReferenceList': (body, context) => {
      const { task, node } = nodeOf(body, context, 'ai73-6');
      const all = citations(context, task, node);
      const page = body.page ?? 1;
      const limit = body.limit ?? 10;
      const records = all.slice((page - 1) * limit, page * limit);
      return json({
        page,
        limit,
        total: all.length,
        records,
        has_next: page * limit < all.length,
        has_previous: page > 1,
      });
    },

    'ai73-7FindSolutionNodeReference': (body, context) => {
      const { task, node } = nodeOf(body, context, 'ai73-7');
      const [first] = citations(context, task, node);
      const title = first?.TITLE ?? node.title;
      const id = first?.SOLUTION_ID ?? node.nodeId;
      return json({
        technical_principle: [cite(`${node.title} works by ${node.content.toLowerCase()}`, title, id)],
        technical_maturity: [
          cite(`${node.title} has been demonstrated at laboratory scale and in patent filings`, title, id),
        ],
        engineering_reliability: [
          cite(`Reported results for ${node.title.toLowerCase()} are reproducible across batches`, title, id),
        ],
        expected_challenge: [
          cite(`Scaling ${node.title.toLowerCase()} may raise production cost`, title, id),
        ],
        industry_application_cases: [
          cite(
            `${first?.ORG_INFO[0]?.display_name ?? 'A manufacturer'} applies a related approach`,
            title,
            id,
          ),
        ],
      });
    },

    'ai73-8FindSolutionImplementation': (body, context) => {
      const { task, node } = nodeOf(body, context, 'ai73-8');
      if (!Object.hasOwn(task.implementations, node.nodeId)) {
        const fails = failsAt(task.triggers, 'ai73-9', FIRST_REF);
        task.implementations[node.nodeId] = context.startStage(
          'ai73-8FindSolutionImplementation',
          `${body.task_id}:${node.nodeId}`,
          fails,
        );
      }
      return json({ task_id: body.task_id }, `${body.task_id}:${node.nodeId}`);
    },

    'ai73-9FindSolutionImplementationResponse': (body, context) => {
      const { task, node } = nodeOf(body, context, 'ai73-9');
      const stage = Object.hasOwn(task.implementations, node.nodeId)
        ? task.implementations[node.nodeId]
        : undefined;
      if (!stage)
        throw outOfOrder(`ai73-9 called before ai73-8 started the implementation of node ${node.nodeId}`);
      const state = stageState(stage, context.now);
      if (state !== 'succeeded') return json({ status: upperStatus(state) });
      const keywords = keywordsOf(task.input, 4);
      const markdown = [
        `# Implementation plan: ${node.title}`,
        '',
        node.content,
        '',
        '## Steps',
        ...keywords.map((k, i) => `${i + 1}. Prepare and characterise the ${k} samples.`),
        '',
        '## Development timeline',
        '- Week 1: feasibility experiments',
        '- Weeks 2-4: optimisation',
        '- Months 2-6: pilot scale',
        '',
        '## Risks and mitigation',
        `- ${capitalise(keywords[0] ?? 'cost')} variability: tighten incoming inspection.`,
        '',
      ].join('\n');
      return json({ status: 'SUCCEED', markdown_message: markdown });
    },
  };
}
