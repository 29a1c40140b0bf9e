// The tools a run can offer its model, and how each call is run. The agent
// loop consults this registry: built-in tools, the tools of the request's MCP
// servers (listed at the run's start), the datastores' tools (bound at the run's
// start) and one transfer tool per handoff agent. Pure data: bundled into the
// workflow sandbox.
import type { DatastoreToolDef, HandoffAgent, McpTool } from './types';

/** What the model is told about a tool (OpenAI function tool). */
export interface ToolSpec {
  name: string;
  description: string;
  /** JSON Schema of the arguments. */
  parameters: Record<string, unknown>;
}

/**
 * How a call runs: `activity` = the runTool activity (its own retries, timeout
 * and heartbeat; visible in the Web UI as one activity per call); `timer` = a
 * durable timer in the workflow itself (waiting costs no worker slot and
 * survives any restart); `mcp` = the callMcpTool activity, summarised in the
 * Web UI as `<server>/<tool>`; `datastore` = the callDatastore activity,
 * summarised `datastore/<name>`; `handoff` = decided by the workflow itself (the
 * conversation goes to that agent).
 */
export type RegisteredTool = ToolSpec &
  (
    | { kind: 'activity' | 'timer' }
    | { kind: 'mcp'; server: string; tool: string }
    | { kind: 'datastore'; def: DatastoreToolDef }
    | { kind: 'handoff'; agent: string }
  );

/** Longest single wait of the `wait` tool; the model calls it again to wait longer. */
export const MAX_WAIT_SECONDS = 3600;

export const BUILTIN_TOOLS: Readonly<Record<string, RegisteredTool & { kind: 'activity' | 'timer' }>> = {
  current_time: {
    name: 'current_time',
    kind: 'activity',
    description: 'The current date and time in UTC (ISO 8601), optionally also in an IANA time zone.',
    parameters: {
      type: 'object',
      properties: { time_zone: { type: 'string', description: 'IANA time zone, e.g. Europe/Paris.' } },
      additionalProperties: false,
    },
  },
  calculate: {
    name: 'calculate',
    kind: 'activity',
    description: 'Evaluates an arithmetic expression: numbers, + - * / % ^, parentheses. Returns the number.',
    parameters: {
      type: 'object',
      properties: { expression: { type: 'string', description: 'e.g. (2 + 3) * 4 ^ 2' } },
      required: ['expression'],
      additionalProperties: false,
    },
  },
  wait: {
    name: 'wait',
    kind: 'timer',
    description: `Waits the given number of seconds (at most ${MAX_WAIT_SECONDS} per call) before the agent goes on; use it to poll something later or to pace work.`,
    parameters: {
      type: 'object',
      properties: { seconds: { type: 'number', minimum: 0, maximum: MAX_WAIT_SECONDS } },
      required: ['seconds'],
      additionalProperties: false,
    },
  },
};

export const BUILTIN_TOOL_NAMES = Object.keys(BUILTIN_TOOLS);

/** The name the request's main agent goes by in handoff events. */
export const MAIN_AGENT = 'main';

/** Tool names as Chat Completions accepts them: letters, digits, _ and -, at most 64. */
const TOOL_NAME_MAX = 64;

export function sanitizeToolName(name: string): string {
  return name.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, TOOL_NAME_MAX) || '_';
}

/** The transfer tool of a handoff agent. */
export function handoffToolName(agent: string): string {
  return sanitizeToolName(`transfer_to_${agent}`);
}

/** The first of `name`, `name_2`, `name_3`... (kept within 64 characters) that is not taken. */
function unique(name: string, taken: Set<string>): string {
  let out = name;
  for (let i = 2; taken.has(out); i++) out = `${name.slice(0, TOOL_NAME_MAX - String(i).length - 1)}_${i}`;
  taken.add(out);
  return out;
}

/** What an MCP server listed: its tools as the server describes them. */
export interface ListedMcpTools {
  server: string;
  tools: { name: string; description?: string; inputSchema?: Record<string, unknown> }[];
}

/**
 * The servers' tools under the names the model sees: `<server>__<tool>`,
 * sanitised and made unique (never clashing with a built-in or a transfer
 * tool), description and input schema as the server gave them.
 */
export function nameMcpTools(listed: readonly ListedMcpTools[], reserved: readonly string[]): McpTool[] {
  const taken = new Set(reserved);
  return listed.flatMap(({ server, tools }) =>
    tools.map((t) => ({
      server,
      tool: t.name,
      name: unique(sanitizeToolName(`${server}__${t.name}`), taken),
      description: t.description ?? '',
      inputSchema: t.inputSchema ?? { type: 'object', properties: {} },
    })),
  );
}

/** The transfer tool of each agent except the one that has the conversation. */
export function handoffTools(agents: readonly HandoffAgent[], active: string | undefined): RegisteredTool[] {
  return agents
    .filter((a) => a.name !== active)
    .map((a) => ({
      kind: 'handoff' as const,
      agent: a.name,
      name: handoffToolName(a.name),
      description: `Hand the conversation to the ${a.name} agent: ${a.description}. Call it when that agent fits the request better; it continues with the whole conversation.`,
      parameters: { type: 'object', properties: {}, additionalProperties: false },
    }));
}

/** What the model is offered: the built-ins named (unknown names skipped), the datastores' tools, the MCP tools, the transfer tools. */
export function offeredTools(
  names: readonly string[],
  mcp: readonly McpTool[] = [],
  agents: readonly HandoffAgent[] = [],
  active?: string,
  datastores: readonly DatastoreToolDef[] = [],
): RegisteredTool[] {
  const builtins = names.flatMap((n) => (BUILTIN_TOOLS[n] ? [BUILTIN_TOOLS[n]] : []));
  const stores = datastores.map((def) => ({
    kind: 'datastore' as const,
    def,
    name: def.name,
    description: def.description,
    parameters: def.parameters,
  }));
  const servers = mcp.map((t) => ({
    kind: 'mcp' as const,
    server: t.server,
    tool: t.tool,
    name: t.name,
    description: t.description,
    parameters: t.inputSchema,
  }));
  return [...builtins, ...stores, ...servers, ...handoffTools(agents, active)];
}

/** What the model is shown of a tool (no kind). */
export function toolSpec(t: RegisteredTool): ToolSpec {
  return { name: t.name, description: t.description, parameters: t.parameters };
}
