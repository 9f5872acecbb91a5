/**
 * The registry of opflow's workflows: one line per workflow, each a folder of its own
 * (`shared/workflows/<name>/`) exporting a `Workflow` with every hook the rest of opflow reads
 * (docs/guides/adding-a-workflow.md). The engine, the CLI, the API, MCP, schedules, webhooks and
 * batches look workflows up here by name; nothing else is keyed by a workflow's name
 * (test/unit/workflows/workflow-names.test.ts).
 *
 * Loading it builds no zod schema: each workflow's input schema, the common-names wrapper and the
 * context keys' schemas are `z.lazy`, built on first use (a cold start builds only the schemas of
 * the workflows its invocations read; test/unit/workflows/lazy-schemas.test.ts).
 */
import type { Workflow, WorkflowRegistry } from '../engine/workflow';
import { call } from './call/workflow';
import { withCommonNames } from './common/common-names';
import { designInfringement1v1 } from './design-infringement-1v1/workflow';
import { designInfringementSearch } from './design-infringement-search/workflow';
import { encyclopediaQa } from './encyclopedia-qa/workflow';
import { feasibilityAnalysis } from './feasibility-analysis/workflow';
import { findSolution } from './find-solution/workflow';
import { fto } from './fto/workflow';
import { llmChat } from './llm-chat/workflow';
import { materialsFindSolution } from './materials-find-solution/workflow';
import { noveltyCheck } from './novelty-check/workflow';
import { patentCount } from './patent-count/workflow';
import { preResearchReport } from './pre-research-report/workflow';
import { specificationDrafting } from './specification-drafting/workflow';
import { technicalDisclosure } from './technical-disclosure/workflow';
import { technicalQa } from './technical-qa/workflow';
import { translation } from './translation/workflow';

/** Every workflow, in the order listings show them. */
const all: Workflow[] = [
  noveltyCheck,
  technicalDisclosure,
  findSolution,
  materialsFindSolution,
  preResearchReport,
  encyclopediaQa,
  llmChat,
  patentCount,
  fto,
  technicalQa,
  specificationDrafting,
  feasibilityAnalysis,
  translation,
  designInfringementSearch,
  designInfringement1v1,
  call,
].map((workflow) => withCommonNames(workflow as Workflow));

/** Every workflow by name. */
export const workflows: WorkflowRegistry = new Map(all.map((workflow) => [workflow.name, workflow]));

/** The workflow names, in the registry's order. */
export const workflowNames: readonly string[] = all.map((workflow) => workflow.name);

/** Workflows by their constant, for tests and benches that drive one directly (without the common names). */
export {
  call,
  designInfringement1v1,
  designInfringementSearch,
  encyclopediaQa,
  feasibilityAnalysis,
  findSolution,
  fto,
  llmChat,
  materialsFindSolution,
  noveltyCheck,
  patentCount,
  preResearchReport,
  specificationDrafting,
  technicalDisclosure,
  translation,
};
