import { describe, expect, it } from 'vitest';
import { leafNodes, mindMapNodes } from '../../../shared/workflows/common/mind-map';

const node = (id: string, title: string, order: string, route = '') => ({
  id,
  shape: 'solution-node',
  data: {
    node_id: id,
    sys_title: title,
    order,
    route_name: route,
    sys_content: `${title} content`,
    innovation: 3,
  },
});
const edge = (from: string, to: string) => ({
  id: `${from}-${to}`,
  shape: 'default-edge',
  source: { cell: from },
  target: { cell: to },
});

describe('mind maps', () => {
  it('lists nodes in order with depths and parents from the edges', () => {
    const cells = [
      node('root', 'Lighter battery', '0'),
      edge('root', 'r1'),
      node('r1', 'Silicon anodes', '1', 'Lighter battery'),
      edge('r1', 's1'),
      node('s1', 'Porous silicon', '1.1', 'Silicon anodes'),
      node('r2', 'Solid electrolytes', '2', 'Lighter battery'),
      edge('root', 'r2'),
    ];
    const nodes = mindMapNodes(cells);
    expect(nodes.map((n) => [n.nodeId, n.depth, n.parentId])).toEqual([
      ['root', 0, undefined],
      ['r1', 1, 'root'],
      ['s1', 2, 'r1'],
      ['r2', 1, 'root'],
    ]);
    expect(nodes[2]).toMatchObject({
      title: 'Porous silicon',
      route: 'Silicon anodes',
      content: 'Porous silicon content',
      innovation: 3,
    });
    // the solutions are the leaves: a route without solutions counts as one
    expect(leafNodes(nodes).map((n) => n.nodeId)).toEqual(['s1', 'r2']);
  });

  it('works out depths from the order when there are no edges', () => {
    const nodes = mindMapNodes([node('a', 'A', '0'), node('b', 'B', '1'), node('c', 'C', '1.2')]);
    expect(nodes.map((n) => n.depth)).toEqual([0, 1, 2]);
    expect(leafNodes(nodes).map((n) => n.nodeId)).toEqual(['b', 'c']);
  });

  it('survives cells without data and cycles in the edges', () => {
    const nodes = mindMapNodes([{ id: 'x' }, edge('x', 'y'), edge('y', 'x'), { id: 'y', data: null }]);
    expect(nodes.map((n) => n.nodeId)).toEqual(['x', 'y']);
  });
});
