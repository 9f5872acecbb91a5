/**
 * Reading the platform's mind maps (ai33-6's final solution, ai73-5's mind map): a flat list of
 * cells, nodes carrying `data.node_id` and edges joining `source.cell` to `target.cell`. The reports
 * want the nodes in order with their depth (0 the problem, 1 a route, 2 a solution).
 */
import type { MindMapCell } from '../../openplatform';
import { plainText } from '../../reports/markdown';

/** A mind-map cell, as the platform's answer schema reads it (one schema for ai33-6 and ai73-5). */
export type { MindMapCell };

export interface MindMapNode {
  /** `data.node_id`, else the cell id: what the node-level operations take. */
  nodeId: string;
  title: string;
  /** 0 for the root (the problem), 1 for a route, 2 for a solution under a route. */
  depth: number;
  order: string;
  /** The parent node's title. */
  route: string;
  /** The parent node's id, when the map's edges say. */
  parentId?: string | undefined;
  content: string;
  subContent: string;
  innovation?: number | undefined;
  improvements: string[];
  references: { pn: string; title: string; pbd: string; type: string }[];
}

const isEdge = (cell: MindMapCell) =>
  Boolean(cell.source?.cell || cell.target?.cell || (cell.shape ?? '').toLowerCase().includes('edge'));

/** The nodes of a mind map in the upstream's order, with depths and parents worked out from the edges. */
export function mindMapNodes(cells: readonly MindMapCell[]): MindMapNode[] {
  const nodeCells = cells.filter((cell) => !isEdge(cell) && (cell.data?.node_id || cell.id));
  const parentOf = new Map<string, string>();
  for (const cell of cells) {
    if (isEdge(cell) && cell.source?.cell && cell.target?.cell)
      parentOf.set(cell.target.cell, cell.source.cell);
  }
  const depthOf = (cellId: string | undefined, order: string): number => {
    if (parentOf.size > 0 && cellId) {
      let depth = 0;
      const seen = new Set<string>();
      for (
        let current = parentOf.get(cellId);
        current && !seen.has(current);
        current = parentOf.get(current)
      ) {
        seen.add(current);
        depth++;
      }
      return depth;
    }
    if (order === '0') return 0;
    return order === '' ? 1 : order.split('.').length;
  };
  const nodeIdOf = new Map(nodeCells.map((cell) => [cell.id ?? '', cell.data?.node_id || cell.id || '']));
  return nodeCells.map((cell) => {
    const data = cell.data ?? {};
    const order = data.order ?? '';
    const parentCell = cell.id ? parentOf.get(cell.id) : undefined;
    return {
      nodeId: data.node_id || cell.id || '',
      parentId: parentCell === undefined ? undefined : (nodeIdOf.get(parentCell) ?? parentCell),
      title: data.sys_title ?? '',
      depth: depthOf(cell.id ?? data.node_id ?? undefined, order),
      order,
      route: data.route_name ?? '',
      content: data.sys_content ?? '',
      subContent: data.sys_sub_content ?? '',
      innovation: data.innovation ?? undefined,
      improvements: (data.improvements ?? []).map(plainText).filter((text) => text !== ''),
      references: (data.reference ?? []).map((reference) => ({
        pn: reference.pn ?? '',
        title: reference.title ?? '',
        pbd: reference.pbd ?? '',
        type: reference.solution_type ?? '',
      })),
    };
  });
}

/** The solution nodes: those below the root that no other node hangs from (all below the root without edges). */
export function leafNodes(nodes: readonly MindMapNode[]): MindMapNode[] {
  const below = nodes.filter((node) => node.depth > 0);
  if (!nodes.some((node) => node.parentId !== undefined)) return below;
  const parents = new Set(nodes.map((node) => node.parentId).filter((id) => id !== undefined));
  return below.filter((node) => !parents.has(node.nodeId));
}
