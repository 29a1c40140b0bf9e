// A run request's MCP servers and handoff agents, checked at submit (a 422
// naming the entry of each problem: the document cannot state these; src/common/tasks/request-tools.ts turns them into
// what the run takes). URLs go through the outbound policy, which the worker
// applies again when it connects (DNS may answer differently by then).
import { MAIN_AGENT, handoffToolName, sanitizeToolName } from '../../../workflows/tool-registry';
import { RequestIssue, UnprocessableRequestError } from '../../common/errors';
import { fieldPath } from '../../common/field-path';
import { OutboundLookupError, OutboundRefusedError, type OutboundPolicy } from '../../common/outbound/policy';
import type { RunRequest } from '../../common/contracts/run-request';

/** Names that must be unique among the request's servers and agents (as the model will see them). */
function nameIssues(
  req: Pick<RunRequest, 'mcp_servers' | 'mcpServers' | 'agents'>,
  field: 'mcp_servers' | 'mcpServers',
): RequestIssue[] {
  const issues: RequestIssue[] = [];
  const servers = new Map<string, number>();
  (req.mcp_servers ?? req.mcpServers ?? []).forEach((s, i) => {
    const key = sanitizeToolName(s.serverName);
    const earlier = servers.get(key);
    if (earlier !== undefined)
      issues.push({
        path: fieldPath('body', field, i, 'serverName'),
        message: `"${s.serverName}" names the same server as ${fieldPath('body', field, earlier)} (names must differ in letters, digits, _ and -)`,
        code: 'duplicate',
      });
    else servers.set(key, i);
  });
  const agents = new Map<string, number>();
  (req.agents ?? []).forEach((a, i) => {
    const key = handoffToolName(a.name);
    const earlier = agents.get(key);
    if (a.name === MAIN_AGENT)
      issues.push({
        path: fieldPath('body', 'agents', i, 'name'),
        message: `"${MAIN_AGENT}" is the request's own agent; give the handoff agent another name`,
        code: 'reserved',
      });
    else if (earlier !== undefined)
      issues.push({
        path: fieldPath('body', 'agents', i, 'name'),
        message: `"${a.name}" has the same transfer tool (${key}) as ${fieldPath('body', 'agents', earlier)}`,
        code: 'duplicate',
      });
    else agents.set(key, i);
  });
  return issues;
}

/**
 * Why the outbound policy refuses `url` at submit, or undefined when it does not. A DNS failure
 * for now is no proof of anything: the worker checks again when it connects.
 */
export async function refusal(policy: OutboundPolicy, url: string): Promise<string | undefined> {
  try {
    await policy.checkUrl(url);
    return undefined;
  } catch (err) {
    if (err instanceof OutboundLookupError) return undefined;
    if (!(err instanceof OutboundRefusedError)) throw err;
    return err.message;
  }
}

/** Throws UnprocessableRequestError naming each entry whose name clashes or whose URL the outbound policy refuses. */
export async function checkToolServers(
  req: Pick<RunRequest, 'mcp_servers' | 'mcpServers' | 'agents'>,
  policy: OutboundPolicy,
): Promise<void> {
  const field = req.mcp_servers ? 'mcp_servers' : 'mcpServers';
  const issues = nameIssues(req, field);
  const servers = req.mcp_servers ?? req.mcpServers ?? [];
  const refusals = await Promise.all(
    servers.map(async (s, i): Promise<RequestIssue | undefined> => {
      const refused = await refusal(policy, s.serverUrl);
      return refused === undefined
        ? undefined
        : {
            path: fieldPath('body', field, i, 'serverUrl'),
            message: `MCP server "${s.serverName}": ${refused}`,
            code: 'outbound_refused',
          };
    }),
  );
  issues.push(...refusals.filter((r): r is RequestIssue => r !== undefined));
  if (issues.length) throw UnprocessableRequestError.of(issues);
}
