/** The materials find-solution report: the mind map, each detailed node, the problem statement. */
import type { ReportInput } from '../../engine/workflow';
import type { DataOf } from '../../openplatform/schemas/responses';
import {
  blocks,
  bullets,
  heading,
  htmlToText,
  inline,
  paragraphs,
  recordsTable,
  shorten,
  table,
} from '../../reports/markdown';
import { type MindMapNode, mindMapNodes } from '../common/mind-map';
import { chosenRecommendations } from '../common/recommendations';
import { outputOf } from '../common/step-data';
import { type MaterialsFindSolutionInput, maxCitationPages, nodeOutput } from './input';

export function materialsTitle({ input, outputs }: ReportInput<MaterialsFindSolutionInput>): string {
  return (
    input.title ??
    (outputOf(outputs, 'mind-map', 'ai73-5FindSolutionMind')?.solution?.title || shorten(input.problem, 100))
  );
}

type Thinking = DataOf<'ai73-4FindSolutionThinking'>;

function problemStatement(thinking: Thinking | undefined): string | undefined {
  const statement = thinking?.problem_statement;
  if (!statement) return undefined;
  return blocks(
    heading(2, 'Problem statement'),
    statement.problem_title ? `**${inline(statement.problem_title)}**` : undefined,
    statement.domain ? inline(`Domain: ${statement.domain}`) : undefined,
    paragraphs(statement.refined_statement, ''),
    statement.background_context ? paragraphs(statement.background_context, '') : undefined,
    (statement.success_criteria ?? []).length > 0 &&
      `${heading(3, 'Success criteria')}\n\n${table(
        ['Metric', 'Target', 'Priority', 'Validation'],
        (statement.success_criteria ?? []).map((c) => [c.metric, c.target, c.priority, c.validation_method]),
      )}`,
    (statement.technical_constraints ?? []).length > 0 &&
      `${heading(3, 'Technical constraints')}\n\n${table(
        ['Category', 'Constraint', 'Impact'],
        (statement.technical_constraints ?? []).map((c) => [c.category, c.description, c.impact_level]),
      )}`,
    (statement.performance_requirements ?? []).length > 0 &&
      `${heading(3, 'Performance requirements')}\n\n${table(
        ['Parameter', 'Target', 'Unit', 'Tolerance'],
        (statement.performance_requirements ?? []).map((p) => [
          p.parameter,
          p.target_value,
          p.unit,
          p.tolerance,
        ]),
      )}`,
  ).trimEnd();
}

type ReferenceKey =
  | 'technical_principle'
  | 'technical_maturity'
  | 'engineering_reliability'
  | 'expected_challenge'
  | 'industry_application_cases';

const REFERENCE_SECTIONS: [ReferenceKey, string][] = [
  ['technical_principle', 'Technical principle'],
  ['technical_maturity', 'Technical maturity'],
  ['engineering_reliability', 'Engineering reliability'],
  ['expected_challenge', 'Expected challenges'],
  ['industry_application_cases', 'Industry application cases'],
];

function nodeSection(
  r: ReportInput<MaterialsFindSolutionInput>,
  index: number,
  node: MindMapNode | undefined,
  nodeId: string,
) {
  const reference = outputOf(r.outputs, nodeOutput.reference(index), 'ai73-7FindSolutionNodeReference');
  const citations: unknown[] = [];
  let total: number | undefined;
  for (let page = 1; page <= maxCitationPages; page++) {
    const data = outputOf(
      r.outputs,
      nodeOutput.citations(index, page),
      'ai73-6FindSolutionCitationReferenceList',
    );
    if (!data) break;
    citations.push(...(data.records ?? []));
    total = data.total ?? total;
  }
  const implementation = outputOf(
    r.outputs,
    nodeOutput.implementation(index),
    'ai73-9FindSolutionImplementationResponse',
  );
  const referenceParts = REFERENCE_SECTIONS.filter(([key]) => (reference?.[key] ?? []).length > 0).map(
    ([key, name]) => `**${name}**\n\n${bullets((reference?.[key] ?? []).map(htmlToText))}`,
  );
  return blocks(
    heading(3, node ? `${node.order ? `${node.order} ` : ''}${node.title}` : nodeId),
    inline(`Node id: ${nodeId}${node?.route && node.depth > 1 ? ` · route: ${node.route}` : ''}`),
    node?.content ? paragraphs(node.content, '') : undefined,
    heading(4, 'Reference information'),
    referenceParts.length > 0 ? referenceParts.join('\n\n') : '_None was returned._',
    heading(
      4,
      `Citations (${citations.length}${total !== undefined && total !== citations.length ? ` of ${total}` : ''})`,
    ),
    recordsTable(citations, [
      { header: 'Publication', keys: ['pn', 'patent_id', 'doc_id'] },
      { header: 'Title', keys: ['title', 'name'] },
      { header: 'Published', keys: ['pbd', 'post_time', 'publish_date'] },
      { header: 'Type', keys: ['solution_type', 'type'] },
    ]),
    heading(4, 'Implementation plan'),
    paragraphs(implementation?.markdown_message, '_No plan was returned._'),
  ).trimEnd();
}

export function materialsMarkdown(r: ReportInput<MaterialsFindSolutionInput>): string {
  const { outputs, selections, context } = r;
  const solution = outputOf(outputs, 'mind-map', 'ai73-5FindSolutionMind')?.solution;
  const nodes = mindMapNodes(solution?.cells ?? []);
  const thinking = outputOf(outputs, 'thinking', 'ai73-4FindSolutionThinking');
  const recommend = outputOf(outputs, 'recommendations', 'ai73-2FindSolutionRecommend')?.recommend ?? [];
  const nodeIds = Array.isArray(context['nodeIds'])
    ? context['nodeIds'].filter((id): id is string => typeof id === 'string')
    : [];
  const thinkingReferences = thinking?.references?.references ?? [];

  return blocks(
    heading(1, `Materials find solution: ${materialsTitle(r)}`),
    inline(materialsSummary(r)),
    heading(2, `Mind map: ${solution?.title ?? '(none)'}`),
    table(
      ['Node', 'Title', 'Route', 'Node id'],
      nodes.map((node) => [node.order, node.title, node.depth > 1 ? node.route : '', node.nodeId]),
      '_The mind map has no nodes._',
    ),
    heading(2, 'Node details'),
    nodeIds.length > 0
      ? nodeIds
          .map((nodeId, index) =>
            nodeSection(
              r,
              index,
              nodes.find((node) => node.nodeId === nodeId),
              nodeId,
            ),
          )
          .join('\n\n')
      : inline(
          'No node was detailed (the job\'s nodes policy is "none"; name node ids or "all" to detail them).',
        ),
    problemStatement(thinking),
    heading(2, 'Chosen recommendations'),
    bullets(
      chosenRecommendations(recommend, new Set(selections['recommendations'] ?? [])),
      '_None: the platform offered no recommendations._',
    ),
    thinkingReferences.length > 0 && heading(2, 'Literature found while thinking'),
    thinkingReferences.length > 0 &&
      table(
        ['Publication', 'Title', 'Published', 'Type'],
        thinkingReferences.map((reference) => [
          reference.pn,
          reference.title,
          reference.pbd,
          reference.solution_type,
        ]),
      ),
  );
}

/** "Thermally conductive polymers: 11 mind-map nodes, 2 detailed". */
export function materialsSummary(r: ReportInput<MaterialsFindSolutionInput>): string {
  const solution = outputOf(r.outputs, 'mind-map', 'ai73-5FindSolutionMind')?.solution;
  const nodes = mindMapNodes(solution?.cells ?? []);
  const detailed = Array.isArray(r.context['nodeIds']) ? r.context['nodeIds'].length : 0;
  return `${materialsTitle(r)}: ${nodes.length} mind-map ${nodes.length === 1 ? 'node' : 'nodes'}, ${detailed} detailed`;
}
