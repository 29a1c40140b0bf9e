// The run's tool sources at its start. MCP servers: each lists its tools (all
// pages) in an activity of its own, at once, with a short retry; the names the
// model sees are given here. A server that cannot be reached fails the run with
// `mcp_unavailable` naming it, rather than leaving the model without the tools
// the request promised it. Datastores: one activity binds the request's
// datastores and queries to the account's registrations of this moment.
import { proxyActivities } from '@temporalio/workflow';
import type { ActivityOptions } from '@temporalio/common';
import type { Activities } from '../activities';
import type { DatastoreToolDef, McpTool, TaskInput } from './types';
import { nameMcpTools } from './tool-registry';

export async function listMcpTools(input: TaskInput, reserved: readonly string[]): Promise<McpTool[]> {
  // Retries after 1 s and 2 s: a server restarting gets a moment, a dead one never a hang.
  const options: ActivityOptions = {
    startToCloseTimeout: (input.limits.mcpConnectTimeoutMs ?? 10_000) * 2,
    retry: { initialInterval: '1s', backoffCoefficient: 2, maximumAttempts: 3 },
  };
  const acts = proxyActivities<Activities>(options);
  const listed = await Promise.all(
    (input.request.mcpServers ?? []).map((server) =>
      acts.listMcpTools.executeWithOptions({ ...options, summary: `${server.name}: list tools` }, [
        { account: input.account, server },
      ]),
    ),
  );
  return nameMcpTools(listed, reserved);
}

export async function bindDatastoreTools(input: TaskInput, reserved: readonly string[]): Promise<DatastoreToolDef[]> {
  const options: ActivityOptions = {
    startToCloseTimeout: '30s',
    retry: { initialInterval: '1s', backoffCoefficient: 2, maximumAttempts: 3 },
  };
  const acts = proxyActivities<Activities>(options);
  return acts.bindDatastoreTools.executeWithOptions({ ...options, summary: 'datastores: bind tools' }, [
    {
      account: input.account,
      datastores: input.request.datastores ?? [],
      queries: input.request.queries ?? [],
      reserved: [...reserved],
    },
  ]);
}
