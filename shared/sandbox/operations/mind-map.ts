/**
 * Mind maps in the platform's cell format (ai33-6 and ai73-5): nodes carry `data.node_id`, edges
 * are `default-edge` cells with `source.cell` and `target.cell`.
 */
import { priorArtReference } from '../prior-art';
import type { SeededRandom } from '../seeded';

export interface MindMapBranch {
  title: string;
  content: string;
  children: { title: string; content: string }[];
}

export interface MindMapNode {
  nodeId: string;
  title: string;
  content: string;
  depth: number;
}

export function buildMindMap(
  random: SeededRandom,
  title: string,
  branches: readonly MindMapBranch[],
  keywords: readonly string[],
) {
  const cells: Record<string, unknown>[] = [];
  const nodes: MindMapNode[] = [];
  const addNode = (nodeTitle: string, content: string, depth: number, order: string, parent?: string) => {
    const nodeId = random.hex(32);
    nodes.push({ nodeId, title: nodeTitle, content, depth });
    cells.push({
      id: nodeId,
      shape: depth === 0 ? 'idea-node' : depth === 1 ? 'route-node' : 'solution-node',
      view: 'vue-shape-view',
      position: { x: 80 + depth * 360, y: 60 + cells.length * 40 },
      size: { width: 300, height: depth === 0 ? 64 : 120 },
      z_index: 1000,
      data: {
        node_id: nodeId,
        route_id: parent ?? nodeId,
        route_name: parent ? (nodes.find((n) => n.nodeId === parent)?.title ?? title) : title,
        order,
        status: 'success',
        initd: true,
        sys_title: nodeTitle,
        sys_content: content,
        sys_sub_content:
          depth === 2
            ? `Core contradiction: ${keywords[0] ?? 'cost'} versus ${keywords[1] ?? 'performance'}.`
            : '',
        innovation: depth === 2 ? random.int(1, 5) : 0,
        tech_version: 'v3',
        improvements: depth === 2 ? [`Validate ${nodeTitle.toLowerCase()} on a pilot line`] : [],
        reference:
          depth === 2 ? [priorArtReference(random, keywords), priorArtReference(random, keywords)] : [],
      },
    });
    if (parent) {
      cells.push({
        id: random.uuid(),
        shape: 'default-edge',
        source: { cell: parent },
        target: { cell: nodeId },
        z_index: 0,
      });
    }
    return nodeId;
  };
  const root = addNode(title, title, 0, '0');
  branches.forEach((branch, b) => {
    const branchId = addNode(branch.title, branch.content, 1, `${b + 1}`, root);
    branch.children.forEach((child, c) => {
      addNode(child.title, child.content, 2, `${b + 1}.${c + 1}`, branchId);
    });
  });
  return { solution: { title, cells }, nodes };
}
