/**
 * The registry of opflow's workflows, by name: what the engine, the CLI and the API look names up in.
 * Loading it builds no zod schema: each workflow's input schema, the common-names wrapper and the
 * context keys' schemas are `z.lazy`, built on first use (a cold start builds only the schemas of
 * the workflows its invocations read; test/unit/workflows/lazy-schemas.test.ts).
 */
import type { Workflow, WorkflowRegistry } from '../engine/workflow';
import { call } from './call/workflow';
import { withCommonNames } from './common-names';
import { encyclopediaQa } from './encyclopedia-qa/workflow';
import { findSolution } from './find-solution/workflow';
import { llmChat } from './llm-chat/workflow';
import { materialsFindSolution } from './materials-find-solution/workflow';
import { noveltyCheck } from './novelty-check/workflow';
import { patentCount } from './patent-count/workflow';
import { preResearchReport } from './pre-research-report/workflow';
import { technicalDisclosure } from './technical-disclosure/workflow';

const all = [
  noveltyCheck,
  technicalDisclosure,
  findSolution,
  materialsFindSolution,
  preResearchReport,
  encyclopediaQa,
  llmChat,
  patentCount,
  call,
].map((workflow) => withCommonNames(workflow as Workflow)) as Workflow[];

/** Every workflow by name. */
export const workflows: WorkflowRegistry = new Map(all.map((workflow) => [workflow.name, workflow]));

/** The workflow names, in the order the issue lists them. */
export const workflowNames: readonly string[] = all.map((workflow) => workflow.name);

export {
  call,
  encyclopediaQa,
  findSolution,
  llmChat,
  materialsFindSolution,
  noveltyCheck,
  patentCount,
  preResearchReport,
  technicalDisclosure,
};
