/**
 * Find-solution (Tech Solution Exploration), ai33-1..6: create a task from a technical issue, offer
 * constraint recommendations, submit a subset, offer directions, submit the ticked ones, answer a
 * final solution as a mind map.
 */
import * as z from 'zod';
import { invalidParameter } from '../sandbox-rejection';
import { hashText, SeededRandom, stableJson } from '../seeded';
import { type Stage, stageSchema, stageState, upperStatus } from '../stages';
import { capitalise, keywordsOf, titleOf } from '../text-content';
import { failsAt, type Triggers, triggersIn, triggersSchema } from '../triggers';
import { json, type OperationContext, type OperationHandlers, type RegistryFactory } from './contract';
import { buildMindMap } from './mind-map';
import { confirmOnce, requireStarted, requireSucceeded } from './step-order';

type FindSolutionOperations = Pick<
  OperationHandlers,
  | 'ai33-1Step1V3'
  | 'ai33-2Step2V3'
  | 'ai33-3Step3SubmitV3'
  | 'ai33-4Step3QueryV3'
  | 'ai33-5Step4V3'
  | 'ai33-6Step5V3'
>;

/** A type alias, not an interface: the response types expect an index signature. */
type Direction = {
  reason: string;
  ticked: boolean;
  approaches: string[];
  source_type: 'model' | 'customize';
  verification: string;
};

interface FindSolutionTask {
  owner: string;
  issue: string;
  inputHash: string;
  triggers: Triggers;
  recommendStage: Stage;
  recommendations: string[];
  chosen?: string[];
  directionsStage?: Stage;
  directions?: Direction[];
  ticked?: Direction[];
  solutionStage?: Stage;
}

const directionSchema = z.strictObject({
  reason: z.string(),
  ticked: z.boolean(),
  approaches: z.array(z.string()),
  source_type: z.enum(['model', 'customize']),
  verification: z.string(),
}) satisfies z.ZodType<Direction>;

const findSolutionTaskSchema = z.strictObject({
  owner: z.string().min(1),
  issue: z.string(),
  inputHash: z.string(),
  triggers: triggersSchema,
  recommendStage: stageSchema,
  recommendations: z.array(z.string()),
  chosen: z.array(z.string()).optional(),
  directionsStage: stageSchema.optional(),
  directions: z.array(directionSchema).optional(),
  ticked: z.array(directionSchema).optional(),
  solutionStage: stageSchema.optional(),
}) satisfies z.ZodType<FindSolutionTask>;

const FIRST_REF = 'ai33-2';

function recommendationsFor(issue: string, random: SeededRandom): string[] {
  const [k1 = 'cost', k2 = 'performance', k3 = 'process'] = keywordsOf(issue, 3);
  const all = [
    'Cost increase of at most 15%',
    `No loss of ${k1} safety or reliability`,
    `Compatible with existing ${k2} production lines`,
    `Improve ${k1} by at least 20% over the current baseline`,
    `Use commercially available ${k3} materials`,
  ];
  return random.sample(all, random.int(3, 5));
}

function directionsFor(issue: string, chosen: readonly string[], random: SeededRandom): Direction[] {
  const keywords = keywordsOf(issue, 6);
  const methods = ['material upgrades', 'structural optimisation', 'process control', 'hybrid architectures'];
  return random.sample(methods, random.int(3, 4)).map((method, index) => {
    const k = keywords[index % keywords.length] ?? 'the system';
    return {
      reason: `Improve ${k} through ${method}`,
      ticked: index < 2,
      approaches: [
        `Apply ${method} to ${k}, keeping ${keywords[(index + 1) % keywords.length] ?? 'the design'} unchanged.`,
        `Combine ${method} with in-line measurement of ${k}.`,
      ],
      source_type: 'model',
      verification:
        chosen.length > 0
          ? `Verified against the constraints: ${chosen.join('; ')}.`
          : `Verified on ${k} test samples.`,
    };
  });
}

export function createFindSolutionOperations(registry: RegistryFactory): FindSolutionOperations {
  const tasks = registry<FindSolutionTask>('find-solution', 'task_id', findSolutionTaskSchema);

  const solutionOf = (task: FindSolutionTask, context: OperationContext) => {
    const random = SeededRandom.from(context.seed, task.inputHash, 'ai33-solution', stableJson(task.ticked));
    const branches = (task.ticked ?? []).map((direction) => ({
      title: direction.reason,
      content: direction.verification,
      children: direction.approaches.map((approach, index) => ({
        title: `${capitalise(direction.reason.split(' through ')[1] ?? 'approach')} route ${index + 1}`,
        content: approach,
      })),
    }));
    return buildMindMap(random, titleOf(task.issue, 160), branches, keywordsOf(task.issue)).solution;
  };

  return {
    'ai33-1Step1V3': (body, context) => {
      const taskId = context.newId('hex');
      const inputHash = hashText(body.solution_issues);
      const triggers = triggersIn(body);
      tasks.add(taskId, {
        owner: context.owner,
        issue: body.solution_issues,
        inputHash,
        triggers,
        recommendStage: context.startStage('ai33-1Step1V3', taskId, failsAt(triggers, 'ai33-2', FIRST_REF)),
        recommendations: recommendationsFor(
          body.solution_issues,
          SeededRandom.from(context.seed, inputHash, 'ai33-2'),
        ),
      });
      return json({ task_id: taskId }, taskId);
    },

    'ai33-2Step2V3': (body, context) => {
      const task = tasks.get(body.task_id, context.owner);
      const state = stageState(task.recommendStage, context.now);
      return json({
        status: upperStatus(state),
        recommend: state === 'succeeded' ? task.recommendations : [],
      });
    },

    'ai33-3Step3SubmitV3': (body, context) => {
      const task = tasks.get(body.task_id, context.owner);
      requireSucceeded(task.recommendStage, context.now, 'ai33-3', 'the recommendations of ai33-2', 'ai33-1');
      const chosen = (body.recommend ?? task.recommendations).map((item, index) => {
        if (typeof item !== 'string' || !task.recommendations.includes(item)) {
          throw invalidParameter(`recommend[${index}]: ${JSON.stringify(item)} was not offered by ai33-2`);
        }
        return item;
      });
      confirmOnce(task.chosen, chosen, 'ai33-3 already submitted a different selection for this task', () => {
        task.chosen = chosen;
        task.directions = directionsFor(
          task.issue,
          chosen,
          SeededRandom.from(context.seed, task.inputHash, 'ai33-4'),
        );
        task.directionsStage = context.startStage(
          'ai33-3Step3SubmitV3',
          body.task_id,
          failsAt(task.triggers, 'ai33-4', FIRST_REF),
        );
      });
      return json({ task_id: body.task_id });
    },

    'ai33-4Step3QueryV3': (body, context) => {
      const task = tasks.get(body.task_id, context.owner);
      requireStarted(task.directionsStage, 'ai33-4', 'ai33-3 (submit the chosen recommendations)');
      const state = stageState(task.directionsStage, context.now);
      return json({
        status: upperStatus(state),
        directions: state === 'succeeded' ? (task.directions ?? []) : [],
      });
    },

    'ai33-5Step4V3': (body, context) => {
      const task = tasks.get(body.task_id, context.owner);
      requireSucceeded(task.directionsStage, context.now, 'ai33-5', 'the directions of ai33-4', 'ai33-3');
      const offered = task.directions ?? [];
      const given = body.directions ?? offered;
      const ticked: Direction[] = [];
      given.forEach((direction, index) => {
        if (!direction.ticked) return;
        const match = offered.find((candidate) => candidate.reason === direction.reason);
        if (!match && direction.source_type !== 'customize') {
          throw invalidParameter(
            `directions[${index}].reason: ${JSON.stringify(direction.reason ?? null)} was not offered by ai33-4 (custom directions need source_type "customize")`,
          );
        }
        ticked.push(
          match ?? {
            reason: direction.reason ?? 'Custom direction',
            ticked: true,
            approaches: (direction.approaches ?? []).map(String),
            source_type: 'customize',
            verification: direction.verification ?? '',
          },
        );
      });
      if (ticked.length === 0) throw invalidParameter('directions: tick at least one direction');
      confirmOnce(task.ticked, ticked, 'ai33-5 already submitted different directions for this task', () => {
        task.ticked = ticked;
        task.solutionStage = context.startStage(
          'ai33-5Step4V3',
          body.task_id,
          failsAt(task.triggers, 'ai33-6', FIRST_REF),
        );
      });
      return json({ task_id: body.task_id });
    },

    'ai33-6Step5V3': (body, context) => {
      const task = tasks.get(body.task_id, context.owner);
      requireStarted(task.solutionStage, 'ai33-6', 'ai33-5 (submit the ticked directions)');
      const state = stageState(task.solutionStage, context.now);
      if (state !== 'succeeded') return json({ status: upperStatus(state) });
      return json({ status: 'SUCCEED', solution: solutionOf(task, context) });
    },
  };
}
