// A task's declarative workflow drawn as a graph: a box per step, coloured by its status (the
// task's view, moved on by the stream's step events), an arrow from each step it depends on.
import { layoutWorkflow, NODE, type WorkflowView } from '../lib/dag-layout';

const RANK: Record<string, number> = { pending: 0, running: 1, completed: 2, skipped: 2, failed: 2, cancelled: 2 };

export function DagGraph({ workflow, live }: { workflow: WorkflowView; live: Map<string, string> }) {
  const layout = layoutWorkflow(workflow);
  // The further along of the two: the view (polled) and the stream's step events (live).
  const statusOf = (stepId: string, viewed: string) => {
    const streamed = live.get(`${workflow.id}/${stepId}`) ?? 'pending';
    return RANK[streamed] > RANK[viewed] ? streamed : viewed;
  };
  return (
    <figure class="dag">
      <figcaption>
        {workflow.name} <code>{workflow.id}</code>
      </figcaption>
      <svg
        role="img"
        aria-label={`Workflow ${workflow.name}: ${layout.steps.map((s) => `${s.name} ${statusOf(s.id, s.status)}`).join(', ')}`}
        width={layout.width}
        height={layout.height}
        viewBox={`0 0 ${layout.width} ${layout.height}`}
      >
        <defs>
          <marker id="arrow" viewBox="0 0 8 8" refX="8" refY="4" markerWidth="8" markerHeight="8" orient="auto">
            <path d="M0,0 L8,4 L0,8 z" class="dag-arrow" />
          </marker>
        </defs>
        {layout.edges.map(({ from, to }) => (
          <line
            key={`${from.id}->${to.id}`}
            class="dag-edge"
            x1={from.x + NODE.width}
            y1={from.y + NODE.height / 2}
            x2={to.x}
            y2={to.y + NODE.height / 2}
            marker-end="url(#arrow)"
          />
        ))}
        {layout.steps.map((s) => {
          const status = statusOf(s.id, s.status);
          return (
            <g key={s.id} class={`dag-node dag-${status}`} data-step={`${workflow.id}/${s.id}`} data-status={status}>
              <title>{`${s.name} (${s.id}): ${status}${s.depends_on.length ? `; waits for ${s.depends_on.join(', ')}` : ''}`}</title>
              <rect x={s.x} y={s.y} width={NODE.width} height={NODE.height} rx="6" />
              <text x={s.x + 10} y={s.y + 18}>
                {s.name.length > 22 ? `${s.name.slice(0, 21)}…` : s.name}
              </text>
              <text x={s.x + 10} y={s.y + 35} class="dag-status">
                {status}
              </text>
            </g>
          );
        })}
      </svg>
    </figure>
  );
}
