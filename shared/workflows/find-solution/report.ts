/**
 * The find-solution report: the final solution first (its nodes in a table, then each node), then the
 * problem as given, the chosen recommendations and directions.
 */
import type { ReportInput } from '../../engine/workflow';
import {
  blocks,
  bullets,
  heading,
  inline,
  paragraphs,
  plainText,
  shorten,
  table,
} from '../../reports/markdown';
import { mindMapNodes } from '../common/mind-map';
import { chosenRecommendations } from '../common/recommendations';
import { outputOf } from '../common/step-data';
import { directionOptionId, type FindSolutionInput } from './input';

export function findSolutionTitle({ input, outputs }: ReportInput<FindSolutionInput>): string {
  return (
    input.title ??
    (outputOf(outputs, 'solution', 'ai33-6Step5V3')?.solution?.title || shorten(input.problem, 100))
  );
}

export function findSolutionMarkdown(r: ReportInput<FindSolutionInput>): string {
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
    heading(2, `Final solution: ${solution?.title ?? '(none)'}`),
    table(
      ['Node', 'Title', 'Route', 'Innovation'],
      nodes
        .filter((node) => node.depth > 0)
        .map((node) => [node.order, node.title, node.depth > 1 ? node.route : '', node.innovation ?? '']),
      '_The solution has no nodes._',
    ),
    ...nodeSections,
    heading(2, 'Problem'),
    paragraphs(input.problem),
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
