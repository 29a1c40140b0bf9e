// The tools a run can offer its model, and how each call is run. The agent
// loop consults this registry: built-in tools, the tools of the request's MCP
// servers (listed at the run's start), the datastores' tools (bound at the run's
// start) and one transfer tool per handoff agent. Pure data: bundled into the
// workflow sandbox.
import type { DatastoreToolDef, HandoffAgent, McpTool } from './types';
import { WEB_TOOL_SPECS } from './web-tools';
import { BROWSER_TOOLS as BROWSER_TOOL_SPECS } from './browser-tools';

export { WEB_FETCH_DEFAULT_CHARS, WEB_SEARCH_MAX_RESULTS } from './web-tools';

/** What the model is told about a tool (OpenAI function tool). */
export interface ToolSpec {
  name: string;
  description: string;
  /** JSON Schema of the arguments. */
  parameters: Record<string, unknown>;
}

/**
 * How a call runs: `computer` = the runComputerTool activity in the session's workspace (summarised
 * in the Web UI by the tool's name: `bash`, `str_replace_editor`, ...); `activity` = the runTool activity (its own retries, timeout
 * and heartbeat; visible in the Web UI as one activity per call); `timer` = a
 * durable timer in the workflow itself (waiting costs no worker slot and
 * survives any restart); `mcp` = the callMcpTool activity, summarised in the
 * Web UI as `<server>/<tool>`; `datastore` = the callDatastore activity,
 * summarised `datastore/<name>`; `web` = the runWebTool activity (web_fetch, web_search: through
 * the outbound policy, retried for network errors only), summarised by the tool's name; `browser` =
 * the runBrowserTool activity in the session's browser context (docs/web.md), summarised by the
 * tool's name; `handoff` = decided by the workflow itself (the
 * conversation goes to that agent).
 */
export type RegisteredTool = ToolSpec &
  (
    | { kind: 'activity' | 'timer' | 'computer' | 'web' | 'browser' }
    | { kind: 'mcp'; server: string; tool: string }
    | { kind: 'datastore'; def: DatastoreToolDef }
    | { kind: 'handoff'; agent: string }
  );

/** Longest single wait of the `wait` tool; the model calls it again to wait longer. */
export const MAX_WAIT_SECONDS = 3600;

/** Where the session's workspace is inside the sandbox (bash starts there; editor paths may be relative to it). */
export const WORKSPACE_MOUNT = '/workspace';

const pathParam = (what: string) => ({
  type: 'string',
  description: `${what}: relative to ${WORKSPACE_MOUNT} (the workspace), or absolute under it.`,
});

/** The session's computer: a shell, an editor and search over its workspace (docs/computer.md). */
export const COMPUTER_TOOLS: Readonly<Record<string, RegisteredTool & { kind: 'computer' }>> = {
  bash: {
    name: 'bash',
    kind: 'computer',
    description: `Runs a bash command in the session's sandboxed Linux workspace (${WORKSPACE_MOUNT}, also HOME), with python3, node and the usual shell tools; no network. The working directory and exported variables carry over to the next call, and files stay for the session's later runs. Returns the exit code, stdout and stderr (long output is cut; the whole of it is kept in a file of the workspace, named in the result).`,
    parameters: {
      type: 'object',
      properties: {
        command: { type: 'string', description: 'The bash command (a script of several lines is fine).' },
        timeout: { type: 'number', minimum: 1, description: 'Seconds before the command is killed (default 120).' },
      },
      required: ['command'],
      additionalProperties: false,
    },
  },
  str_replace_editor: {
    name: 'str_replace_editor',
    kind: 'computer',
    description:
      'Views and edits files of the workspace. view: a file with line numbers (view_range [first, last], last -1 = to the end) or a directory two levels deep; create: writes file_text to a new file (parents created; refused if the path exists); str_replace: replaces old_str, which must occur exactly once, by new_str; insert: puts new_str after line insert_line (0 = at the top); undo_edit: reverts the last edit of the file (again to go further back, up to 10 edits). Text files up to 10 MiB.',
    parameters: {
      type: 'object',
      properties: {
        command: { type: 'string', enum: ['view', 'create', 'str_replace', 'insert', 'undo_edit'] },
        path: pathParam('The file or directory'),
        file_text: { type: 'string', description: 'create: the content of the file.' },
        old_str: { type: 'string', description: 'str_replace: the exact text to replace (unique in the file).' },
        new_str: { type: 'string', description: 'str_replace: the replacement; insert: the text to insert.' },
        insert_line: { type: 'integer', minimum: 0, description: 'insert: the line after which new_str goes.' },
        view_range: {
          type: 'array',
          items: { type: 'integer' },
          minItems: 2,
          maxItems: 2,
          description: 'view: [first, last] line, 1-based; last -1 = to the end.',
        },
      },
      required: ['command', 'path'],
      additionalProperties: false,
    },
  },
  glob: {
    name: 'glob',
    kind: 'computer',
    description:
      'Lists the workspace files whose path matches a glob pattern, sorted; hidden and ignored files included, links not followed. A pattern without / matches file names at any depth (*.py); one with / is matched from path (src/**/*.ts).',
    parameters: {
      type: 'object',
      properties: { pattern: { type: 'string' }, path: pathParam('The folder to search in (default: the workspace)') },
      required: ['pattern'],
      additionalProperties: false,
    },
  },
  grep: {
    name: 'grep',
    kind: 'computer',
    description:
      'Searches the contents of workspace files for a regular expression (ripgrep syntax); returns path:line:text matches, sorted. Hidden and ignored files are searched; binary files are skipped, links not followed.',
    parameters: {
      type: 'object',
      properties: {
        pattern: { type: 'string', description: 'A regular expression.' },
        path: pathParam('The file or folder to search (default: the workspace)'),
        glob: { type: 'string', description: 'Only files whose path matches this glob, e.g. *.ts.' },
        ignore_case: { type: 'boolean' },
      },
      required: ['pattern'],
      additionalProperties: false,
    },
  },
};

/** The web: reading pages and searching (docs/web.md). */
export const WEB_TOOLS: Readonly<Record<string, RegisteredTool & { kind: 'web' }>> = {
  web_fetch: { ...WEB_TOOL_SPECS.web_fetch, kind: 'web' },
  web_search: { ...WEB_TOOL_SPECS.web_search, kind: 'web' },
};

/** A real headless browser, tools named as the Playwright MCP server names them (docs/web.md). */
export const BROWSER_TOOLS: Readonly<Record<string, RegisteredTool & { kind: 'browser' }>> = Object.fromEntries(
  Object.entries(BROWSER_TOOL_SPECS).map(([name, spec]) => [name, { ...spec, kind: 'browser' as const }]),
);

/** Names that stand for several built-in tools, in configuration and in a request's `tools`. */
export const TOOL_GROUPS: Readonly<Record<string, readonly string[]>> = {
  computer: Object.keys(COMPUTER_TOOLS),
  web: Object.keys(WEB_TOOLS),
  browser: Object.keys(BROWSER_TOOLS),
};

type BuiltinKind = 'activity' | 'timer' | 'computer' | 'web' | 'browser';

export const BUILTIN_TOOLS: Readonly<Record<string, RegisteredTool & { kind: BuiltinKind }>> = {
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
  ...COMPUTER_TOOLS,
  ...WEB_TOOLS,
  ...BROWSER_TOOLS,
};

export const BUILTIN_TOOL_NAMES = Object.keys(BUILTIN_TOOLS);

/** What configuration and a request's `tools` may name: each built-in, and each group. */
export const BUILTIN_TOOL_CHOICES = [...BUILTIN_TOOL_NAMES, ...Object.keys(TOOL_GROUPS)] as [string, ...string[]];

/** The built-ins named, groups expanded, each once, in the order named. */
export function expandToolGroups(names: readonly string[]): string[] {
  return [...new Set(names.flatMap((n) => TOOL_GROUPS[n] ?? [n]))];
}

/** Whether a run offers any browser tool. */
export function usesBrowser(names: readonly string[]): boolean {
  return names.some((n) => BUILTIN_TOOLS[n]?.kind === 'browser');
}

/** Whether a run offers any tool of the session's computer (its workspace is then in use). */
export function usesComputer(names: readonly string[]): boolean {
  return names.some((n) => BUILTIN_TOOLS[n]?.kind === 'computer');
}

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
