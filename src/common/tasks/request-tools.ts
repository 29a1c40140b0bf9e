// A run request's MCP servers and handoff agents as the run takes them: both
// `auth` kinds become one bearer token. Used where tasks are built: the gateway
// and a schedule's activity (src/common/tasks/task-input.ts).
import type { HandoffAgent, McpServerConfig } from '../../../workflows/types';
import type { RunRequest } from '../contracts/run-request';

/** The request's MCP servers (either spelling), as the run uses them. */
export function mcpServersOf(req: Pick<RunRequest, 'mcp_servers' | 'mcpServers'>): McpServerConfig[] | undefined {
  const given = req.mcp_servers ?? req.mcpServers;
  if (!given?.length) return undefined;
  return given.map((s) => {
    const token =
      s.auth?.type === 'bearer' ? s.auth.token : s.auth?.type === 'oauth' ? s.auth.oauth.accessToken : undefined;
    const requireApproval = s.require_approval ?? s.requireApproval;
    return {
      name: s.serverName,
      url: s.serverUrl,
      ...(token && { token }),
      // "never" is the default: left out, as servers without it are.
      ...(requireApproval && requireApproval !== 'never' && { requireApproval }),
    };
  });
}

export function agentsOf(req: Pick<RunRequest, 'agents'>): HandoffAgent[] | undefined {
  return req.agents?.length ? req.agents.map((a) => ({ name: a.name, description: a.description })) : undefined;
}
