// The tools a run can offer its model, and how each call is run. The agent
// loop consults this registry; MCP servers, handoff agents, datastores and DAG
// steps add their own kinds of tool to it later. Pure data: bundled into the
// workflow sandbox.

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
 * survives any restart).
 */
export type ToolKind = 'activity' | 'timer';

export interface RegisteredTool extends ToolSpec {
  kind: ToolKind;
}

/** Longest single wait of the `wait` tool; the model calls it again to wait longer. */
export const MAX_WAIT_SECONDS = 3600;

export const BUILTIN_TOOLS: Readonly<Record<string, RegisteredTool>> = {
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

/** The specs the model is offered, in the order given; unknown names are skipped. */
export function offeredTools(names: readonly string[]): RegisteredTool[] {
  return names.flatMap((n) => (BUILTIN_TOOLS[n] ? [BUILTIN_TOOLS[n]] : []));
}

/** What the model is shown of a tool (no kind). */
export function toolSpec(t: RegisteredTool): ToolSpec {
  return { name: t.name, description: t.description, parameters: t.parameters };
}
