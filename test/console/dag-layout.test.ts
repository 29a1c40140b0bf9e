// Where the task page draws a workflow's steps (console/src/lib/dag-layout.ts): a column per
// depth, an edge per dependency, a size that holds them all.
import { layoutWorkflow, NODE } from '../../console/src/lib/dag-layout';

const step = (id: string, depends_on: string[] = []) => ({ id, name: id, depends_on, status: 'pending' as const });

test('a diamond: a, then b and c side by side in one column, then d', () => {
  const l = layoutWorkflow({
    id: 'w',
    name: 'w',
    steps: [step('a'), step('b', ['a']), step('c', ['a']), step('d', ['b', 'c'])],
  });
  const at = Object.fromEntries(l.steps.map((s) => [s.id, [s.x, s.y]]));
  const col = NODE.width + NODE.gapX;
  const row = NODE.height + NODE.gapY;
  expect(at).toEqual({
    a: [NODE.pad, NODE.pad],
    b: [NODE.pad + col, NODE.pad],
    c: [NODE.pad + col, NODE.pad + row],
    d: [NODE.pad + 2 * col, NODE.pad],
  });
  expect(l.edges.map((e) => `${e.from.id}->${e.to.id}`)).toEqual(['a->b', 'a->c', 'b->d', 'c->d']);
  for (const s of l.steps) {
    expect(s.x + NODE.width).toBeLessThanOrEqual(l.width);
    expect(s.y + NODE.height).toBeLessThanOrEqual(l.height);
  }
});

test('the depth is the longest chain before a step, not the shortest', () => {
  const l = layoutWorkflow({ id: 'w', name: 'w', steps: [step('a'), step('b', ['a']), step('c', ['a', 'b'])] });
  expect(l.steps.find((s) => s.id === 'c')!.x).toBe(NODE.pad + 2 * (NODE.width + NODE.gapX));
});

test('an unknown dependency and a cycle still lay out (the API refuses both; the page must not hang)', () => {
  const l = layoutWorkflow({ id: 'w', name: 'w', steps: [step('a', ['ghost']), step('b', ['c']), step('c', ['b'])] });
  expect(l.steps).toHaveLength(3);
  expect(l.edges.map((e) => `${e.from.id}->${e.to.id}`)).toEqual(['c->b', 'b->c']);
});
