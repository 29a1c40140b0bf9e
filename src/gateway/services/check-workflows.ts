// A request's declarative workflows (SPEC 2.3, 2.4) checked at submit, past
// what the zod schema checks field by field: ids unique, dependencies that
// name steps of the same workflow, no cycle (named as a path, a -> b -> a),
// retry intervals in order, output schemas that are JSON Schemas. Every
// problem is an issue with the path of its field, for one 400.
import type { z } from 'zod';
import type { workflowSchema } from '../../common/contracts/run-request';
import { SchemaIssue, schemaIssues } from '../../common/json-schema/schema-check';

type Workflow = z.infer<typeof workflowSchema>;

export function workflowIssues(workflows: Workflow[], path = 'body.workflows'): SchemaIssue[] {
  const issues: SchemaIssue[] = [];
  const seen = new Map<string, number>();
  workflows.forEach((w, i) => {
    const at = `${path}[${i}]`;
    const earlier = seen.get(w.id);
    if (earlier !== undefined)
      issues.push({
        path: `${at}.id`,
        message: `workflow id "${w.id}" is used by workflows[${earlier}] too`,
        code: 'duplicate',
      });
    else seen.set(w.id, i);
    issues.push(...stepIssues(w, at));
  });
  return issues;
}

function stepIssues(w: Workflow, at: string): SchemaIssue[] {
  const issues: SchemaIssue[] = [];
  const index = new Map<string, number>();
  w.steps.forEach((s, i) => {
    const sat = `${at}.steps[${i}]`;
    const earlier = index.get(s.id);
    if (earlier !== undefined)
      issues.push({
        path: `${sat}.id`,
        message: `step id "${s.id}" is used by steps[${earlier}] of this workflow too`,
        code: 'duplicate',
      });
    else index.set(s.id, i);
    const r = s.retry_policy;
    if (r?.initial_interval !== undefined && r.max_interval !== undefined && r.max_interval < r.initial_interval) {
      issues.push({
        path: `${sat}.retry_policy.max_interval`,
        message: `max_interval (${r.max_interval} s) is shorter than initial_interval (${r.initial_interval} s)`,
        code: 'too_small',
      });
    }
    if (s.output_schema !== undefined) issues.push(...schemaIssues(s.output_schema, `${sat}.output_schema`));
  });
  w.steps.forEach((s, i) =>
    s.depends_on.forEach((d, j) => {
      if (!index.has(d))
        issues.push({
          path: `${at}.steps[${i}].depends_on[${j}]`,
          message: `"${d}" is not a step of workflow "${w.id}"`,
          code: 'unknown_step',
        });
    }),
  );
  // The graph of each id's first step (a duplicate is an issue of its own).
  const graph = w.steps
    .filter((s, i) => index.get(s.id) === i)
    .map((s) => ({ id: s.id, deps: s.depends_on.filter((d) => index.has(d)) }));
  const cycle = findCycle(graph);
  if (cycle)
    issues.push({
      path: `${at}.steps`,
      message: `the steps depend on each other in a cycle: ${cycle.join(' -> ')}`,
      code: 'cycle',
    });
  return issues;
}

/** A dependency cycle as the ids along it, first repeated at the end (a -> b -> a); undefined when there is none. */
export function findCycle(steps: { id: string; deps: string[] }[]): string[] | undefined {
  const deps = new Map(steps.map((s) => [s.id, s.deps]));
  const state = new Map<string, 'open' | 'done'>();
  const trail: string[] = [];
  const visit = (id: string): string[] | undefined => {
    if (state.get(id) === 'done') return undefined;
    if (state.get(id) === 'open') return [...trail.slice(trail.indexOf(id)), id];
    state.set(id, 'open');
    trail.push(id);
    for (const d of deps.get(id) ?? []) {
      const found = visit(d);
      if (found) return found;
    }
    trail.pop();
    state.set(id, 'done');
    return undefined;
  };
  for (const s of steps) {
    const found = visit(s.id);
    if (found) return found;
  }
  return undefined;
}
