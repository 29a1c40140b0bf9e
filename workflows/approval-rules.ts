// Which tool calls of a run wait for a person's decision before they run (docs/approvals.md):
// the request's require_approval (offered names or glob patterns), the deployment's
// APPROVAL_REQUIRED_TOOLS (the same), and each MCP server's require_approval (OpenAI's
// convention, by the tool's own name on its server). A transfer to a handoff agent is never
// gated: it acts on nothing outside the run. Pure: bundled into the workflow sandbox.
import type { McpApproval, TaskInput } from './types';
import type { RegisteredTool } from './tool-registry';

/** Default wait for a decision when neither the request nor the deployment says (24 h). */
export const DEFAULT_APPROVAL_TIMEOUT_MS = 24 * 3600 * 1000;

/** Whether `name` matches a glob pattern: `*` any run of characters, `?` one; everything else literal. */
export function globMatches(pattern: string, name: string): boolean {
  // Iterative matching with one backtrack point: linear in practice, no regular expression built from input.
  let p = 0;
  let n = 0;
  let star = -1;
  let mark = 0;
  while (n < name.length) {
    if (p < pattern.length && (pattern[p] === '?' || pattern[p] === name[n])) {
      p++;
      n++;
    } else if (p < pattern.length && pattern[p] === '*') {
      star = p++;
      mark = n;
    } else if (star >= 0) {
      p = star + 1;
      n = ++mark;
    } else return false;
  }
  while (p < pattern.length && pattern[p] === '*') p++;
  return p === pattern.length;
}

/** Whether an MCP server's require_approval gates its tool `tool` (its own name): `never` wins over `always`. */
export function mcpGates(rule: McpApproval | undefined, tool: string): boolean {
  if (rule === undefined || rule === 'never') return false;
  if (rule === 'always') return true;
  if (rule.never?.tool_names.includes(tool)) return false;
  return rule.always?.tool_names.includes(tool) ?? false;
}

/** Whether a call of `tool` (as the run offers it) waits for a decision. */
export function needsApproval(input: TaskInput, tool: RegisteredTool | undefined): boolean {
  if (!tool || tool.kind === 'handoff') return false;
  const patterns = [...(input.request.requireApproval?.tools ?? []), ...(input.limits.approvalTools ?? [])];
  if (patterns.some((p) => globMatches(p, tool.name))) return true;
  if (tool.kind !== 'mcp') return false;
  const server = input.request.mcpServers?.find((s) => s.name === tool.server);
  return mcpGates(server?.requireApproval, tool.tool);
}

/** How long a gated call waits, ms, and what happens when no decision came. */
export function approvalTimeout(input: TaskInput): { ms: number; onTimeout: 'deny' | 'fail' } {
  const rule = input.request.requireApproval;
  const ms =
    rule?.timeout !== undefined ? rule.timeout * 1000 : (input.limits.approvalTimeoutMs ?? DEFAULT_APPROVAL_TIMEOUT_MS);
  return { ms, onTimeout: rule?.onTimeout ?? 'deny' };
}

/** The call's arguments as a value: parsed JSON, or the text itself when the model wrote no JSON. */
export function callInput(args: string): unknown {
  try {
    return JSON.parse(args || '{}');
  } catch {
    return args;
  }
}
