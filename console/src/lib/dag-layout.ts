// Where each step of a declarative workflow goes in its drawing: a column per depth (the longest
// chain of steps before it), a row per step within its column, and an edge from each step it
// depends on. Pure, so it is tested without a browser.
import type { TaskView } from '../../../client/types';

export type WorkflowView = NonNullable<TaskView['workflows']>[number];
export type StepView = WorkflowView['steps'][number];

export interface PlacedStep extends StepView {
  x: number;
  y: number;
}

export interface DagLayout {
  steps: PlacedStep[];
  edges: { from: PlacedStep; to: PlacedStep }[];
  width: number;
  height: number;
}

export const NODE = { width: 168, height: 44, gapX: 56, gapY: 18, pad: 8 };

/** The depth of every step; a dependency that names no step, or a cycle (the API refuses both), counts as none. */
function depths(steps: StepView[]): Map<string, number> {
  const byId = new Map(steps.map((s) => [s.id, s]));
  const depth = new Map<string, number>();
  const visiting = new Set<string>();
  const of = (id: string): number => {
    const known = depth.get(id);
    if (known !== undefined) return known;
    if (visiting.has(id)) return 0;
    visiting.add(id);
    const deps = (byId.get(id)?.depends_on ?? []).filter((d) => byId.has(d));
    const d = deps.length ? Math.max(...deps.map(of)) + 1 : 0;
    visiting.delete(id);
    depth.set(id, d);
    return d;
  };
  for (const s of steps) of(s.id);
  return depth;
}

export function layoutWorkflow(workflow: WorkflowView): DagLayout {
  const depth = depths(workflow.steps);
  const rows = new Map<number, number>();
  const placed = new Map<string, PlacedStep>();
  for (const s of workflow.steps) {
    const col = depth.get(s.id) ?? 0;
    const row = rows.get(col) ?? 0;
    rows.set(col, row + 1);
    placed.set(s.id, {
      ...s,
      x: NODE.pad + col * (NODE.width + NODE.gapX),
      y: NODE.pad + row * (NODE.height + NODE.gapY),
    });
  }
  const steps = [...placed.values()];
  const edges = steps.flatMap((to) =>
    to.depends_on.flatMap((d) => {
      const from = placed.get(d);
      return from ? [{ from, to }] : [];
    }),
  );
  const cols = Math.max(0, ...[...depth.values()]) + 1;
  const maxRows = Math.max(1, ...rows.values());
  return {
    steps,
    edges,
    width: NODE.pad * 2 + cols * NODE.width + (cols - 1) * NODE.gapX,
    height: NODE.pad * 2 + maxRows * NODE.height + (maxRows - 1) * NODE.gapY,
  };
}
